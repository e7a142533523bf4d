"""Many distinct tool calls in one stream: the cost of opening a call.

A stream of ``n`` calls, each with its own id and index and a small
argument object (OpenAI chat-completions chunks, one call per chunk), decoded
by toolwire from the body bytes to the final result; each run is checked
(``n`` ready calls, each with its own arguments). The figure to read is the
time per call as ``n`` grows, and the exponent of the growth between the two
largest sizes: 1.0 is linear. CPU time, best of a few runs, the garbage
collector on, as users have it.
"""

from __future__ import annotations

import gc
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from toolwire import StreamDecoder

__all__ = ["ManyCalls", "bench_many_calls", "render_many_calls"]

FULL_SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 10_000, 30_000)


@dataclass(frozen=True)
class ManyCalls:
    """One measured size."""

    calls: int
    cpu: float
    """Best process CPU time, seconds."""


def _body(n: int) -> bytes:
    pieces = []
    for k in range(n):
        call = {"index": k, "id": f"call_{k:08d}", "type": "function"}
        call["function"] = {"name": "lookup", "arguments": json.dumps({"k": k})}
        chunk = {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"tool_calls": [call]}}],
        }
        pieces.append(b"data: " + json.dumps(chunk).encode() + b"\n\n")
    end = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
    }
    pieces.append(b"data: " + json.dumps(end).encode() + b"\n\ndata: [DONE]\n\n")
    return b"".join(pieces)


def _decode(body: bytes, n: int) -> None:
    decoder = StreamDecoder("openai-chat")
    for start in range(0, len(body), 65536):
        decoder.feed(body[start : start + 65536])
    decoder.close()
    calls = decoder.result().tool_calls
    if len(calls) != n or calls[-1].arguments != {"k": n - 1}:
        raise AssertionError(f"many calls: {len(calls)} of {n} decoded")


def bench_many_calls(sizes: tuple[int, ...], log: Callable[[str], None]) -> list[ManyCalls]:
    """Measure each size; a few runs each, the best kept."""
    rows = []
    for n in sizes:
        body = _body(n)
        best = math.inf
        for _ in range(3 if n >= 50_000 else 5):
            gc.collect()
            start = time.process_time()
            _decode(body, n)
            best = min(best, time.process_time() - start)
        log(f"many calls: {n} in {best:.3f} s CPU")
        rows.append(ManyCalls(n, best))
    return rows


def render_many_calls(rows: list[ManyCalls]) -> str:
    """A markdown table, and the growth exponent between the two largest sizes."""
    lines = [
        "**Many distinct calls** (OpenAI chat, one small call per chunk) — process CPU time",
        "",
        "| calls | CPU time | per call |",
        "|---|---|---|",
    ]
    for row in rows:
        lines.append(f"| {row.calls:,} | {row.cpu:.3f} s | {row.cpu / row.calls * 1e6:.1f} µs |")
    if len(rows) >= 2:
        a, b = rows[-2], rows[-1]
        exponent = math.log(b.cpu / a.cpu) / math.log(b.calls / a.calls)
        lines += [
            "",
            f"From {a.calls:,} to {b.calls:,} calls the time grows as n^{exponent:.2f} "
            "(1.00 is linear; what is left above it is the garbage collector's full "
            "collections over the growing result).",
        ]
    return "\n".join(lines)
