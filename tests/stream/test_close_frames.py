"""``close_frames()`` reports each event once: the events of a last payload
flushed at the end (no trailing newline) are in its frame, not again in the
end frame."""

from __future__ import annotations

import json

import pytest

from toolwire.stream.decoder import StreamDecoder


def payload(data: dict[str, object]) -> bytes:
    return b"data: " + json.dumps(data).encode()


def call_delta(arguments: str, *, first: bool) -> dict[str, object]:
    head: dict[str, object] = {"index": 0, "function": {"arguments": arguments}}
    if first:
        head = {"index": 0, "id": "c1", "function": {"name": "f", "arguments": arguments}}
    return {"choices": [{"index": 0, "delta": {"tool_calls": [head]}}]}


FINISH = {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}


@pytest.mark.parametrize("newline", [b"", b"\n", b"\n\n"])
@pytest.mark.parametrize(
    "last",
    [
        [call_delta('{"a": ', first=True), call_delta("1}", first=False)],
        [call_delta('{"a": 1}', first=True), FINISH],
    ],
)
def test_each_event_once(newline: bytes, last: list[dict[str, object]]) -> None:
    body = b"\n\n".join(payload(p) for p in last) + newline
    plain = StreamDecoder("openai-chat")
    expected = [type(e).__name__ for e in plain.feed(body) + plain.close()]
    framed = StreamDecoder("openai-chat")
    frames = framed.feed_frames(body) + framed.close_frames()
    got = [type(e).__name__ for frame in frames for e in frame.events]
    assert got == expected
    assert got.count("ToolCallReady") == 1
