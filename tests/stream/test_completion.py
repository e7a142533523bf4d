"""When a call is complete: its own end marker, the choice's finish or the
clean end of the stream — never merely because another call started.

The property test sends the fragments of several parallel calls in every
interleaving Hypothesis can find and checks that each gives the same calls
as the same fragments sent one call after another.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from tests._json_strategies import json_text
from tests.stream._chunks import DONE, calls, chunk, decode, tc
from toolwire import StreamDecoder, StreamTruncated, ToolCallReady

_ARGS = st.dictionaries(
    json_text,
    st.one_of(st.integers(-(10**6), 10**6), json_text, st.booleans(), st.none()),
    max_size=4,
)


def _fragments(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True) if a < b]


@st.composite
def parallel_calls(draw: st.DrawFn) -> list[tuple[str, str, list[str], dict[str, Any]]]:
    """(id, name, argument fragments, arguments) of 1-6 calls."""
    out = []
    for k in range(draw(st.integers(1, 6))):
        args = draw(_ARGS)
        text = json.dumps(args, ensure_ascii=draw(st.booleans()))
        cuts = draw(st.lists(st.integers(0, 10**6), max_size=8))
        out.append((f"call_{k}", f"tool_{k}", _fragments(text, cuts), args))
    return out


def _chat_pieces(order: list[int], spec: list[tuple[str, str, list[str], Any]]) -> list[bytes]:
    """OpenAI chat chunks: each call's opener carries its id and name, then
    its fragments follow in ``order`` (a sequence of call numbers)."""
    sent = [0] * len(spec)
    pieces = []
    for k in order:
        call_id, name, fragments, _ = spec[k]
        if sent[k] == 0:
            pieces.append(chunk(tc(k, call_id, name, "")))
        else:
            pieces.append(chunk(tc(k, args=fragments[sent[k] - 1])))
        sent[k] += 1
    return [*pieces, chunk(finish="tool_calls"), DONE]


def _responses_pieces(order: list[int], spec: list[tuple[str, str, list[str], Any]]) -> list[bytes]:
    sent = [0] * len(spec)
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": "r"}}]
    for k in order:
        call_id, name, fragments, _ = spec[k]
        if sent[k] == 0:
            item = {"type": "function_call", "call_id": call_id, "name": name, "arguments": ""}
            events.append({"type": "response.output_item.added", "output_index": k, "item": item})
        else:
            delta = fragments[sent[k] - 1]
            events.append(
                {
                    "type": "response.function_call_arguments.delta",
                    "output_index": k,
                    "delta": delta,
                }
            )
        sent[k] += 1
    events.append({"type": "response.completed", "response": {"status": "completed"}})
    return [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events]


_BUILDERS = {"openai-chat": _chat_pieces, "openai-responses": _responses_pieces}


def _decode(dialect: str, pieces: list[bytes]) -> list[tuple[str, str, dict[str, Any]]]:
    decoder = StreamDecoder(dialect)
    for piece in pieces:
        decoder.feed(piece)
    decoder.close()
    result = decoder.result()
    assert result.error is None
    assert result.choices[0].invalid_tool_calls == ()
    assert result.choices[0].incomplete_tool_calls == ()
    return sorted(calls(result))


@pytest.mark.parametrize("dialect", sorted(_BUILDERS))
@settings(max_examples=examples(120), deadline=None)
@given(spec=parallel_calls(), data=st.data())
def test_any_interleaving_gives_the_same_calls_as_the_sequential_order(
    dialect: str, spec: list[tuple[str, str, list[str], dict[str, Any]]], data: st.DataObject
) -> None:
    sequential = [
        k for k, (_, _, fragments, _) in enumerate(spec) for _ in range(1 + len(fragments))
    ]
    remaining = {k: 1 + len(fragments) for k, (_, _, fragments, _) in enumerate(spec)}
    interleaved = []
    while remaining:
        k = data.draw(st.sampled_from(sorted(remaining)), label="next call")
        interleaved.append(k)
        remaining[k] -= 1
        if not remaining[k]:
            del remaining[k]
    build = _BUILDERS[dialect]
    expected = sorted((call_id, name, args) for call_id, name, _, args in spec)
    assert _decode(dialect, build(sequential, spec)) == expected
    assert _decode(dialect, build(interleaved, spec)) == expected


def test_a_call_with_no_text_yet_is_not_closed_by_the_next_call() -> None:
    _, result = decode(
        chunk(tc(0, "call_a", "f")),
        chunk(tc(1, "call_b", "g", '{"b": 2}')),
        chunk(tc(0, args='{"a": 1}')),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "f", {"a": 1}), ("call_b", "g", {"b": 2})]


def test_a_call_without_arguments_is_ready_at_the_finish() -> None:
    events, result = decode(
        chunk(tc(0, "call_a", "now", "")),
        chunk(tc(1, "call_b", "g", '{"b": 2}')),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "now", {}), ("call_b", "g", {"b": 2})]
    ready = [e.id for e in events if isinstance(e, ToolCallReady)]
    assert ready == ["call_b", "call_a"], "call_b is complete at its own '}'"


def test_sequential_calls_are_ready_as_their_json_closes_for_eager_execution() -> None:
    events, _ = decode(
        chunk(tc(0, "call_a", "f", '{"a": ')),
        chunk(tc(0, args="1}")),
        chunk(tc(1, "call_b", "g", '{"b": ')),
        chunk(tc(1, args="2}")),
        chunk(finish="tool_calls"),
        DONE,
    )
    kinds = [(type(e).__name__, getattr(e, "id", None)) for e in events]
    first_ready = kinds.index(("ToolCallReady", "call_a"))
    assert first_ready < kinds.index(("ToolCallStarted", "call_b"))


# -- [DONE] and legacy fields -------------------------------------------------------


def _sse(*events: dict[str, Any], named: bool = True) -> bytes:
    return b"".join(
        (f"event: {e['type']}\n" if named else "").encode() + f"data: {json.dumps(e)}\n\n".encode()
        for e in events
    )


_ANTHROPIC_CALL = [
    {"type": "message_start", "message": {"id": "m", "model": "c", "content": []}},
    {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
    },
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": '{"a": '},
    },
]
_ANTHROPIC_END = [
    {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "input_json_delta", "partial_json": "1}"},
    },
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
    {"type": "message_stop"},
]
_COHERE_CALL = [
    {"type": "message-start", "id": "m"},
    {
        "type": "tool-call-start",
        "index": 0,
        "delta": {
            "message": {
                "tool_calls": {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "f", "arguments": ""},
                }
            }
        },
    },
    {
        "type": "tool-call-delta",
        "index": 0,
        "delta": {"message": {"tool_calls": {"function": {"arguments": '{"a": '}}}},
    },
]
_COHERE_END = [
    {
        "type": "tool-call-delta",
        "index": 0,
        "delta": {"message": {"tool_calls": {"function": {"arguments": "1}"}}}},
    },
    {"type": "tool-call-end", "index": 0},
    {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL"}},
]
_GEMINI_CALL = [
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
                                "partialArgs": [{"jsonPath": "$.a", "numberValue": 1}],
                                "willContinue": True,
                            }
                        }
                    ]
                }
            }
        ]
    },
]
_GEMINI_END = [
    {"candidates": [{"content": {"parts": [{"functionCall": {}}]}, "finishReason": "STOP"}]}
]

_DIALECTS = {
    "anthropic-messages": (_ANTHROPIC_CALL, _ANTHROPIC_END, True),
    "cohere-v2": (_COHERE_CALL, _COHERE_END, True),
    "gemini": (_GEMINI_CALL, _GEMINI_END, False),
}


@pytest.mark.parametrize("dialect", sorted(_DIALECTS))
def test_done_after_the_dialects_own_end_is_a_clean_end(dialect: str) -> None:
    start, end, named = _DIALECTS[dialect]
    _, result = decode(_sse(*start, *end, named=named), DONE, dialect=dialect)
    assert result.error is None and result.complete
    assert calls(result)[0][1:] == ("f", {"a": 1})


@pytest.mark.parametrize("dialect", sorted(_DIALECTS))
def test_done_before_the_dialects_own_end_is_a_cut_stream(dialect: str) -> None:
    start, _, named = _DIALECTS[dialect]
    _, result = decode(_sse(*start, named=named), DONE, dialect=dialect)
    assert isinstance(result.error, StreamTruncated)
    assert "[DONE]" in result.error.message
    assert result.tool_calls == ()
    (cut,) = result.choices[0].incomplete_tool_calls
    assert cut.name == "f"
    assert [c.name for c in result.error.incomplete_tool_calls] == ["f"]


def test_done_before_responses_completed_is_a_cut_stream() -> None:
    spec = [("call_0", "f", ['{"a": ', "1"], {"a": 1})]
    pieces = _responses_pieces([0, 0, 0], spec)[:-1]
    _, result = decode(*pieces, DONE, dialect="openai-responses")
    assert isinstance(result.error, StreamTruncated)
    assert [c.name for c in result.choices[0].incomplete_tool_calls] == ["f"]


def test_a_second_done_in_openai_chat_ends_nothing_more() -> None:
    events, result = decode(chunk(tc(0, "c", "f", "{}")), chunk(finish="tool_calls"), DONE, DONE)
    assert result.error is None
    assert sum(type(e).__name__ == "StreamEnded" for e in events) == 1


def _legacy(name: str | None, args: str, *, with_tool_calls: bool) -> bytes:
    delta: dict[str, Any] = {"function_call": {"name": name, "arguments": args}}
    if with_tool_calls:
        delta["tool_calls"] = [tc(0, "call_x", name, args)]
    body = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def test_legacy_function_call_beside_tool_calls_is_the_same_call() -> None:
    _, result = decode(
        _legacy("f", '{"a"', with_tool_calls=True),
        _legacy("f", ": 1}", with_tool_calls=True),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_x", "f", {"a": 1})]


def test_legacy_function_call_alone_is_one_call_with_a_minted_id() -> None:
    _, result = decode(
        _legacy("f", '{"a"', with_tool_calls=False),
        _legacy(None, ": 1}", with_tool_calls=False),
        chunk(finish="function_call"),
        DONE,
    )
    (call,) = result.tool_calls
    assert (call.name, call.arguments, call.minted_id) == ("f", {"a": 1}, True)
    assert result.choices[0].finish_reason == "tool_calls"
