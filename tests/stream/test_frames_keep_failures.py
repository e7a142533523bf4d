"""``feed_frames`` hands on every event ``feed`` gives, framing faults
included: mutated bodies of each framing, split anywhere, read by payload
(``inspect``'s way) and as they come give the same events and results."""

from __future__ import annotations

import itertools
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from toolwire import StreamDecoder
from toolwire.events import StreamFailed
from toolwire.stream.framing.eventstream import event_message


def _sse(*payloads: tuple[str, dict[str, Any]]) -> bytes:
    return b"".join(
        b"event: %s\ndata: %s\n\n" % (e.encode(), json.dumps(p).encode()) for e, p in payloads
    )


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


_CALL = {"index": 0, "id": "c1", "function": {"name": "f", "arguments": '{"a": '}}
BODIES: dict[str, bytes] = {
    "openai-chat": b"".join(
        b"data: %s\n\n" % json.dumps(c).encode()
        for c in [
            _chunk({"content": "hi"}),
            _chunk({"tool_calls": [_CALL]}),
            _chunk({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}),
            _chunk({}, "tool_calls"),
        ]
    )
    + b"data: [DONE]\n\n",
    "anthropic-messages": _sse(
        ("message_start", {"type": "message_start", "message": {"content": []}}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"a": 1}'},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_stop", {"type": "message_stop"}),
    ),
    "bedrock-converse": b"".join(
        event_message(name, json.dumps(payload).encode())
        for name, payload in [
            ("messageStart", {"role": "assistant"}),
            (
                "contentBlockStart",
                {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}},
            ),
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}),
            ("contentBlockStop", {"contentBlockIndex": 0}),
            ("messageStop", {"stopReason": "tool_use"}),
            ("metadata", {}),
        ]
    ),
    "ollama-ndjson": b'{"message":{"role":"assistant","content":"hi"},"done":false}\n'
    b'{"message":{"role":"assistant","content":""},"done":true}\n',
}


@st.composite
def _mutated(draw: st.DrawFn) -> tuple[str, bytes, list[int]]:
    dialect = draw(st.sampled_from(sorted(BODIES)))
    body = bytearray(BODIES[dialect])
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(body)))
        how = draw(st.sampled_from(["flip", "cut", "insert", "truncate"]))
        if how == "flip" and at < len(body):
            body[at] ^= draw(st.integers(1, 255))
        elif how == "cut":
            del body[at : at + draw(st.integers(1, 40))]
        elif how == "insert":
            body[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif how == "truncate":
            del body[at:]
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=5)))
    return dialect, bytes(body), cuts


def _pieces(body: bytes, cuts: list[int]) -> list[bytes]:
    edges = [0, *cuts, len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges) if b > a]


def _ids() -> Any:
    count = itertools.count()
    return lambda: f"minted{next(count)}"


def _seen(event: object) -> str:
    if isinstance(event, StreamFailed):
        return f"StreamFailed({type(event.error).__name__}: {event.error})"
    return repr(event)


@settings(max_examples=examples(600), deadline=None)
@given(case=_mutated(), auto=st.booleans())
def test_feed_frames_gives_every_event_feed_gives(
    case: tuple[str, bytes, list[int]], auto: bool
) -> None:
    dialect, body, cuts = case
    name = "auto" if auto else dialect
    plain, framed = (StreamDecoder(name, id_factory=_ids()) for _ in range(2))
    expected: list[object] = []
    got: list[object] = []
    for piece in _pieces(body, cuts):
        expected += plain.feed(piece)
        got += [e for frame in framed.feed_frames(piece) for e in frame.events]
    expected += plain.close()
    got += [e for frame in framed.close_frames() for e in frame.events]
    assert [_seen(e) for e in got] == [_seen(e) for e in expected]
    assert repr(framed.result().error) == repr(plain.result().error)


def test_a_framing_fault_is_a_frame_of_its_own() -> None:
    body = bytearray(BODIES["bedrock-converse"])
    body[1] ^= 0xFF  # the first prelude's length: its CRC fails
    decoder = StreamDecoder("bedrock-converse")
    frames = decoder.feed_frames(bytes(body))
    assert [(f.event, f.data) for f in frames] == [("", "")]
    (failed,) = frames[0].events
    assert isinstance(failed, StreamFailed)
    assert "CRC32" in str(failed.error)
