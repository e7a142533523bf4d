"""Throughput of Bedrock ConverseStream decoding on tiny frames.

Builds ``--mb`` MB of AWS event-stream messages, each a ``contentBlockDelta``
of a few characters (text, or a tool call's argument fragment, as token
streaming cuts them), and decodes them with ``StreamDecoder`` fed 64 KiB
pieces (what an HTTP client hands over), printing MB/s for the framing
alone (``EventStreamDecoder.feed_pairs``) and for the whole decoder.

    PYTHONPATH=src python bench/bedrock_frames.py [--mb 50] [--kind text|args|ping]
"""

from __future__ import annotations

import argparse
import json
import time

from toolwire import StreamDecoder
from toolwire.stream.framing.eventstream import EventStreamDecoder, event_message

PIECE = 64 * 1024


def body(mb: float, kind: str) -> bytes:
    """About ``mb`` MB of one ConverseStream turn of tiny frames."""
    head = [
        event_message("messageStart", b'{"role":"assistant"}'),
        event_message(
            "contentBlockStart",
            b'{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t1","name":"f"}}}',
        ),
    ]
    if kind == "args":
        first = event_message(
            "contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\\"a\\":\\""}}}'
        )
        tiny = event_message(
            "contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"toolUse":{"input":"abc"}},"p":"x"}'
        )
        last = event_message(
            "contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"toolUse":{"input":"\\"}"}}}'
        )
        head.append(first)
    elif kind == "text":
        head = head[:1]
        tiny = event_message("contentBlockDelta", b'{"contentBlockIndex":0,"delta":{"text":"ab"}}')
        last = b""
    else:
        head = head[:1]
        tiny = event_message("ping", b"{}")
        last = b""
    end = [
        event_message("contentBlockStop", b'{"contentBlockIndex":0}'),
        event_message("messageStop", json.dumps({"stopReason": "tool_use"}).encode()),
        event_message("metadata", b'{"usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}'),
    ]
    count = int(mb * 1_000_000) // len(tiny)
    return b"".join(head) + tiny * count + last + b"".join(end)


def _rate(size: int, seconds: float) -> str:
    return f"{size / seconds / 1e6:8.1f} MB/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--kind", choices=["text", "args", "ping"], default="args")
    args = parser.parse_args()
    data = body(args.mb, args.kind)
    pieces = [data[i : i + PIECE] for i in range(0, len(data), PIECE)]
    frames = EventStreamDecoder()
    start = time.perf_counter()
    for piece in pieces:
        frames.feed_pairs(piece)
    framing = time.perf_counter() - start
    decoder = StreamDecoder("bedrock-converse")
    start = time.perf_counter()
    for piece in pieces:
        decoder.feed(piece)
    decoder.close()
    whole = time.perf_counter() - start
    assert decoder.error is None, decoder.error
    print(f"{len(data) / 1e6:.1f} MB of {args.kind} frames of {len(body(0.001, args.kind)) // 10} bytes or so")
    print(f"framing (feed_pairs) {_rate(len(data), framing)}")
    print(f"StreamDecoder.feed   {_rate(len(data), whole)}  ({decoder.short_path_deltas} deltas matched)")


if __name__ == "__main__":
    main()
