"""Argument deltas read by their exact shape give what the general path gives.

``StreamDecoder.feed`` hands the dialect's argument delta events to the codec
as regular-expression matches (``SSEDecoder.feed_matched``, the codecs'
``args_event``); ``feed_frames`` reads every payload through the JSON parser
and the codec's ``decode``. On generated streams, each argument delta of which
may be mutated in ways that do and do not keep its exact shape, fed at random
split points, both give the same events, partial values, results and quirks.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from tests._json_strategies import json_text
from toolwire import StreamDecoder
from toolwire.errors import RemoteProtocolError
from toolwire.events import Event, StreamFailed, ToolCallDelta
from toolwire.stream.codecs import AnthropicCodec, OpenAIChatCodec
from toolwire.stream.codecs.openai_chat import learn_openai_head
from toolwire.stream.framing import SSEDecoder
from toolwire.types import StreamResult

Mutation = Callable[[bytes], bytes]


def _in_fragment(event: bytes, text: bytes) -> bytes:
    """``event`` with ``text`` at the start of its argument fragment."""
    for key in (b'"partial_json":"', b'"arguments":"'):
        event = event.replace(key, key + text)
    return event


# Changes to one argument delta event: some keep its exact shape (the fast
# path must read them), most break it in a way the general path reads
# differently, rejects, or reads the same by another route.
_COMMON: list[Mutation] = [
    lambda e: e,
    lambda e: e.replace(b"data: ", b"data:"),
    lambda e: e.replace(b"data: ", b"data:  "),
    lambda e: e.replace(b"\n", b"\r\n"),
    lambda e: e.replace(b"\n", b"\r"),
    lambda e: b": keep-alive\n" + e,
    lambda e: b"id: 7\n" + e,
    lambda e: b"retry: 10\n" + e,
    lambda e: b"\n" + e,
    lambda e: e + b"\n",
    lambda e: e[:-1],  # no blank line: it runs into the next event
    lambda e: e.replace(b'"index":', b'"index": '),
    lambda e: e.replace(b'"index":', b'"index":0'),
    lambda e: e.replace(b'"index":', b'"index":-'),
    lambda e: e.replace(b'"index":', b'"index":1'),
    lambda e: e.replace(b'"index":', b'"index":99999999999999999999'),
    lambda e: _in_fragment(e, b"\\x"),
    lambda e: _in_fragment(e, b"\\u12"),
    lambda e: _in_fragment(e, b"\\ud800"),
    lambda e: _in_fragment(e, b"\\ud83d\\ude00"),
    lambda e: _in_fragment(e, b"\x01"),
    lambda e: _in_fragment(e, b"\xff"),
    lambda e: _in_fragment(e, b"\xc3"),
    lambda e: _in_fragment(e, b'\\"'),
    lambda e: _in_fragment(e, b"\\\\"),
    lambda e: _in_fragment(e, b'"'),
    lambda e: e.replace(b'":"', b'":"\\x', 1),
    lambda e: e.replace(b"}\n", b"} \n", 1),
    lambda e: e.replace(b"}}", b"}", 1),
]

_ANTHROPIC: list[Mutation] = [
    lambda e: e.replace(b"event: content_block_delta\n", b""),
    lambda e: e.replace(b"event: content_block_delta", b"event: ping"),
    lambda e: e.replace(b"event: content_block_delta", b"event: error"),
    lambda e: e.replace(b"input_json_delta", b"text_delta"),
    lambda e: e.replace(b'"partial_json"', b'"text"'),
    lambda e: e.replace(b'"}}', b'","x":1}}'),
    lambda e: e.replace(b'"}}', b'"},"type":"ping"}'),
    lambda e: e.replace(b'{"type":"content_block_delta",', b'{"type":"content_block_delta", '),
]

_OPENAI: list[Mutation] = [
    lambda e: e.replace(b'"id":"chatcmpl-1"', b'"id":"chatcmpl-2"'),
    lambda e: e.replace(b'"usage":null', b'"usage":{"prompt_tokens":1}'),
    lambda e: e.replace(b'"finish_reason":null', b'"finish_reason":"stop"'),
    lambda e: e.replace(b'"logprobs":null', b'"logprobs":{}'),
    lambda e: e.replace(b',"usage":null', b""),
    lambda e: e.replace(b'"usage":null}', b'"usage":null,"obfuscation":"aB3"}'),
    lambda e: e.replace(b'"usage":null}', b'"usage":null,"obfuscation":"a-b"}'),
    lambda e: e.replace(b'"choices":[{"index":0', b'"choices":[{"index":1'),
    lambda e: e.replace(b'"function":{', b'"function":{"name":"again",'),
    lambda e: e.replace(b'{"index":0,"function"', b'{"index":0,"id":"call_x","function"'),
    lambda e: e.replace(b'"tool_calls":[', b'"content":"hi","tool_calls":['),
    lambda e: e.replace(b'"}}]}', b'"}},{"index":5,"function":{"arguments":"x"}}]}'),
    lambda e: e.replace(b'"}}]}', b'"}}],"role":null}'),
    lambda e: e.replace(b'"object":', b'"choices":[],"object":'),
    lambda e: e.replace(b'"object":', b'"usage":{"total_tokens":3},"object":'),
]


def _fragments(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=12))))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def _arguments(draw: st.DrawFn) -> str:
    value = draw(st.dictionaries(json_text, st.one_of(json_text, st.integers()), max_size=3))
    return json.dumps(value, ensure_ascii=draw(st.booleans()))


def _quoted(draw: st.DrawFn, fragment: str) -> bytes:
    return json.dumps(fragment, ensure_ascii=draw(st.booleans()))[1:-1].encode()


def _mutated(draw: st.DrawFn, event: bytes, own: list[Mutation]) -> bytes:
    if draw(st.integers(0, 2)):
        return event  # most events keep their shape
    return draw(st.sampled_from(draw(st.sampled_from([_COMMON, own]))))(event)


_LAST = ['{"last', '": "call"', "}"]
"""The argument fragments of every generated stream's last call."""


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


@st.composite
def anthropic_streams(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    def sse(name: str, obj: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: {json.dumps(obj)}\n\n".encode()

    out = [sse("message_start", {"type": "message_start", "message": {"id": "msg_1"}})]
    calls = draw(st.integers(1, 2))
    for index in range(calls):
        kind = draw(st.sampled_from(["tool_use", "tool_use", "server_tool_use"]))
        block = {"type": kind, "id": f"toolu_{index}", "name": "f", "input": {}}
        out.append(
            sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
        )
        for fragment in _fragments(draw, _arguments(draw)):
            event = (
                b'event: content_block_delta\ndata: {"type":"content_block_delta","index":'
                + str(index).encode()
                + b',"delta":{"type":"input_json_delta","partial_json":"'
                + _quoted(draw, fragment)
                + b'"}}\n\n'
            )
            out.append(_mutated(draw, event, _ANTHROPIC))
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    # A last call of plain deltas, each in a piece of its own: the short path
    # must take them (unless an earlier mutation failed the stream).
    ends = [sum(map(len, out))]
    start = {"type": "tool_use", "id": "toolu_last", "name": "f", "input": {}}
    out.append(
        sse(
            "content_block_start",
            {"type": "content_block_start", "index": calls, "content_block": start},
        )
    )
    for fragment in _LAST:
        delta = {"type": "input_json_delta", "partial_json": fragment}
        event = {"type": "content_block_delta", "index": calls, "delta": delta}
        out.append(f"event: content_block_delta\ndata: {_compact(event)}\n\n".encode())
        ends.append(sum(map(len, out)))
    out.append(sse("content_block_stop", {"type": "content_block_stop", "index": calls}))
    stop = {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}
    out += [sse("message_delta", stop), sse("message_stop", {"type": "message_stop"})]
    return b"".join(out), ends


@st.composite
def openai_streams(draw: st.DrawFn) -> tuple[bytes, list[int]]:
    head = b'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",'

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        body = json.dumps({"choices": [choice], "usage": None}, separators=(",", ":"))
        return head + body[1:].encode() + b"\n\n"

    out = [chunk({"role": "assistant", "content": None})]
    calls = draw(st.integers(1, 2))

    def args_chunk(index: int, quoted: bytes) -> bytes:
        return (
            head
            + b'"choices":[{"index":0,"delta":{"tool_calls":[{"index":'
            + str(index).encode()
            + b',"function":{"arguments":"'
            + quoted
            + b'"}}]},"logprobs":null,"finish_reason":null}],"usage":null}\n\n'
        )

    def call_start(index: int) -> bytes:
        start = {"index": index, "id": f"call_{index}", "type": "function"}
        return chunk({"tool_calls": [{**start, "function": {"name": "f", "arguments": ""}}]})

    for index in range(calls):
        out.append(call_start(index))
        for n, fragment in enumerate(_fragments(draw, _arguments(draw))):
            event = args_chunk(index, _quoted(draw, fragment))
            # The stream's first argument chunk keeps its shape: the codec
            # learns the stream's own members from it.
            out.append(event if index == n == 0 else _mutated(draw, event, _OPENAI))
    # A last call of plain chunks, each in a piece of its own: the short path
    # must take them (unless an earlier mutation failed the stream).
    out.append(call_start(calls))
    ends = [sum(map(len, out))]
    for fragment in _LAST:
        out.append(args_chunk(calls, _compact(fragment)[1:-1].encode()))
        ends.append(sum(map(len, out)))
    out += [chunk({}, "tool_calls"), b"data: [DONE]\n\n"]
    return b"".join(out), ends


def _pieces(body: bytes, cuts: list[int]) -> Iterator[bytes]:
    bounds = [0, *sorted({c % (len(body) + 1) for c in cuts}), len(body)]
    for a, b in itertools.pairwise(bounds):
        yield body[a:b]


def _ids() -> Callable[[], str]:
    counter = iter(range(1_000_000))
    return lambda: f"minted_{next(counter)}"


def _seen(event: Event) -> Any:
    if isinstance(event, StreamFailed):
        error = event.error
        return ("failed", type(error).__name__, str(error), getattr(error, "raw", None))
    if isinstance(event, ToolCallDelta):
        return (event, copy.deepcopy(event.partial))
    return event


def _outcome(result: StreamResult) -> Any:
    error = result.error
    seen = None if error is None else (type(error).__name__, str(error))
    return (seen, result.choices, result.usage, result.complete, result.model)


def _decode(
    dialect: str, body: bytes, cuts: list[int], *, by_frames: bool = False, short_path: bool = True
) -> tuple[Any, Any, tuple[str, ...], int]:
    """Events, outcome and quirks of a stream, and how many argument deltas
    took the short path."""
    decoder = StreamDecoder(dialect, id_factory=_ids(), short_path=short_path)
    events: list[Any] = []
    for piece in _pieces(body, cuts):
        if by_frames:
            events += [_seen(e) for frame in decoder.feed_frames(piece) for e in frame.events]
        else:
            events += [_seen(e) for e in decoder.feed(piece)]
    if by_frames:
        events += [_seen(e) for frame in decoder.close_frames() for e in frame.events]
    else:
        events += [_seen(e) for e in decoder.close()]
    return events, _outcome(decoder.result()), decoder.quirks, decoder.short_path_deltas


def _check_both_paths(dialect: str, body: bytes, cuts: list[int], ends: list[int]) -> None:
    """The short path, the general one (switched off, and by frames) agree, and
    the short path took the last call's deltas (each in a piece of its own:
    ``ends`` are their bounds)."""
    size = len(body) + 1
    cuts = [c for c in cuts if not ends[0] < c % size < ends[-1]] + ends
    *fast, taken = _decode(dialect, body, cuts)
    *general, untaken = _decode(dialect, body, cuts, short_path=False)
    *by_frames, _ = _decode(dialect, body, cuts, by_frames=True)
    assert fast == general == by_frames
    assert untaken == 0
    failed = fast[1][0] is not None
    assert failed or taken >= len(_LAST), "the short path was not taken"


_cuts = st.lists(st.integers(0, 10**6), max_size=12)


@pytest.mark.slow
@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=anthropic_streams(), cuts=_cuts)
def test_anthropic_matched_deltas_read_as_the_general_path_reads_them(
    stream: tuple[bytes, list[int]], cuts: list[int]
) -> None:
    body, ends = stream
    _check_both_paths("anthropic-messages", body, cuts, ends)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=openai_streams(), cuts=_cuts)
def test_openai_matched_chunks_read_as_the_general_path_reads_them(
    stream: tuple[bytes, list[int]], cuts: list[int]
) -> None:
    # A piece that ends after the first argument chunks: the codec learns
    # their shape from them, and matches the chunks of the later pieces.
    body, ends = stream
    early = [m.end() for m in re.finditer(b"\n\n", body)][2:5]
    _check_both_paths("openai-chat", body, cuts + early, ends)


# -- the reader: matched events are the frames feed_pairs would give ---------------

_LINES = st.sampled_from(
    [
        b"event: content_block_delta",
        b'data: {"type":"content_block_delta","index":0,"delta":'
        b'{"type":"input_json_delta","partial_json":"a\\"b"}}',
        b"data: x",
        b"data:",
        b"event: ping",
        b": comment",
        b"id: 1",
        b"retry: 5",
        b"",
        b"\xef\xbb\xbfdata: bom",
        b"data: caf\xc3\xa9",
        b"data: \xff",
    ]
)
_ENDS = st.sampled_from([b"\n", b"\n", b"\n", b"\r\n", b"\r"])


@st.composite
def sse_bodies(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(st.tuples(_LINES, _ENDS), max_size=30))
    return b"".join(line + end for line, end in lines) + draw(st.sampled_from([b"", b"data: z"]))


def _frames_matched(body: bytes, cuts: list[int]) -> tuple[list[Any], int]:
    reader = SSEDecoder(errors="surrogateescape")
    codec = AnthropicCodec()
    assert codec.args_event is not None
    frames: list[Any] = []
    matched = 0
    for piece in _pieces(body, cuts):
        for item in reader.feed_matched(piece, codec.args_event):
            if isinstance(item, re.Match):
                matched += 1
                frames.append(codec.args_frame(item))
            else:
                frames.append(item)
    return frames + reader.close_pairs(), matched


def _frames_read(body: bytes, cuts: list[int]) -> list[Any]:
    reader = SSEDecoder(errors="surrogateescape")
    frames = [f for piece in _pieces(body, cuts) for f in reader.feed_pairs(piece)]
    return frames + reader.close_pairs()


@settings(max_examples=examples(500), deadline=None)
@given(body=sse_bodies(), cuts=_cuts)
def test_feed_matched_gives_the_frames_feed_pairs_gives(body: bytes, cuts: list[int]) -> None:
    frames, _ = _frames_matched(body, cuts)
    assert frames == _frames_read(body, cuts)


def test_feed_matched_takes_every_delta_of_a_plain_stream_as_a_match() -> None:
    delta = (
        b'event: content_block_delta\ndata: {"type":"content_block_delta","index":3,'
        b'"delta":{"type":"input_json_delta","partial_json":"{\\"k\\": \\"v\\u00e9"}}\n\n'
    )
    body = b"event: ping\ndata: {}\n\n" + delta * 50 + b"event: ping\ndata: {}\n\n"
    frames, matched = _frames_matched(body, [len(body) // 3, len(body) // 2])
    assert matched >= 48  # all but the ones a piece boundary cut
    assert frames == _frames_read(body, [])


def test_openai_learns_the_shape_of_its_argument_chunks() -> None:
    codec = OpenAIChatCodec()
    head = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
    data = (
        head + '"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"function":'
        '{"arguments":"x\\\\y"}}]},"logprobs":null,"finish_reason":null}],"usage":null}'
    )
    codec.decode("message", head + '"choices":[]}')
    assert codec.args_event is None
    codec.decode("message", data)
    matcher = codec.args_event
    assert matcher is not None
    event = "data: " + data + "\n\n"
    m = matcher("xx" + event, 2)
    assert m is not None and m.end() == len(event) + 2
    assert codec.args_delta(m) == (0, 2, "x\\y")
    assert codec.args_frame(m) == ("message", data)
    assert matcher(event.replace('"id":"c"', '"id":"d"'), 0) is None


_BODY = '"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"x"}}]}}]'


@pytest.mark.parametrize(
    "data",
    [
        # The trailing null hides the head's usage here, but not in a chunk without it.
        '{"usage":{"total_tokens":1},' + _BODY + ',"usage":null}',
        # Two data lines: an event of another shape.
        '{"id":"c",\n' + _BODY + "}",
    ],
)
def test_openai_learns_no_head_that_could_read_differently(data: str) -> None:
    codec = OpenAIChatCodec()
    codec.decode("message", '{"id":"c","choices":[]}')
    assert len(codec.decode("message", data)) == 1
    assert codec.args_event is None


def test_openai_learns_nothing_from_members_that_are_not_an_objects() -> None:
    body = (
        '"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"x"}}]}}]}'
    )
    assert learn_openai_head('{"id":"c",' + body) == '{"id":"c",'
    assert learn_openai_head("[1," + body) is None
    assert learn_openai_head('{"id" "c",' + body) is None


def test_a_limit_passed_on_the_short_way_fails_the_stream_as_on_the_general_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("toolwire.stream._assembly.MAX_TOOL_CALLS", 3)
    head = b'data: {"id":"c","object":"chat.completion.chunk","model":"m",'

    def args(index: int) -> bytes:
        return (
            head
            + b'"choices":[{"index":0,"delta":{"tool_calls":[{"index":'
            + str(index).encode()
            + b',"function":{"arguments":"{}"}}]}}]}\n\n'
        )

    # A call of each index (no id: the index names it) until one too many.
    pieces = [head + b'"choices":[]}\n\n' + args(0), b"".join(args(i) for i in range(1, 6))]
    results = []
    for by_frames in (False, True):
        decoder = StreamDecoder("openai-chat", id_factory=_ids())
        for piece in pieces:
            decoder.feed_frames(piece) if by_frames else decoder.feed(piece)
        decoder.close()
        results.append(_outcome(decoder.result()))
    assert results[0] == results[1]
    assert results[0][0] == (
        "RemoteProtocolError",
        "the response has more than 3 tool calls, all choices together",
    )


@pytest.mark.parametrize("line", [b"data: " + b"x" * 20, b"data: " + b"x" * 100])
def test_a_piece_past_the_reader_limit_is_read_line_by_line(line: bytes) -> None:
    # Several short events in one piece longer than the limit; with a line over
    # it, the events before that line come first and the error after, as
    # feed_pairs gives them.
    body = (line + b"\n\n") * 5 + b"event: ping\ndata: {}\n\n"
    matcher = AnthropicCodec().args_event
    assert matcher is not None
    matching, plain = SSEDecoder(max_event_bytes=64), SSEDecoder(max_event_bytes=64)
    got = _read(lambda piece: matching.feed_matched(piece, matcher), body)
    assert got == _read(plain.feed_pairs, body)
    assert ("exceeds" in str(got)) is (len(line) > 64)


def _read(feed: Callable[[bytes], list[Any]], body: bytes) -> list[Any]:
    out: list[Any] = []
    for piece in (body, b"data: more\n\n"):
        try:
            out.append(feed(piece))
        except RemoteProtocolError as exc:
            out.append(str(exc))
    return out


def _anthropic_event(obj: dict[str, Any]) -> bytes:
    return f"event: {obj['type']}\ndata: {json.dumps(obj, separators=(',', ':'))}\n\n".encode()


def _start(i: int) -> bytes:
    """An Anthropic ``tool_use`` block ``i`` opening."""
    block = {"type": "tool_use", "id": f"toolu_{i}", "name": "f", "input": {}}
    return _anthropic_event({"type": "content_block_start", "index": i, "content_block": block})


def _delta(i: int, text: str) -> bytes:
    """An argument delta ``text`` of block ``i``."""
    d = {"type": "input_json_delta", "partial_json": text}
    return _anthropic_event({"type": "content_block_delta", "index": i, "delta": d})


def test_runs_of_one_call_stop_at_another_call_and_at_a_bad_escape() -> None:
    # Deltas of two calls interleaved in runs of unequal length, in a single
    # network read: read alike both ways, all taken the short way; then with a
    # bad escape on the wire (\x) inside a run, which only the general path
    # may judge: the deltas before it are taken, and both ways fail alike.
    texts = [(0, '{"a": "'), (0, "xy"), (1, '{"b": '), (0, "z\\n"), (0, "w"), (1, "12")]
    texts += [(0, '"}'), (1, "}")]
    body = b"".join([_start(0), _start(1)] + [_delta(i, t) for i, t in texts])
    body += _anthropic_event({"type": "message_stop"})
    *fast, taken = _decode("anthropic-messages", body, [])
    *general, untaken = _decode("anthropic-messages", body, [], short_path=False)
    assert fast == general and untaken == 0
    assert taken == len(texts)
    assert [e[0].delta for e in fast[0] if isinstance(e, tuple)] == [t for _, t in texts]
    assert fast[1][1][0].tool_calls[0].arguments == {"a": "xyz\nw"}

    bad = body.replace(b'"partial_json":"w"', b'"partial_json":"w\\x"', 1)
    *fast, taken = _decode("anthropic-messages", bad, [])
    *general, _ = _decode("anthropic-messages", bad, [], short_path=False)
    assert fast == general
    assert fast[1][0] is not None  # the stream failed on the bad escape
    assert taken == 4


def test_one_delta_per_network_read_reads_as_the_general_path_reads_it() -> None:
    # Each event in a read of its own, as a small turn streams: every
    # argument delta is taken the short way, one at a time, with the events,
    # the calls and the caps of the general path; a bad escape still fails
    # the stream alike.
    texts = [(0, '{"a": "'), (1, '{"b": '), (0, "x\\u00e9"), (1, "12"), (0, '"}'), (1, "}")]
    body = b"".join([_start(0), _start(1)] + [_delta(i, t) for i, t in texts])
    body += _anthropic_event({"type": "message_stop"})
    cuts = [m.end() for m in re.finditer(b"\n\n", body)]
    *fast, taken = _decode("anthropic-messages", body, cuts)
    *general, untaken = _decode("anthropic-messages", body, cuts, short_path=False)
    *by_frames, _ = _decode("anthropic-messages", body, cuts, by_frames=True)
    assert fast == general == by_frames and untaken == 0
    assert taken == len(texts)
    # Each call is ready as its last delta closes its arguments, not at the end.
    kinds = [type(e[0] if isinstance(e, tuple) else e).__name__ for e in fast[0]]
    last = max(i for i, kind in enumerate(kinds) if kind == "ToolCallDelta")
    assert kinds[last - 2 : last + 2] == ["ToolCallDelta", "ToolCallReady"] * 2
    calls = fast[1][1][0].tool_calls
    assert [c.arguments for c in calls] == [{"a": "xé"}, {"b": 12}]

    bad = body.replace(b'"partial_json":"12"', b'"partial_json":"1\\x"', 1)
    cuts = [m.end() for m in re.finditer(b"\n\n", bad)]
    *fast, taken = _decode("anthropic-messages", bad, cuts)
    *general, _ = _decode("anthropic-messages", bad, cuts, short_path=False)
    assert fast == general
    assert fast[1][0] is not None  # the stream failed on the bad escape
    assert taken == 3
