"""Bedrock's small frames the short way: text deltas matched in place give
the events and result the general way gives (any split, any mix with
argument deltas, escapes and frames of other shapes), and 1 MB of
adversarial event-stream input decodes in linear time."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from tests._linear import cpu_guard
from toolwire import StreamDecoder
from toolwire.events import StreamFailed, TextDelta
from toolwire.stream.framing.eventstream import event_message

_HEAD = event_message("messageStart", b'{"role":"assistant"}') + event_message(
    "contentBlockStart",
    b'{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t1","name":"f"}}}',
)
_END = (
    event_message("contentBlockStop", b'{"contentBlockIndex":1}')
    + event_message("messageStop", b'{"stopReason":"tool_use"}')
    + event_message("metadata", b"{}")
)
_SHAPES = [
    '{"contentBlockIndex":0,"delta":{"text":%s}}',
    '{"contentBlockIndex":0,"delta":{"text":%s},"p":"abc"}',
    '{"contentBlockIndex":7,"delta":{"text":%s}}',
    '{"contentBlockIndex":0, "delta":{"text":%s}}',
    '{"delta":{"text":%s},"contentBlockIndex":0}',
    '{"contentBlockIndex":1,"delta":{"toolUse":{"input":%s}}}',
    '{"contentBlockIndex":0,"delta":{"text":%s,"x":1}}',
]
_TEXTS = ['"ab"', '""', '"a\\"b"', '"\\u00e9\\n"', '"\\q"', '"\\ud800"', '"日本"', '"{\\"k"', "5"]


def _seen(events: list[Any]) -> list[str]:
    return [f"StreamFailed({e.error})" if isinstance(e, StreamFailed) else repr(e) for e in events]


def _fed(decoder: StreamDecoder, body: bytes, cuts: list[int]) -> list[Any]:
    events: list[Any] = []
    start = 0
    for cut in [*sorted(c for c in cuts if c <= len(body)), len(body)]:
        events += decoder.feed(body[start:cut])
        start = cut
    return events + decoder.close()


@settings(max_examples=examples(300), deadline=None)
@given(
    deltas=st.lists(
        st.tuples(st.sampled_from(range(len(_SHAPES))), st.sampled_from(_TEXTS)), max_size=12
    ),
    cuts=st.lists(st.integers(0, 3000), max_size=6),
)
def test_text_deltas_the_short_way_read_as_the_general_way(
    deltas: list[tuple[int, str]], cuts: list[int]
) -> None:
    body = _HEAD
    body += b"".join(
        event_message("contentBlockDelta", (_SHAPES[s] % text).encode()) for s, text in deltas
    )
    body += _END
    fast = StreamDecoder("bedrock-converse")
    fast_events = _fed(fast, body, cuts)
    general = StreamDecoder("bedrock-converse", short_path=False)
    general_events = _fed(general, body, [])
    assert _seen(fast_events) == _seen(general_events)
    assert repr(fast.result()) == repr(general.result())


def test_plain_text_deltas_are_taken_the_short_way(monkeypatch: Any) -> None:
    body = event_message("messageStart", b'{"role":"assistant"}') + b"".join(
        event_message("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"ab"}}')
        for _ in range(50)
    )
    decoder = StreamDecoder("bedrock-converse")
    codec = decoder._codec
    decoded: list[str] = []
    monkeypatch.setattr(codec, "decode", lambda e, d: decoded.append(e) or [])
    events = decoder.feed(body)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["ab"] * 50
    assert decoded == ["messageStart"]  # no text delta went through the JSON parser


def test_a_text_run_past_the_cap_fails_where_it_would(monkeypatch: Any) -> None:
    monkeypatch.setattr("toolwire.stream.accumulate.MAX_TEXT_CHARS", 9)
    body = event_message("messageStart", b'{"role":"assistant"}') + b"".join(
        event_message("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"ab"}}')
        for _ in range(10)
    )
    fast, general = (
        StreamDecoder("bedrock-converse"),
        StreamDecoder("bedrock-converse", short_path=False),
    )
    assert _seen(fast.feed(body)) == _seen(general.feed(body))
    assert fast.result().choices[0].text == "abababab"


_ADVERSARIAL = st.sampled_from(["tiny", "huge-length", "bad-crc-late", "one-byte"])


@settings(max_examples=examples(20), deadline=None)
@given(shape=_ADVERSARIAL, step=st.sampled_from([1, 7, 4096, 1 << 20]))
def test_a_megabyte_of_adversarial_frames_decodes_in_linear_time(shape: str, step: int) -> None:
    size = 1 << 20
    if shape == "tiny":  # the smallest frames a stream can have
        frame = event_message("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"a"}}')
        body = frame * (size // len(frame))
    elif shape == "huge-length":  # one message announcing all of it, arriving slowly
        text = json.dumps({"contentBlockIndex": 0, "delta": {"text": "a" * (size - 200)}})
        body = event_message("contentBlockDelta", text.encode())
    elif shape == "bad-crc-late":
        frame = event_message("ping", b"{}")
        body = frame * (size // len(frame))
        body = body[:-1] + bytes([body[-1] ^ 1])
    else:  # frames whose payloads are one byte of JSON each, fed a byte at a time
        frame = event_message("x", b"1")
        body = frame * (size // len(frame))
    step = min(step, 4096) if shape == "one-byte" else step
    decoder = StreamDecoder("bedrock-converse")
    with cpu_guard(30):  # linear decoding takes well under a second of CPU per MB
        for at in range(0, len(body), step):
            decoder.feed(body[at : at + step])
        decoder.close()
