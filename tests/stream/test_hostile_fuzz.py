"""Hypothesis over hostile shapes: deep nesting, huge JSONPath indexes, huge
numbers, bytes that are not UTF-8, many calls — in every dialect, at random
splits. Nothing but toolwire's typed errors escapes, and every call handed on
as ready is one a tool could safely receive.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from toolwire import StreamDecoder, ToolwireError
from toolwire.stream.jsonio import value_depth
from toolwire.stream.limits import MAX_JSON_DEPTH


def _text_arguments(draw: st.DrawFn) -> bytes:
    """Argument text (JSON-ish, bytes) of one hostile shape."""
    shape = draw(st.sampled_from(["deep", "number", "utf8", "plain"]))
    if shape == "deep":
        depth = draw(st.integers(MAX_JSON_DEPTH - 3, 3 * MAX_JSON_DEPTH))
        opener = draw(st.sampled_from(["[", '{"a":']))
        closer = "]" if opener == "[" else "}"
        inner = opener * depth + "1" + closer * draw(st.integers(0, depth))
        return ('{"x":' + inner + "}").encode()
    if shape == "number":
        return ('{"n": ' + "7" * draw(st.integers(4000, 12000)) + "}").encode()
    if shape == "utf8":
        bad = draw(st.sampled_from([b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\x80"]))
        return b'{"s": "a' + bad + b'b"}'
    return json.dumps({"city": draw(st.text(max_size=20))}).encode()


def _escape(raw: bytes) -> bytes:
    """``raw`` as the body of a JSON string, leaving bytes that are not UTF-8 as they are."""
    return raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"')


def _body(dialect: str, args: list[bytes]) -> bytes:
    """One response of ``api`` whose calls carry ``args``, as bytes."""
    if dialect == "openai-chat":
        chunks = [
            b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":%d,"id":"c%d",'
            b'"function":{"name":"f","arguments":"%s"}}]}}]}\n\n' % (k, k, _escape(a))
            for k, a in enumerate(args)
        ]
        end = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
        return b"".join(chunks) + end + b"data: [DONE]\n\n"
    if dialect == "anthropic-messages":
        out = [b'event: message_start\ndata: {"type":"message_start","message":{"content":[]}}\n\n']
        for k, a in enumerate(args):
            start = {"type": "tool_use", "id": f"t{k}", "name": "f", "input": {}}
            out.append(
                b"event: content_block_start\ndata: "
                + json.dumps(
                    {"type": "content_block_start", "index": k, "content_block": start}
                ).encode()
                + b"\n\n"
            )
            out.append(
                b'event: content_block_delta\ndata: {"type":"content_block_delta","index":%d,'
                b'"delta":{"type":"input_json_delta","partial_json":"%s"}}\n\n' % (k, _escape(a))
            )
            out.append(
                b'event: content_block_stop\ndata: {"type":"content_block_stop","index":%d}\n\n' % k
            )
        out.append(b'event: message_stop\ndata: {"type":"message_stop"}\n\n')
        return b"".join(out)
    if dialect == "gemini":
        parts = b",".join(b'{"functionCall":{"name":"f","args":%s}}' % a for a in args)
        return (
            b'data: {"candidates":[{"content":{"parts":[%s]},"finishReason":"STOP"}]}\n\n' % parts
        )
    calls = b",".join(b'{"function":{"name":"f","arguments":%s}}' % a for a in args)
    return b'{"message":{"role":"assistant","tool_calls":[%s]},"done":true}\n' % calls


def _vertex_body(index: int, depth: int) -> bytes:
    path = "$" + ".a" * depth + f"[{index}]"
    chunks: list[dict[str, Any]] = [
        {
            "candidates": [
                {"content": {"parts": [{"functionCall": {"name": "f", "willContinue": True}}]}}
            ]
        },
        {
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {
                                "functionCall": {
                                    "partialArgs": [{"jsonPath": path, "numberValue": 1}]
                                }
                            }
                        ]
                    },
                    "finishReason": "STOP",
                }
            ]
        },
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)


@st.composite
def hostile_streams(draw: st.DrawFn) -> tuple[str, bytes]:
    dialect = draw(
        st.sampled_from(["openai-chat", "anthropic-messages", "gemini", "ollama-ndjson"])
    )
    if dialect == "gemini" and draw(st.booleans()):
        index = draw(st.one_of(st.integers(0, 3), st.integers(10**6, 10**40)))
        return dialect, _vertex_body(index, draw(st.integers(0, 2 * MAX_JSON_DEPTH)))
    many = draw(st.integers(1, 3)) if draw(st.integers(0, 9)) else draw(st.integers(200, 2000))
    args = [_text_arguments(draw) for _ in range(many)]
    return dialect, _body(dialect, args)


def _safe(value: Any) -> bool:
    """A value a tool can be given: shallow enough, and text that encodes."""
    if value_depth(value) > MAX_JSON_DEPTH:
        return False
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=hostile_streams(), data=st.data())
def test_hostile_shapes_end_in_typed_errors_or_safe_calls(
    stream: tuple[str, bytes], data: st.DataObject
) -> None:
    dialect, body = stream
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=12), label="cuts"))
    decoder = StreamDecoder(dialect)
    start = 0
    for cut in [*cuts, len(body)]:
        decoder.feed(body[start:cut])
        start = cut
    decoder.close()
    result = decoder.result()
    assert result.error is None or isinstance(result.error, ToolwireError)
    for choice in result.choices:
        for call in choice.tool_calls:
            assert isinstance(call.arguments, dict) and _safe(call.arguments)
        for invalid in choice.invalid_tool_calls:
            assert invalid.error
