"""Throughput of Bedrock ConverseStream decoding on tiny frames.

Builds ``--mb`` MB of AWS event-stream messages, each a ``contentBlockDelta``
of a few characters (text, or a tool call's argument fragment, as token
streaming cuts them; or ``ping`` events, kept as unknown items), and decodes
them with ``StreamDecoder`` fed ``--read`` bytes at a time (64 KiB: what an
HTTP client hands over from a busy socket). It prints MB/s of CPU time (a
shared machine's other load does not count) for the framing alone
(``EventStreamDecoder.feed_pairs``) and for the whole decoder.

    PYTHONPATH=src python bench/bedrock_frames.py [--mb 50] [--kind text|args|ping] [--read N]
"""

from __future__ import annotations

import argparse
import time

from toolwire import StreamDecoder
from toolwire.stream.framing.eventstream import EventStreamDecoder, event_message

_DELTA = "contentBlockDelta"
_START = event_message("messageStart", b'{"role":"assistant"}')
_TOOL = event_message(
    "contentBlockStart",
    b'{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t1","name":"f"}}}',
)
_ARGS = b'{"contentBlockIndex":0,"delta":{"toolUse":{"input":"%s"}},"p":"x"}'
_END = b"".join(
    [
        event_message("contentBlockStop", b'{"contentBlockIndex":0}'),
        event_message("messageStop", b'{"stopReason":"tool_use"}'),
        event_message("metadata", b'{"usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}'),
    ]
)


def frames(kind: str) -> tuple[bytes, bytes, bytes]:
    """The head, the tiny frame repeated, and the tail of a turn of ``kind``."""
    if kind == "args":
        head = _START + _TOOL + event_message(_DELTA, _ARGS % b'{\\"a\\":\\"')
        return head, event_message(_DELTA, _ARGS % b"abc"), event_message(_DELTA, _ARGS % b'\\"}')
    if kind == "text":
        text = b'{"contentBlockIndex":0,"delta":{"text":"ab"}}'
        return _START, event_message(_DELTA, text), b""
    return _START, event_message("ping", b"{}"), b""


def body(mb: float, kind: str) -> tuple[bytes, int]:
    """About ``mb`` MB of one ConverseStream turn, and the size of its tiny frame."""
    head, tiny, last = frames(kind)
    count = int(mb * 1_000_000) // len(tiny)
    return head + tiny * count + last + _END, len(tiny)


def _rate(size: int, seconds: float) -> str:
    return f"{size / seconds / 1e6:8.1f} MB/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--kind", choices=["text", "args", "ping"], default="text")
    parser.add_argument("--read", type=int, default=64 * 1024)
    args = parser.parse_args()
    data, frame = body(args.mb, args.kind)
    pieces = [data[i : i + args.read] for i in range(0, len(data), args.read)]
    framing = EventStreamDecoder()
    start = time.process_time()
    for piece in pieces:
        framing.feed_pairs(piece)
    framed = time.process_time() - start
    decoder = StreamDecoder("bedrock-converse")
    start = time.process_time()
    for piece in pieces:
        decoder.feed(piece)
    decoder.close()
    whole = time.process_time() - start
    size = f"{len(data) / 1e6:.1f} MB"
    print(f"{size} of {args.kind} frames of {frame} bytes, {args.read}-byte reads")
    print(f"framing (feed_pairs) {_rate(len(data), framed)}")
    print(f"StreamDecoder.feed   {_rate(len(data), whole)}  error: {decoder.error}")


if __name__ == "__main__":
    main()
