"""Hostile and huge input ends in a typed error or a correct result, within
a stated bound.

Each test names its bound: time by ``pytest.mark.timeout`` (a quadratic path
overshoots it by orders of magnitude: the shapes here took minutes before
they were made linear), memory by ``tracemalloc``'s peak. Limits that would
take too long to reach for real (64 Mi characters, 100,000 calls) are
lowered with ``monkeypatch`` so the test checks the behaviour past them.
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import toolwire
from tests.stream._chunks import DONE, chunk, tc
from toolwire import RemoteProtocolError, StreamDecoder, StreamResult, ToolCall
from toolwire.stream.framing import SniffingReader
from toolwire.stream.limits import MAX_JSON_DEPTH

MB = 1024 * 1024


def decode(body: bytes, dialect: str, piece: int = 65536) -> StreamResult:
    decoder = StreamDecoder(dialect)
    for start in range(0, len(body), piece):
        decoder.feed(body[start : start + piece])
    decoder.close()
    return decoder.result()


@contextmanager
def peak_below(limit: int) -> Iterator[None]:
    """Fail when the block allocates more than ``limit`` bytes at its peak."""
    tracemalloc.start()
    try:
        yield
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < limit, f"peak allocation {peak} bytes, bound {limit}"


def sse(*payloads: Any, events: bool = False) -> bytes:
    out = []
    for payload in payloads:
        if events:
            out.append(f"event: {payload['type']}\n".encode())
        out.append(b"data: " + json.dumps(payload).encode() + b"\n\n")
    return b"".join(out)


def _gemini_call(args: str) -> bytes:
    payload = (
        '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":'
        + args
        + '}}]},"finishReason":"STOP"}]}'
    )
    return b"data: " + payload.encode() + b"\n\n"


# -- nesting ---------------------------------------------------------------------

DEEP_ARGS = '{"a":' * 1000 + "1" + "}" * 1000  # 6 KB, 1,000 levels


def _anthropic_call(args: str) -> bytes:
    return sse(
        {"type": "message_start", "message": {"id": "m", "content": []}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": args},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
        events=True,
    )


DEEP_STREAMS: dict[str, Callable[[], tuple[str, bytes]]] = {
    "openai-chat arguments": lambda: (
        "openai-chat",
        chunk(tc(0, "c", "f", DEEP_ARGS)) + chunk(finish="tool_calls") + DONE,
    ),
    "openai-chat payload": lambda: (
        "openai-chat",
        b'data: {"choices":[{"index":0,"delta":{"content":'
        + b"[" * 1000
        + b"]" * 1000
        + b"}}]}\n\n",
    ),
    "anthropic arguments": lambda: ("anthropic-messages", _anthropic_call(DEEP_ARGS)),
    "gemini object": lambda: ("gemini", _gemini_call(DEEP_ARGS)),
    "gemini json array": lambda: ("gemini", b"[" + _gemini_call(DEEP_ARGS)[6:-2] + b"]"),
    "ollama": lambda: (
        "ollama-ndjson",
        b'{"message":{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":'
        + DEEP_ARGS.encode()
        + b'}}]},"done":true}\n',
    ),
    "responses payload": lambda: (
        "openai-responses",
        b'data: {"type":"response.created","x":' + b"[" * 1000 + b"]" * 1000 + b"}\n\n",
    ),
    "cohere payload": lambda: (
        "cohere-v2",
        b'data: {"type":"message-start","x":' + b"[" * 1000 + b"]" * 1000 + b"}\n\n",
    ),
    "auto": lambda: ("auto", b'data: {"x":' + b"[" * 1000 + b"]" * 1000 + b"}\n\n"),
}


@pytest.mark.timeout(10)
@pytest.mark.parametrize("case", sorted(DEEP_STREAMS))
def test_deep_nesting_is_refused_with_the_limit_named(case: str) -> None:
    dialect, body = DEEP_STREAMS[case]()
    for piece in (len(body), 7):
        result = decode(body, dialect, piece)
        assert result.tool_calls == ()
        invalid = result.choices[0].invalid_tool_calls
        if invalid:  # arguments sent as text: only that call is refused
            assert result.error is None
            assert f"deeper than {MAX_JSON_DEPTH} levels" in invalid[0].error
            assert invalid[0].error.startswith("the arguments go past a limit")
        elif case == "openai-chat payload":
            # The hot path reads chunk envelopes with orjson, whose own limit
            # (1,024 levels) keeps it from recursing; the deep value is then
            # refused for its type (content must be text).
            assert isinstance(result.error, RemoteProtocolError)
            assert "content: expected a string" in result.error.message
        else:
            assert isinstance(result.error, RemoteProtocolError)
            assert f"deeper than {MAX_JSON_DEPTH} levels" in result.error.message


@pytest.mark.timeout(10)
def test_nesting_past_orjsons_own_limit_names_toolwires() -> None:
    body = (
        b'data: {"choices":[{"index":0,"delta":{"content":'
        + b"[" * 3000
        + b"]" * 3000
        + b"}}]}\n\n"
    )
    result = decode(body, "openai-chat")
    assert isinstance(result.error, RemoteProtocolError)
    assert f"deeper than {MAX_JSON_DEPTH} levels" in result.error.message


def test_nesting_at_the_limit_is_fine() -> None:
    args = '{"a":' * (MAX_JSON_DEPTH - 1) + "1" + "}" * (MAX_JSON_DEPTH - 1)
    result = decode(chunk(tc(0, "c", "f", args)) + chunk(finish="tool_calls") + DONE, "openai-chat")
    assert len(result.tool_calls) == 1


def test_partial_values_stop_at_the_depth_limit() -> None:
    events = StreamDecoder("openai-chat").feed(chunk(tc(0, "c", "f", "[" * 2000)))
    deltas = [e for e in events if isinstance(e, toolwire.ToolCallDelta)]
    partial = deltas[-1].partial  # no RecursionError, no 2,000 nested lists
    depth = 0
    while isinstance(partial, list) and partial:
        partial, depth = partial[0], depth + 1
    assert depth <= MAX_JSON_DEPTH


@pytest.mark.anyio
async def test_the_tool_layer_refuses_deep_arguments() -> None:
    @toolwire.tool
    def f(x: dict[str, Any]) -> str:
        """Anything."""
        return "ok"

    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5000):
        node["a"] = {}
        node = node["a"]
    calls = [ToolCall(id=f"c{k}", name="f", arguments={"x": deep}) for k in range(2)]
    results = await toolwire.Toolbox([f]).execute(calls)
    assert [r.error for r in results] == ["invalid_arguments", "invalid_arguments"]
    assert "nested more than 100 levels deep" in results[0].content


# -- Vertex partialArgs ----------------------------------------------------------------


def _vertex(*pieces: dict[str, Any], finish: bool = True) -> bytes:
    chunks: list[dict[str, Any]] = [
        {
            "candidates": [
                {"content": {"parts": [{"functionCall": {"name": "f", "willContinue": True}}]}}
            ]
        }
    ]
    for piece in pieces:
        call = {"partialArgs": [piece], "willContinue": True}
        chunks.append({"candidates": [{"content": {"parts": [{"functionCall": call}]}}]})
    if finish:
        end = {"content": {"parts": [{"functionCall": {}}]}, "finishReason": "STOP"}
        chunks.append({"candidates": [end]})
    return sse(*chunks)


@pytest.mark.timeout(10)
@pytest.mark.parametrize("index", [10**8, 10**30])
def test_a_json_path_index_far_ahead_is_refused_without_allocating(index: int) -> None:
    with peak_below(1 * MB):
        result = decode(_vertex({"jsonPath": f"$.a[{index}]", "numberValue": 1}), "gemini")
    assert isinstance(result.error, RemoteProtocolError)
    assert "skips ahead" in result.error.message


def test_json_path_indexes_in_order_build_the_array() -> None:
    pieces = [{"jsonPath": f"$.a[{k}]", "numberValue": k} for k in range(5)]
    result = decode(_vertex(*pieces), "gemini")
    assert result.tool_calls[0].arguments == {"a": [0, 1, 2, 3, 4]}


def test_a_json_path_deeper_than_the_limit_is_refused() -> None:
    path = "$" + ".a" * (MAX_JSON_DEPTH + 1)
    result = decode(_vertex({"jsonPath": path, "nullValue": None}), "gemini")
    assert isinstance(result.error, RemoteProtocolError)
    assert "deeper than" in result.error.message


@contextmanager
def _untraced() -> Iterator[None]:
    """Run without a trace function (coverage's), as an application does.

    A string extended in place stays linear only while CPython may resize it
    in place, which it does not do under a tracer; the partials below would
    then copy 20 GB and the test would measure coverage, not toolwire.
    """
    tracer = sys.gettrace()
    sys.settrace(None)
    try:
        yield
    finally:
        sys.settrace(tracer)


@pytest.mark.slow
@pytest.mark.timeout(20)
def test_vertex_string_appends_and_partials_are_linear() -> None:
    n = 40_000
    pieces = [{"jsonPath": "$.text", "stringValue": "x" * 25} for _ in range(n)]
    decoder = StreamDecoder("gemini")
    longest = 0
    with _untraced():
        events = decoder.feed(_vertex(*pieces)) + decoder.close()
        for event in events:
            if isinstance(event, toolwire.ToolCallDelta):
                longest = max(longest, len(event.partial.get("text", "")))  # read every one
    (call,) = decoder.result().tool_calls
    assert call.arguments == {"text": "x" * 25 * n}
    assert longest == 25 * n


@pytest.mark.slow
@pytest.mark.timeout(20)
def test_anthropic_signature_appends_are_linear() -> None:
    n = 60_000
    deltas = [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "signature_delta", "signature": "A" * 40},
        }
        for _ in range(n)
    ]
    body = sse(
        {"type": "message_start", "message": {"id": "m", "content": []}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": ""},
        },
        *deltas,
        {"type": "content_block_stop", "index": 0},
        {"type": "message_stop"},
        events=True,
    )
    result = decode(body, "anthropic-messages")
    (state,) = result.choices[0].provider_state
    assert state["signature"] == "A" * 40 * n


# -- many calls ------------------------------------------------------------------------


def _many_calls(n: int) -> bytes:
    body = b"".join(chunk(tc(k, f"call_{k}", "f", f'{{"k": {k}}}')) for k in range(n))
    return body + chunk(finish="tool_calls") + DONE


@pytest.mark.slow
@pytest.mark.timeout(30)
def test_twenty_thousand_distinct_calls_each_decoded_once() -> None:
    n = 20_000
    result = decode(_many_calls(n), "openai-chat")
    assert [c.arguments["k"] for c in result.tool_calls] == list(range(n))
    assert len({c.id for c in result.tool_calls}) == n


def test_more_calls_than_the_limit_is_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("toolwire.stream._assembly.MAX_TOOL_CALLS", 50)
    result = decode(_many_calls(60), "openai-chat")
    assert isinstance(result.error, RemoteProtocolError)
    assert "more than 50 tool calls" in result.error.message
    assert len(result.tool_calls) == 50, "the calls before the limit are kept"


# -- buffers ---------------------------------------------------------------------------


def test_arguments_past_their_cap_make_one_invalid_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("toolwire.stream._calls.MAX_ARGUMENTS_CHARS", 1000)
    big = chunk(tc(0, "a", "f", '{"x": "')) + b"".join(
        chunk(tc(0, args="y" * 100)) for _ in range(30)
    )
    body = big + chunk(tc(0, args='"}')) + chunk(tc(1, "b", "g", "{}")) + chunk(finish="tool_calls")
    result = decode(body + DONE, "openai-chat")
    assert result.error is None
    (invalid,) = result.choices[0].invalid_tool_calls
    assert invalid.id == "a" and "exceed 1000 characters" in invalid.error
    assert len(invalid.raw_arguments) <= 1000, "past the cap, nothing more is kept"
    assert [c.id for c in result.tool_calls] == ["b"]


def test_text_past_its_cap_is_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("toolwire.stream.accumulate.MAX_TEXT_CHARS", 1000)
    body = b"".join(chunk(content="z" * 100) for _ in range(20)) + chunk(finish="stop") + DONE
    result = decode(body, "openai-chat")
    assert isinstance(result.error, RemoteProtocolError)
    assert "text exceeds 1000 characters" in result.error.message


@pytest.mark.slow
@pytest.mark.timeout(30)
@pytest.mark.parametrize("dialect", ["gemini", "auto"])
def test_leading_whitespace_is_not_buffered(dialect: str) -> None:
    blank = (b" " * 1023 + b"\n") * (16 * 1024)  # 16 MiB of blank lines
    body = blank + _gemini_call('{"city": "Paris"}')
    with peak_below(2 * MB):
        result = decode(body, dialect, piece=65536)
    assert result.tool_calls[0].arguments == {"city": "Paris"}


def test_a_whitespace_line_past_the_cap_is_a_typed_error() -> None:
    reader = SniffingReader(frozenset({"sse"}), max_frame_bytes=1000)
    reader.feed_pairs(b"\n" + b" " * 600)
    with pytest.raises(RemoteProtocolError, match="whitespace"):
        reader.feed_pairs(b" " * 600)


@pytest.mark.slow
@pytest.mark.timeout(20)
def test_auto_looks_at_each_held_frame_once() -> None:
    body = b'data: {"x": 1}\n\n' * 40_000 + chunk(content="hi", finish="stop") + DONE
    result = decode(body, "auto", piece=4096)
    assert (result.dialect, result.text) == ("openai-chat", "hi")


def test_auto_holds_a_bounded_amount(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("toolwire.stream.decoder.MAX_FRAME_BYTES", 1000)
    result = decode(b'data: {"x": 1}\n\n' * 200, "auto")
    assert isinstance(result.error, RemoteProtocolError)
    assert "could not tell" in result.error.message


# -- bytes that are not UTF-8 ---------------------------------------------------------------


def _bad_arguments(dialect: str) -> bytes:
    if dialect == "openai-chat":
        return (
            b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c",'
            b'"function":{"name":"f","arguments":"{\\"a\\": \\"x\xff\xfey\\"}"}}]}}]}\n\n'
            + chunk(content="ok \xe9".encode("latin-1").decode("latin-1"), finish="tool_calls")
            + DONE
        )
    if dialect == "ollama-ndjson":
        return (
            b'{"message":{"role":"assistant","tool_calls":[{"function":{"name":"f",'
            b'"arguments":{"a":"x\xffy"}}}]},"done":true}\n'
        )
    element = _gemini_call('{"a": "x?y"}')[6:-2].replace(b"x?y", b"x\xffy")
    return b"[" + element + b"]"


@pytest.mark.parametrize("dialect", ["openai-chat", "ollama-ndjson", "gemini"])
def test_arguments_that_were_not_utf8_make_an_invalid_call(dialect: str) -> None:
    for piece in (65536, 3):
        result = decode(_bad_arguments(dialect), dialect, piece)
        assert result.error is None
        assert result.tool_calls == ()
        (invalid,) = result.choices[0].invalid_tool_calls
        assert "not valid UTF-8" in invalid.error


def test_text_that_was_not_utf8_shows_replacement_characters() -> None:
    body = b'data: {"choices":[{"index":0,"delta":{"content":"caf\xe9 \xff"}}]}\n\n'
    result = decode(body + chunk(finish="stop") + DONE, "openai-chat")
    assert result.text == "caf\ufffd \ufffd"
    result.text.encode("utf-8")  # no lone surrogate left in what users see


# -- huge numbers -----------------------------------------------------------------------------

HUGE = "1" * 1_000_000


def test_a_huge_integer_in_text_arguments_names_the_digit_limit() -> None:
    body = chunk(tc(0, "c", "f", f'{{"n": {HUGE}}}')) + chunk(finish="tool_calls") + DONE
    result = decode(body, "openai-chat")
    (invalid,) = result.choices[0].invalid_tool_calls
    assert "an integer of 1000000 digits" in invalid.error
    assert "not valid JSON" not in invalid.error


@pytest.mark.parametrize("dialect", ["gemini", "ollama-ndjson"])
def test_a_huge_integer_in_an_arguments_object_names_the_digit_limit(dialect: str) -> None:
    if dialect == "gemini":
        body = _gemini_call(f'{{"n": {HUGE}}}')
    else:
        body = (
            b'{"message":{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":'
            + (f'{{"n": {HUGE}}}').encode()
            + b'}}]},"done":true}\n'
        )
    result = decode(body, dialect)
    assert isinstance(result.error, RemoteProtocolError)
    assert "more than 4300 digits" in result.error.message
    assert "not valid JSON" not in result.error.message


def test_a_big_integer_within_the_limit_stays_exact() -> None:
    big = "9" * 4000
    body = chunk(tc(0, "c", "f", f'{{"n": {big}}}')) + chunk(finish="tool_calls") + DONE
    assert decode(body, "openai-chat").tool_calls[0].arguments == {"n": int(big)}
