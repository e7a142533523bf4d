"""Nothing on the wire is dropped silently.

Every item, block, part and stream event type that the official SDKs name
(openai-python's output-item, tool-call and stream-event unions,
anthropic-sdk-python's beta content-block and delta unions, google-genai's
``Part`` fields) is listed here with the place it lands in:

- ``text``: text or reasoning events;
- ``call``: a client tool call, ready to run;
- ``server``: a provider-executed call (``ServerToolCallReady``);
- ``state:<type>``: provider state on the assistant message, sent back in
  place on the next request;
- ``unknown``: an ``UnknownItem`` event holding the payload as sent;
- ``progress``: a stream event reporting progress on an item that its
  ``.done`` event carries whole (Responses only).

A stream holding each type is decoded and the landing place is checked. A
type that a future SDK adds is missing from these tables, and fails
``test_every_sdk_type_is_listed`` until someone decides where it lands.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Iterable
from typing import Any

import pytest
from anthropic.types import beta as anthropic_beta
from google.genai import types as genai_types
from openai.types.chat import ChatCompletionMessage, ChatCompletionMessageToolCallUnion
from openai.types.chat.chat_completion_chunk import ChoiceDelta
from openai.types.responses import ResponseOutputItem, ResponseStreamEvent

from toolwire import StreamDecoder, StreamResult
from toolwire.events import (
    Event,
    ReasoningDelta,
    ServerToolCallReady,
    TextDelta,
    ToolCallReady,
    UnknownItem,
)
from toolwire.stream._parts import UnknownPart
from toolwire.stream.codecs.openai_chat import OpenAIChatCodec
from toolwire.stream.codecs.openai_responses import PROGRESS_EVENTS


def union_types(union: Any) -> list[str]:
    """The ``type`` literals of an SDK's (possibly Annotated) union of models."""
    args = typing.get_args(union)
    if typing.get_origin(union) is typing.Annotated:
        args = typing.get_args(args[0])
    out: list[str] = []
    for member in args:
        out.extend(typing.get_args(member.model_fields["type"].annotation))
    return out


# -- the tables ----------------------------------------------------------------------

RESPONSES_ITEMS: dict[str, str] = {
    "message": "text",
    "function_call": "call",
    "reasoning": "state:reasoning",
    "file_search_call": "server",
    "web_search_call": "server",
    "code_interpreter_call": "server",
    "image_generation_call": "server",
    "mcp_call": "server",
    "mcp_list_tools": "state:mcp_list_tools",
    "tool_search_call": "state:tool_search_call",
    "tool_search_output": "state:tool_search_output",
    "additional_tools": "state:additional_tools",
    "compaction": "state:compaction",
    "program": "state:program",
    "program_output": "state:program_output",
    "function_call_output": "state:function_call_output",
    "custom_tool_call_output": "state:custom_tool_call_output",
    "computer_call_output": "state:computer_call_output",
    "local_shell_call_output": "state:local_shell_call_output",
    "shell_call_output": "state:shell_call_output",
    "apply_patch_call_output": "state:apply_patch_call_output",
    "mcp_approval_response": "state:mcp_approval_response",
    "custom_tool_call": "call",
    "computer_call": "call",
    "local_shell_call": "call",
    "shell_call": "call",
    "apply_patch_call": "call",
    "mcp_approval_request": "call",
}

# Events the codec reads (items, text, arguments, the response's life).
_RESPONSES_READ = {
    "response.created",
    "response.in_progress",
    "response.completed",
    "response.incomplete",
    "response.failed",
    "error",
    "response.output_item.added",
    "response.output_item.done",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_text.delta",
    "response.output_text.done",
    "response.refusal.delta",
    "response.refusal.done",
    "response.reasoning_text.delta",
    "response.reasoning_text.done",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.custom_tool_call_input.delta",
    "response.custom_tool_call_input.done",
}
RESPONSES_EVENTS: dict[str, str] = {
    **dict.fromkeys(_RESPONSES_READ, "read"),
    **dict.fromkeys(PROGRESS_EVENTS, "progress"),
    "response.output_text.annotation.added": "unknown",
    "response.audio.delta": "unknown",
    "response.audio.done": "unknown",
    "response.audio.transcript.delta": "unknown",
    "response.audio.transcript.done": "unknown",
}

CHAT_MESSAGE_FIELDS: dict[str, str] = {
    "role": "read",
    "content": "text",
    "refusal": "text",
    "tool_calls": "call",
    "function_call": "call",
    "annotations": "unknown",
    "audio": "unknown",
}

CHAT_TOOL_CALLS: dict[str, str] = {
    "function": "call",
    "custom": "call",
}

ANTHROPIC_BLOCKS: dict[str, str] = {
    "text": "text",
    "thinking": "state:thinking",
    "redacted_thinking": "state:redacted_thinking",
    "tool_use": "call",
    "server_tool_use": "server",
    "mcp_tool_use": "server",
    "web_search_tool_result": "state:web_search_tool_result",
    "web_fetch_tool_result": "state:web_fetch_tool_result",
    "advisor_tool_result": "state:advisor_tool_result",
    "code_execution_tool_result": "state:code_execution_tool_result",
    "bash_code_execution_tool_result": "state:bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result": "state:text_editor_code_execution_tool_result",
    "tool_search_tool_result": "state:tool_search_tool_result",
    "mcp_tool_result": "state:mcp_tool_result",
    "mcp_tool_listing": "state:mcp_tool_listing",
    "container_upload": "state:container_upload",
    "compaction": "state:compaction",
    "fallback": "state:fallback",
}

ANTHROPIC_DELTAS: dict[str, str] = {
    "text_delta": "text",
    "input_json_delta": "call",
    "thinking_delta": "text",
    "signature_delta": "state:thinking",
    "citations_delta": "state:text_citations",
    "compaction_delta": "state:compaction",
}

GEMINI_PARTS: dict[str, str] = {
    "text": "text",
    "thought": "text",
    "thought_signature": "state:thought_signature",
    "function_call": "call",
    "function_response": "state:part",
    "inline_data": "state:part",
    "file_data": "state:part",
    "executable_code": "state:part",
    "code_execution_result": "state:part",
    "video_metadata": "unknown",
    "media_resolution": "unknown",
    "tool_call": "state:part",
    "tool_response": "state:part",
    "part_metadata": "unknown",
    "audio_transcription": "unknown",
    "media_processing": "unknown",
    "speech_metadata": "unknown",
    "document_metadata": "unknown",
    "spreadsheet_metadata": "unknown",
    "audio_metadata": "unknown",
}


def sdk_types() -> dict[str, tuple[list[str], dict[str, str]]]:
    return {
        "responses items": (union_types(ResponseOutputItem), RESPONSES_ITEMS),
        "responses events": (union_types(ResponseStreamEvent), RESPONSES_EVENTS),
        "chat tool calls": (union_types(ChatCompletionMessageToolCallUnion), CHAT_TOOL_CALLS),
        "chat message fields": (list(ChatCompletionMessage.model_fields), CHAT_MESSAGE_FIELDS),
        "chat delta fields": (list(ChoiceDelta.model_fields), CHAT_MESSAGE_FIELDS),
        "anthropic blocks": (union_types(anthropic_beta.BetaContentBlock), ANTHROPIC_BLOCKS),
        "anthropic deltas": (
            union_types(anthropic_beta.BetaRawContentBlockDelta),
            ANTHROPIC_DELTAS,
        ),
        "gemini parts": (list(genai_types.Part.model_fields), GEMINI_PARTS),
    }


@pytest.mark.parametrize("union", list(sdk_types()))
def test_every_sdk_type_is_listed(union: str) -> None:
    names, table = sdk_types()[union]
    assert names, f"no types read from the SDK's {union}"
    missing = sorted(set(names) - set(table))
    assert not missing, f"{union}: the SDK names types with no landing place here: {missing}"


# -- landing ----------------------------------------------------------------------------


def landed(events: Iterable[Event], result: StreamResult, kind: str, place: str) -> bool:
    """Whether ``kind`` landed in ``place`` (see the module's docstring)."""
    events = list(events)
    if place == "text":
        return any(isinstance(e, TextDelta | ReasoningDelta) for e in events)
    if place == "call":
        return any(isinstance(e, ToolCallReady) and e.name for e in events)
    if place == "server":
        return any(isinstance(e, ServerToolCallReady) for e in events)
    if place.startswith("state:"):
        state_type = place.removeprefix("state:")
        return any(item.get("type") == state_type for item in result.choices[0].provider_state)
    if place == "unknown":
        return any(isinstance(e, UnknownItem) and e.type == kind and e.payload for e in events)
    raise AssertionError(f"no such place {place!r}")


def decode(
    dialect: str, frames: list[tuple[str | None, dict[str, Any]]]
) -> tuple[list[Event], StreamResult]:
    decoder = StreamDecoder(dialect)
    events: list[Event] = []
    for event, payload in frames:
        head = f"event: {event}\n" if event else ""
        events += decoder.feed(f"{head}data: {json.dumps(payload)}\n\n".encode())
    events += decoder.close()
    result = decoder.result()
    assert result.error is None, result.error
    return events, result


# -- OpenAI Responses ----------------------------------------------------------------------


def responses_item(kind: str) -> dict[str, Any]:
    item: dict[str, Any] = {"type": kind, "id": f"{kind}_1", "status": "completed"}
    if kind == "function_call":
        item.update(call_id="call_1", name="lookup", arguments='{"q": 1}')
    elif kind == "mcp_approval_request":
        item.update(name="create_issue", arguments="{}", server_label="tracker")
    elif kind == "custom_tool_call":
        item.update(call_id="call_1", name="apply", input="*** Begin Patch")
    elif kind == "message":
        item.update(role="assistant", content=[{"type": "output_text", "text": "hi"}])
    elif kind == "reasoning":
        item.update(summary=[], encrypted_content="opaque")
    elif kind.endswith("_output"):
        item.update(call_id="call_0", output="done")
    return item


def responses_stream(*middle: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    frames = [{"type": "response.created", "response": {"id": "resp_1", "model": "m"}}]
    frames += middle
    frames.append(
        {"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}}
    )
    return [(f["type"], f) for f in frames]


@pytest.mark.parametrize("kind", sorted(RESPONSES_ITEMS))
def test_responses_output_items_land(kind: str) -> None:
    item = responses_item(kind)
    text = []
    if kind == "message":
        text = [
            {
                "type": "response.output_text.delta",
                "item_id": item["id"],
                "output_index": 0,
                "content_index": 0,
                "delta": "hi",
            }
        ]
    events, result = decode(
        "openai-responses",
        responses_stream(
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "status": "in_progress"},
            },
            *text,
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
    )
    assert landed(events, result, kind, RESPONSES_ITEMS[kind]), events


@pytest.mark.parametrize("kind", sorted(RESPONSES_ITEMS))
def test_responses_output_items_land_in_a_whole_response(kind: str) -> None:
    from toolwire.stream.decoder import decode_response

    body = {"id": "resp_1", "model": "m", "status": "completed", "output": [responses_item(kind)]}
    result = decode_response("openai-responses", body)
    assert result.error is None
    place = RESPONSES_ITEMS[kind]
    choice = result.choices[0]
    if place == "text":
        assert choice.text == "hi"
    elif place == "call":
        assert choice.tool_calls
    elif place == "server":
        assert choice.server_tool_calls
    elif place.startswith("state:"):
        assert [i["type"] for i in choice.provider_state] == [place.removeprefix("state:")]


@pytest.mark.parametrize(
    "kind", sorted(k for k, v in RESPONSES_EVENTS.items() if v in ("progress", "unknown"))
)
def test_responses_stream_events_land(kind: str) -> None:
    event = {"type": kind, "item_id": "x_1", "output_index": 0, "sequence_number": 2}
    events, _ = decode("openai-responses", responses_stream(event))
    unknown = [e for e in events if isinstance(e, UnknownItem)]
    if RESPONSES_EVENTS[kind] == "progress":
        assert not unknown
    else:
        assert [(e.type, e.payload) for e in unknown] == [(kind, event)]


# -- OpenAI Chat Completions ------------------------------------------------------------------


def chat_call(kind: str) -> dict[str, Any]:
    if kind == "custom":
        return {"id": "call_1", "type": "custom", "custom": {"name": "patch", "input": "*** x"}}
    return {"id": "call_1", "type": kind, kind: {"name": "lookup", "arguments": "{}"}}


@pytest.mark.parametrize("kind", sorted(CHAT_TOOL_CALLS))
def test_chat_tool_calls_land(kind: str) -> None:
    call = {"index": 0, **chat_call(kind)}
    chunks = [
        {"id": "c", "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
        {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    events, result = decode("openai-chat", [(None, c) for c in chunks])
    assert landed(events, result, kind, CHAT_TOOL_CALLS[kind]), events


_FIELD_VALUES: dict[str, Any] = {
    "content": "hi",
    "refusal": "no",
    "tool_calls": [chat_call("function")],
    "function_call": {"name": "lookup", "arguments": "{}"},
    "annotations": [{"type": "url_citation", "url_citation": {"url": "https://example.com"}}],
    "audio": {"id": "audio_1", "data": "UklGRg==", "transcript": "hi"},
}


@pytest.mark.parametrize("field", sorted(set(CHAT_MESSAGE_FIELDS) - {"role"}))
@pytest.mark.parametrize("streamed", [True, False], ids=["delta", "message"])
def test_chat_message_fields_land(field: str, streamed: bool) -> None:
    from toolwire.stream.decoder import decode_response

    value = _FIELD_VALUES[field]
    if streamed:
        if field == "tool_calls":
            value = [{"index": 0, **value[0]}]
        delta = {"role": "assistant", field: value}
        chunks = [
            {"id": "c", "choices": [{"index": 0, "delta": delta}]},
            {"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        events, result = decode("openai-chat", [(None, c) for c in chunks])
        assert landed(events, result, field, CHAT_MESSAGE_FIELDS[field]), events
        return
    message = {"role": "assistant", field: value}
    body = {"id": "c", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    result = decode_response("openai-chat", body)
    place = CHAT_MESSAGE_FIELDS[field]
    if place == "text":
        assert result.choices[0].text == value
    elif place == "call":
        assert result.tool_calls
    else:  # a whole response's unknown fields are parts that become UnknownItem events
        parts = OpenAIChatCodec().decode_response(body)
        assert [p.type for p in parts if isinstance(p, UnknownPart)] == [field]


# -- Anthropic Messages ---------------------------------------------------------------------


def anthropic_stream(
    block: dict[str, Any], *deltas: dict[str, Any]
) -> list[tuple[str | None, dict[str, Any]]]:
    frames: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "m", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        *({"type": "content_block_delta", "index": 0, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    ]
    return [(f["type"], f) for f in frames]


def anthropic_block(kind: str) -> dict[str, Any]:
    block: dict[str, Any] = {"type": kind}
    if kind == "text":
        block["text"] = "hi"
    elif kind == "thinking":
        block.update(thinking="hm", signature="c2ln")
    elif kind == "redacted_thinking":
        block["data"] = "opaque"
    elif kind.endswith("tool_use"):
        block.update(id="toolu_1", name="lookup", input={})
    else:
        block.update(tool_use_id="srvtoolu_1", content={"type": f"{kind}_content"})
    return block


@pytest.mark.parametrize("kind", sorted(ANTHROPIC_BLOCKS))
def test_anthropic_blocks_land(kind: str) -> None:
    events, result = decode("anthropic-messages", anthropic_stream(anthropic_block(kind)))
    assert landed(events, result, kind, ANTHROPIC_BLOCKS[kind]), events


_DELTA_BLOCKS = {
    "text_delta": ({"type": "text", "text": ""}, {"text": "hi"}),
    "input_json_delta": (
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
        {"partial_json": '{"a": 1}'},
    ),
    "thinking_delta": ({"type": "thinking", "thinking": "", "signature": ""}, {"thinking": "hm"}),
    "signature_delta": ({"type": "thinking", "thinking": "", "signature": ""}, {"signature": "s"}),
    "citations_delta": (
        {"type": "text", "text": ""},
        {"citation": {"type": "char_location", "cited_text": "x"}},
    ),
    "compaction_delta": ({"type": "compaction", "content": ""}, {"content": "summary"}),
}


@pytest.mark.parametrize("kind", sorted(ANTHROPIC_DELTAS))
def test_anthropic_deltas_land(kind: str) -> None:
    block, fields = _DELTA_BLOCKS[kind]
    events, result = decode("anthropic-messages", anthropic_stream(block, {"type": kind, **fields}))
    assert landed(events, result, kind, ANTHROPIC_DELTAS[kind]), events


# -- Gemini ---------------------------------------------------------------------------------


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.title() for word in rest)


def gemini_part(field: str) -> dict[str, Any]:
    if field == "text":
        return {"text": "hi"}
    if field == "thought":
        return {"text": "hm", "thought": True}
    if field == "thought_signature":
        return {"thoughtSignature": "c2ln"}
    if field == "function_call":
        return {"functionCall": {"name": "lookup", "args": {}}}
    return {camel(field): {"value": 1}}


@pytest.mark.parametrize("field", sorted(GEMINI_PARTS))
def test_gemini_parts_land(field: str) -> None:
    chunk = {
        "candidates": [
            {
                "index": 0,
                "content": {"role": "model", "parts": [gemini_part(field)]},
                "finishReason": "STOP",
            }
        ]
    }
    events, result = decode("gemini", [(None, chunk)])
    kind = camel(field) if GEMINI_PARTS[field] == "unknown" else field
    assert landed(events, result, kind, GEMINI_PARTS[field]), events


def test_inspect_shows_unknown_items(tmp_path: Any) -> None:
    from click.testing import CliRunner

    from toolwire.cli import main

    frames = responses_stream(
        {"type": "response.audio.delta", "delta": "UklGRg==", "sequence_number": 2}
    )
    path = tmp_path / "audio.sse"
    path.write_text("".join(f"event: {e}\ndata: {json.dumps(p)}\n\n" for e, p in frames))
    out = CliRunner().invoke(main, ["inspect", "--dialect", "openai-responses", str(path)])
    assert out.exit_code == 0, out.output
    assert "unknown item response.audio.delta" in out.output
