"""The Bedrock dialects: Converse and InvokeModel streams, whole responses,
request bodies, and what a damaged or failing stream gives."""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import TRACES, Trace
from toolwire import StreamDecoder
from toolwire.errors import RemoteProtocolError, StreamErrorEvent, UsageError
from toolwire.events import StreamFailed, ToolCallReady
from toolwire.messages import AssistantMessage, SystemMessage, ToolResultMessage, UserMessage
from toolwire.stream.codecs import bedrock, bedrock_invoke
from toolwire.stream.decoder import decode_response
from toolwire.stream.framing.eventstream import event_message, exception_message
from toolwire.types import ToolCall

BEDROCK = [t for t in TRACES if t.dialect.startswith("bedrock-")]


def converse(*events: tuple[str, dict[str, Any]]) -> bytes:
    return b"".join(event_message(name, json.dumps(payload).encode()) for name, payload in events)


def start(index: int, call_id: str, name: str) -> tuple[str, dict[str, Any]]:
    tool = {"toolUseId": call_id, "name": name}
    return "contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": tool}}


def delta(index: int, **value: Any) -> tuple[str, dict[str, Any]]:
    return "contentBlockDelta", {"contentBlockIndex": index, "delta": value}


def args(index: int, fragment: str) -> tuple[str, dict[str, Any]]:
    return delta(index, toolUse={"input": fragment})


def stop(index: int) -> tuple[str, dict[str, Any]]:
    return "contentBlockStop", {"contentBlockIndex": index}


def decode(dialect: str, body: bytes) -> tuple[list[Any], Any]:
    decoder = StreamDecoder(dialect)
    events = decoder.feed(body) + decoder.close()
    return events, decoder.result()


def test_the_corpus_holds_the_twelve_recordings() -> None:
    kinds = sorted(t.dialect for t in BEDROCK)
    assert kinds == ["bedrock-converse"] * 10 + ["bedrock-invoke"] * 2


def _message_offsets(body: bytes) -> list[tuple[int, int]]:
    out, pos = [], 0
    while pos < len(body):
        (total,) = struct.unpack_from(">I", body, pos)
        out.append((pos, total))
        pos += total
    return out


@pytest.mark.parametrize("trace", BEDROCK, ids=lambda t: t.name)
def test_a_flipped_crc_bit_is_a_typed_error_never_a_wrong_call(trace: Trace) -> None:
    want = [(c["name"], c["arguments"]) for c in trace.expected["tool_calls"]]
    for start, total in _message_offsets(trace.body):
        for at in (start + 8, start + total - 1):  # the prelude CRC, the message CRC
            body = bytearray(trace.body)
            body[at] ^= 0x10
            events, result = decode(trace.dialect, bytes(body))
            assert isinstance(result.error, RemoteProtocolError)
            assert "CRC32" in result.error.message
            ready = [
                (e.call.name, e.call.arguments) for e in events if isinstance(e, ToolCallReady)
            ]
            assert ready == want[: len(ready)], "only the calls before the damage, intact"


def test_converse_text_without_a_start_then_a_call_then_usage_after_stop() -> None:
    body = converse(
        ("messageStart", {"role": "assistant", "p": "abc"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"}, "p": "ab"}),
        stop(0),
        start(1, "t1", "f"),
        args(1, '{"a":'),
        args(1, "1}"),
        stop(1),
        start(2, "t2", "g"),
        stop(2),
        ("messageStop", {"stopReason": "tool_use"}),
        (
            "metadata",
            {
                "usage": {
                    "inputTokens": 10,
                    "outputTokens": 5,
                    "totalTokens": 15,
                    "cacheReadInputTokens": 100,
                },
                "metrics": {"latencyMs": 1},
            },
        ),
    )
    _, result = decode("bedrock-converse", body)
    assert result.error is None and result.complete
    assert result.text == "Hi"
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("t1", "f", {"a": 1}),
        ("t2", "g", {}),  # no arguments streamed: {}
    ]
    choice = result.choices[0]
    assert (choice.finish_reason, choice.raw_finish_reason) == ("tool_calls", "tool_use")
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.cached_tokens) == (110, 100)
    assert result.usage.total_tokens == 15


def test_converse_stream_cut_after_message_stop_is_still_complete() -> None:
    body = converse(
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "ok"}}),
        ("messageStop", {"stopReason": "end_turn"}),
    )
    _, result = decode("bedrock-converse", body)
    assert result.error is None and result.text == "ok"


def test_converse_stream_cut_inside_a_call_is_truncated() -> None:
    body = converse(
        start(0, "t", "f"),
        args(0, '{"a":'),
    )
    _, result = decode("bedrock-converse", body)
    assert result.error is not None and result.error.type_name == "stream_truncated"
    assert result.tool_calls == ()


def test_an_exception_message_is_a_typed_stream_error() -> None:
    body = converse(
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "x"}}),
    ) + exception_message("modelStreamErrorException", b'{"message":"model failed"}')
    events, result = decode("bedrock-converse", body)
    assert isinstance(result.error, StreamErrorEvent)
    assert result.error.code == "modelStreamErrorException"
    assert "model failed" in result.error.message
    assert isinstance(events[-1], StreamFailed)


def test_a_tool_delta_for_a_block_never_started_is_refused() -> None:
    body = converse(args(3, "{}"))
    _, result = decode("bedrock-converse", body)
    assert isinstance(result.error, RemoteProtocolError)
    assert "never started" in result.error.message


def test_reasoning_is_read_and_kept_to_be_sent_back() -> None:
    body = converse(
        delta(0, reasoningContent={"text": "think"}),
        delta(0, reasoningContent={"signature": "sig"}),
        stop(0),
        start(1, "t", "f"),
        args(1, "{}"),
        stop(1),
        ("messageStop", {"stopReason": "tool_use"}),
        ("metadata", {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}}),
    )
    _, result = decode("bedrock-converse", body)
    choice = result.choices[0]
    assert choice.reasoning == "think"
    text = {"reasoningText": {"text": "think", "signature": "sig"}}
    item = {"type": "reasoningContent", "reasoningContent": text}
    assert list(choice.provider_state) == [{**item, "from_dialect": "bedrock-converse"}]
    message = AssistantMessage(
        text="", tool_calls=(result.tool_calls[0],), provider_state=choice.provider_state
    )
    _, wire = bedrock.encode_messages([UserMessage("q"), message])
    assert wire[1]["content"] == [
        {"reasoningContent": item["reasoningContent"]},
        {"toolUse": {"toolUseId": "t", "name": "f", "input": {}}},
    ]


def test_a_whole_converse_response_reads_like_its_stream() -> None:
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"text": "Let me look."},
                    {"toolUse": {"toolUseId": "t1", "name": "f", "input": {"a": 1}}},
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
    }
    result = decode_response("bedrock-converse", body)
    assert result.error is None
    assert result.text == "Let me look."
    assert [(c.id, c.arguments) for c in result.tool_calls] == [("t1", {"a": 1})]
    assert result.choices[0].finish_reason == "tool_calls"
    bad = decode_response("bedrock-converse", {"output": []})
    assert isinstance(bad.error, RemoteProtocolError)


def test_converse_request_body() -> None:
    call = ToolCall(id="t1", name="f", arguments={"a": 1}, raw_arguments='{"a":1}')
    messages = [
        SystemMessage("be brief"),
        UserMessage("hi"),
        AssistantMessage(text="", tool_calls=(call,)),
        ToolResultMessage(call_id="t1", name="f", content="42"),
        ToolResultMessage(call_id="t2", name="f", content="boom", is_error=True),
    ]
    tools = [bedrock.tool_schema("f", "does f", {"type": "object", "properties": {}})]
    body = bedrock.encode_request(
        messages=messages, tools=tools, tool_choice="required", max_tokens=99, temperature=0.5
    )
    assert body == {
        "messages": [
            {"role": "user", "content": [{"text": "hi"}]},
            {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "t1", "name": "f", "input": {"a": 1}}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": "t1",
                            "content": [{"text": "42"}],
                            "status": "success",
                        }
                    },
                    {
                        "toolResult": {
                            "toolUseId": "t2",
                            "content": [{"text": "boom"}],
                            "status": "error",
                        }
                    },
                ],
            },
        ],
        "system": [{"text": "be brief"}],
        "inferenceConfig": {"maxTokens": 99, "temperature": 0.5},
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": "f",
                        "description": "does f",
                        "inputSchema": {"json": {"type": "object", "properties": {}}},
                    }
                }
            ],
            "toolChoice": {"any": {}},
        },
    }
    forced = bedrock.encode_request(messages=messages, tools=tools, tool_choice={"name": "f"})
    assert forced["toolConfig"]["toolChoice"] == {"tool": {"name": "f"}}
    with pytest.raises(UsageError, match="no tool_choice 'none'"):
        bedrock.encode_request(messages=messages, tools=tools, tool_choice="none")
    with pytest.raises(UsageError, match="not among the tools"):
        bedrock.encode_request(messages=messages, tools=tools, tool_choice={"name": "g"})


def _chunk(event: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    return "chunk", {"bytes": base64.b64encode(json.dumps(event).encode()).decode(), "p": "ab"}


def test_invoke_unwraps_anthropic_events() -> None:
    body = converse(
        _chunk(
            {
                "type": "message_start",
                "message": {
                    "id": "m",
                    "model": "claude",
                    "content": [],
                    "usage": {"input_tokens": 5},
                },
            }
        ),
        _chunk(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
            }
        ),
        _chunk(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"x": 2}'},
            }
        ),
        _chunk({"type": "content_block_stop", "index": 0}),
        _chunk(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 3},
            }
        ),
        _chunk(
            {"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 5}}
        ),
    )
    _, result = decode("bedrock-invoke", body)
    assert result.error is None and result.complete
    assert [(c.id, c.arguments) for c in result.tool_calls] == [("toolu_1", {"x": 2})]
    assert result.model == "claude"


def test_invoke_chunk_that_is_not_base64_is_refused() -> None:
    body = converse(("chunk", {"bytes": "%%%"}))
    _, result = decode("bedrock-invoke", body)
    assert isinstance(result.error, RemoteProtocolError)
    assert "base64" in result.error.message


def test_invoke_request_body_is_anthropic_with_bedrock_version() -> None:
    body = bedrock_invoke.encode_request(messages=[UserMessage("hi")], max_tokens=10)
    assert body == {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 10,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    }


# -- argument deltas read by their text give what the general path gives -----------

_DELTA_VARIANTS = [
    '{"contentBlockIndex":1,"delta":{"toolUse":{"input":%s}},"p":"abc"}',
    '{"contentBlockIndex":1,"delta":{"toolUse":{"input":%s}}}',
    '{"contentBlockIndex": 1,"delta":{"toolUse":{"input":%s}},"p":"abc"}',
    '{"delta":{"toolUse":{"input":%s}},"contentBlockIndex":1}',
    '{"contentBlockIndex":0,"delta":{"toolUse":{"input":%s}},"p":"abc"}',
    '{"contentBlockIndex":1,"delta":{"toolUse":{"input":%s,"x":1}},"p":"abc"}',
    '{"contentBlockIndex":1,"delta":{"toolUse":{"input":%s}},"p":"a-b"}',
]


def _event_frames(decoder: StreamDecoder, body: bytes, cuts: list[int]) -> list[Any]:
    events: list[Any] = []
    start = 0
    for cut in [*sorted(cuts), len(body)]:
        events += decoder.feed(body[start:cut])
        start = cut
    return events + decoder.close()


@settings(max_examples=60, deadline=None)
@given(
    fragments=st.lists(
        st.tuples(
            st.sampled_from(range(len(_DELTA_VARIANTS))),
            st.sampled_from(['"ab"', '"a\\"b"', '"\\u00e9"', '"\\q"', '""', '"{\\"k\\": 1"', "5"]),
        ),
        max_size=8,
    ),
    cuts=st.lists(st.integers(0, 2000), max_size=6),
)
def test_matched_deltas_read_as_the_general_path_reads_them(
    fragments: list[tuple[int, str]], cuts: list[int]
) -> None:
    head = converse(("messageStart", {"role": "assistant"}), start(1, "t1", "f"))
    body = head + b"".join(
        event_message("contentBlockDelta", (_DELTA_VARIANTS[v] % text).encode())
        for v, text in fragments
    )
    body += converse(stop(1), ("messageStop", {"stopReason": "tool_use"}), ("metadata", {}))
    cuts = [c for c in cuts if c <= len(body)]
    fast = StreamDecoder("bedrock-converse")
    fast_events = _event_frames(fast, body, cuts)
    general = StreamDecoder("bedrock-converse")
    general_events = [e for f in general.feed_frames(body) for e in f.events]
    general_events += [e for f in general.close_frames() for e in f.events]
    assert repr(fast_events) == repr(general_events)
    assert repr(fast.result()) == repr(general.result())


def test_plain_deltas_are_taken_as_matches() -> None:
    decoder = StreamDecoder("bedrock-converse")
    fast = decoder._payloads.fast
    assert fast is not None and decoder._sse is not None
    payload = '{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\\"a\\""}},"p":"xyz"}'
    found = fast.args_event(payload, 0)
    assert found is not None and found.groups() == ("0", '{\\"a\\"')


# -- argument payloads matched in their bytes, in place ----------------------------

_RAW_INPUTS = [
    b'"{\\"path\\": \\"a.py\\", "',
    '"caf\u00e9 \u2714 \u3053\u3093 \U0001f600"'.encode(),  # raw UTF-8, 2 to 4 bytes
    b'"tab\\t\\u00e9 \\\\ end"',
    b'"\x7f"',
    b'"\xff"',  # not UTF-8
    b'"\xc3"',  # a cut sequence
    b'"\xed\xa0\x80"',  # an encoded surrogate
    b'"\xe0\x80\x80"',  # an overlong form
    b'"\x01"',  # a raw control character
    b'"\\q"',  # a bad escape
    b'"\\\xc3\xa9"',  # a backslash before a non-ASCII character
]


def _args_body(inputs: list[bytes]) -> bytes:
    head = converse(("messageStart", {"role": "assistant"}), start(1, "t1", "f"))
    deltas = b"".join(
        event_message(
            "contentBlockDelta",
            b'{"contentBlockIndex":1,"delta":{"toolUse":{"input":' + raw + b'}},"p":"abc"}',
        )
        for raw in inputs
    )
    return head + deltas + converse(stop(1), ("messageStop", {"stopReason": "tool_use"}))


@settings(max_examples=80, deadline=None)
@given(
    picks=st.lists(st.sampled_from(range(len(_RAW_INPUTS))), max_size=8),
    cuts=st.lists(st.integers(0, 3000), max_size=6),
)
def test_deltas_matched_in_their_bytes_read_as_the_general_path_reads_them(
    picks: list[int], cuts: list[int]
) -> None:
    body = _args_body([_RAW_INPUTS[i] for i in picks])
    cuts = [c for c in cuts if c <= len(body)]
    fast = StreamDecoder("bedrock-converse")
    fast_events = _event_frames(fast, body, cuts)
    slow = StreamDecoder("bedrock-converse", short_path=False)
    slow_events = _event_frames(slow, body, cuts)
    assert repr(fast_events) == repr(slow_events)
    assert repr(fast.result()) == repr(slow.result())
    assert slow.short_path_deltas == 0


def test_plain_and_non_ascii_deltas_take_the_short_path_in_any_pieces() -> None:
    inputs = [_RAW_INPUTS[0], _RAW_INPUTS[1], _RAW_INPUTS[2], _RAW_INPUTS[3]] * 5
    body = _args_body(inputs)
    for size in (1, 7, 100, len(body)):
        decoder = StreamDecoder("bedrock-converse")
        for i in range(0, len(body), size):
            decoder.feed(body[i : i + size])
        decoder.close()
        assert decoder.short_path_deltas == len(inputs), size


def test_the_reader_matches_argument_payloads_in_place() -> None:
    from toolwire.stream.framing.eventstream import EventStreamDecoder

    codec = bedrock.BedrockConverseCodec()
    reader = EventStreamDecoder()
    reader.match_event = codec.args_event_type
    reader.match_bytes = codec.args_event_bytes
    assert codec.args_event is not None
    body = _args_body([_RAW_INPUTS[0], _RAW_INPUTS[1], _RAW_INPUTS[4]])
    items = reader.feed_matched(body, codec.args_event)
    kinds = [type(item) is tuple or type(item.string).__name__ for item in items]
    # messageStart, contentBlockStart; two deltas matched in their bytes (the
    # first one of the body too); one that is not UTF-8 is not matched: its
    # text is refused.
    assert kinds == [True, True, "bytes", "bytes"]
    with pytest.raises(RemoteProtocolError, match="not valid UTF-8"):
        reader.feed_matched(b"", codec.args_event)
