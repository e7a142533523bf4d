"""Throughput of toolwire's SSE decoder on a large streamed tool call.

Decodes one OpenAI chat-completions body whose single tool call carries
``--size`` bytes of arguments (about 6 characters per event, as token
streaming cuts them) and compares, in the same run:

* ``SSEDecoder`` fed 64 KiB pieces (what an HTTP client typically hands over);
* ``SSEDecoder`` fed one event per piece (a server flushing every event);
* a naive ``for line in body.split(b"\\n")`` loop that only picks ``data:``
  lines, the floor for any line-based Python decoder (it handles neither CR
  line ends nor split pieces);
* the OpenAI SDK's ``SSEDecoder``, when it is installed.

The body comes from ``gen.openai_sse`` when a ``gen.py`` generator is found
(next to this script, or given with ``--gen``), else from a built-in generator
of the same shape.

    python bench/bench_framing.py [--size 1000000] [--repeat 3] [--gen path/to/gen.py]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from toolwire.sse import SSEDecoder

PIECE = 64 * 1024


def builtin_openai_sse(n_bytes: int) -> bytes:
    """An OpenAI chat-completions SSE body with one tool call of n_bytes of arguments."""
    base = {
        "id": "chatcmpl-0123456789abcdef",
        "object": "chat.completion.chunk",
        "created": 1_750_000_000,
        "model": "gpt-4.1-2025-04-14",
        "system_fingerprint": "fp_b3f1157249",
    }
    content = ('def f(x):\n    return "héllo \\"wörld\\"" + x  # 🚀\n' * (n_bytes // 40 + 1))[
        :n_bytes
    ]
    arguments = json.dumps({"path": "a.py", "content": content}, ensure_ascii=False)
    events = []
    for i in range(0, len(arguments), 6):
        delta = {"tool_calls": [{"index": 0, "function": {"arguments": arguments[i : i + 6]}}]}
        chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        events.append(
            b"data: " + json.dumps(chunk, ensure_ascii=False, separators=(",", ":")).encode()
        )
    events.append(b"data: [DONE]")
    return b"\n\n".join(events) + b"\n\n"


def load_body(n_bytes: int, gen_path: Path | None) -> tuple[bytes, str]:
    candidates = [gen_path] if gen_path else [Path(__file__).with_name("gen.py")]
    for path in candidates:
        if path is not None and path.is_file():
            spec = importlib.util.spec_from_file_location("gen", path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            body, _calls = module.openai_sse(n_bytes)
            return body, f"gen.openai_sse({n_bytes:_}) from {path}"
    return builtin_openai_sse(n_bytes), f"built-in generator ({n_bytes:_} bytes of arguments)"


def toolwire_pieces(pieces: list[bytes]) -> int:
    decoder = SSEDecoder()
    count = 0
    for piece in pieces:
        count += len(decoder.feed(piece))
    return count + len(decoder.close())


def naive_split(body: bytes) -> int:
    count = 0
    for line in body.split(b"\n"):
        if line.startswith(b"data: "):
            line[6:].decode()
            count += 1
    return count


def openai_sdk(pieces: list[bytes]) -> int:
    from openai._streaming import SSEDecoder as OpenAIDecoder

    return sum(1 for _ in OpenAIDecoder().iter_bytes(iter(pieces)))


def best_of(repeat: int, fn: Callable[[], int]) -> tuple[float, int]:
    best = float("inf")
    count = 0
    for _ in range(repeat):
        start = time.perf_counter()
        count = fn()
        best = min(best, time.perf_counter() - start)
    return best, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="argument bytes")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--gen", type=Path, default=None, help="path to a gen.py generator")
    args = parser.parse_args()

    body, origin = load_body(args.size, args.gen)
    chunks = [body[i : i + PIECE] for i in range(0, len(body), PIECE)]
    per_event = [event + b"\n\n" for event in body.split(b"\n\n")[:-1]]
    assert b"".join(per_event) == body
    print(f"body: {origin}: {len(body):_} bytes, {len(per_event):_} events")

    rows: list[tuple[str, Callable[[], int]]] = [
        ("naive split(b'\\n') loop", lambda: naive_split(body)),
        ("toolwire SSEDecoder, 64 KiB pieces", lambda: toolwire_pieces(chunks)),
        ("toolwire SSEDecoder, one event per piece", lambda: toolwire_pieces(per_event)),
    ]
    if importlib.util.find_spec("openai") is not None:
        rows += [
            ("openai SDK SSEDecoder, 64 KiB pieces", lambda: openai_sdk(chunks)),
            ("openai SDK SSEDecoder, one event per piece", lambda: openai_sdk(per_event)),
        ]
    baseline = None
    for name, fn in rows:
        seconds, count = best_of(args.repeat, fn)
        baseline = baseline or seconds
        mb_s = len(body) / seconds / 1e6
        print(
            f"{name:44s} {seconds * 1000:8.1f} ms  {mb_s:7.1f} MB/s  "
            f"{count / seconds / 1e6:5.2f} M events/s  x{seconds / baseline:4.2f} naive"
        )
        if count != len(per_event):
            sys.exit(f"{name}: {count} events, expected {len(per_event)}")


if __name__ == "__main__":
    main()
