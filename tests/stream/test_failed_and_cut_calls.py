"""In-band error chunks and calls the provider says were cut.

An OpenRouter chunk with a top-level ``error`` beside its ``choices`` (HTTP
200) fails the stream; a Responses ``function_call`` item closed with
``status: "incomplete"`` is an incomplete call, not an invalid one.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire import StreamDecoder, StreamErrorEvent
from toolwire.events import StreamFailed, ToolCallReady


def _feed(*payloads: dict[str, Any]) -> tuple[StreamDecoder, list[Any]]:
    decoder = StreamDecoder("openai-chat")
    out: list[Any] = []
    for payload in payloads:
        out += decoder.feed(f"data: {json.dumps(payload)}\n\n".encode())
    out += decoder.feed(b"data: [DONE]\n\n")
    out += decoder.close()
    return decoder, out


def _call(index: int, id: str | None, name: str | None, args: str) -> dict[str, Any]:
    fn: dict[str, Any] = {"arguments": args}
    if name is not None:
        fn["name"] = name
    return {"index": index, "id": id, "type": "function", "function": fn}


def _chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "gen-1", **top, "choices": [choice]}


ERROR = {"code": 502, "message": "Upstream provider failed"}


def test_an_in_band_error_fails_the_stream_with_a_typed_error() -> None:
    decoder, events = _feed(
        _chunk({"content": "Let me look."}),
        _chunk({"tool_calls": [_call(0, "call_1", "lookup", '{"q": 1}')]}),
        _chunk({"content": ""}, "error", error=ERROR),
    )
    result = decoder.result()
    assert isinstance(result.error, StreamErrorEvent)
    assert result.error.status_code == 502
    assert result.error.message == "Upstream provider failed"
    assert not result.complete
    assert result.text == "Let me look."
    assert isinstance(events[-1], StreamFailed)


def test_the_error_chunk_makes_no_call_ready() -> None:
    """The call's arguments end in the error chunk itself, with a finish
    reason: the error comes first, so the call is never ready."""
    decoder, events = _feed(
        _chunk({"tool_calls": [_call(0, "call_1", "lookup", '{"q": ')]}),
        _chunk({"tool_calls": [_call(0, None, None, "1}")]}, "error", error=ERROR),
    )
    assert not [e for e in events if isinstance(e, ToolCallReady)]
    result = decoder.result()
    assert result.tool_calls == ()
    assert [c.name for c in result.choices[0].incomplete_tool_calls] == ["lookup"]


def test_usage_of_the_error_chunk_is_kept() -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    decoder, _ = _feed(_chunk({"content": ""}, error=ERROR, usage=usage))
    result = decoder.result()
    assert result.usage is not None and result.usage.total_tokens == 5
    assert isinstance(result.error, StreamErrorEvent)


def _responses(*events: dict[str, Any]) -> StreamDecoder:
    decoder = StreamDecoder("openai-responses")
    for event in events:
        decoder.feed(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
    decoder.close()
    return decoder


def _item(status: str, arguments: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "answer",
        "arguments": arguments,
        "status": status,
    }


def _cut_stream(status: str, arguments: str, end: str) -> StreamDecoder:
    response = {"id": "resp_1", "status": "incomplete" if end == "incomplete" else "completed"}
    if end == "incomplete":
        response["incomplete_details"] = {"reason": "max_output_tokens"}
    at = {"output_index": 0}
    return _responses(
        {"type": "response.created", "response": {"id": "resp_1"}},
        {"type": "response.output_item.added", "output_index": 0, "item": _item("in_progress", "")},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "delta": arguments},
        {"type": "response.function_call_arguments.done", **at, "arguments": arguments},
        {"type": "response.output_item.done", "output_index": 0, "item": _item(status, arguments)},
        {"type": f"response.{end}", "response": response},
    )


def test_a_call_cut_by_max_output_tokens_is_incomplete_not_invalid() -> None:
    result = _cut_stream("incomplete", '{"text": "how it works and', "incomplete").result()
    choice = result.choices[0]
    assert choice.tool_calls == ()
    assert choice.invalid_tool_calls == ()
    assert [c.id for c in choice.incomplete_tool_calls] == ["call_1"]
    assert choice.incomplete_tool_calls[0].raw_arguments == '{"text": "how it works and'
    assert choice.finish_reason == "length"
    assert result.error is None


def test_a_completed_item_with_broken_text_is_still_invalid() -> None:
    result = _cut_stream("completed", '{"text": "oops', "completed").result()
    assert [c.name for c in result.choices[0].invalid_tool_calls] == ["answer"]
    assert result.choices[0].incomplete_tool_calls == ()
