"""What ``toolwire.adapters`` costs per chunk, next to what the SDK already costs.

One streamed tool call of ``--size`` bytes of arguments, about 6 characters
per chunk as token streaming cuts them, in OpenAI chat-completions and
Anthropic Messages shapes. Measured in the same run, per chunk:

* ``StreamDecoder`` fed the raw SSE bytes (toolwire without an SDK);
* the SDK building its model from the parsed payload, as its stream does
  (``model_construct``, which is what the SDK's lenient ``construct`` does),
  for scale: the SDK user pays it already;
* the adapter over those models, and its parts: ``model_dump`` back to the
  payload, ``jsonio.dumps`` to text, and the codec plus accumulator.

The ``dumps`` line is the most a dict-taking codec entry point could save
(plus the codec's own ``loads``), which is why the adapter does not need one.

    python bench/bench_adapters.py [--size 300000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import toolwire.adapters as adapters
from toolwire import StreamDecoder
from toolwire.stream.accumulate import Accumulator
from toolwire.stream.codecs import codec_for
from toolwire.stream.codecs.sdk import type_first
from toolwire.stream.jsonio import dumps


def arguments(n_bytes: int) -> str:
    content = ('def f(x):\n    return "héllo \\"wörld\\"" + x  # 🚀\n' * (n_bytes // 40 + 1))[
        :n_bytes
    ]
    return json.dumps({"path": "a.py", "content": content}, ensure_ascii=False)


def chat_payloads(n_bytes: int) -> list[dict[str, Any]]:
    base = {
        "id": "chatcmpl-0123456789abcdef",
        "object": "chat.completion.chunk",
        "created": 1_750_000_000,
        "model": "gpt-4.1-2025-04-14",
        "system_fingerprint": "fp_b3f1157249",
    }
    text = arguments(n_bytes)
    opener = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "write"}}
    out = [{**base, "choices": [{"index": 0, "delta": {"tool_calls": [opener]}}]}]
    for i in range(0, len(text), 6):
        delta = {"tool_calls": [{"index": 0, "function": {"arguments": text[i : i + 6]}}]}
        out.append({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return out


def anthropic_payloads(n_bytes: int) -> list[dict[str, Any]]:
    text = arguments(n_bytes)
    block = {"type": "tool_use", "id": "toolu_1", "name": "write", "input": {}}
    out: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude",
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
        {"type": "content_block_start", "index": 0, "content_block": block},
    ]
    for i in range(0, len(text), 6):
        delta = {"type": "input_json_delta", "partial_json": text[i : i + 6]}
        out.append({"type": "content_block_delta", "index": 0, "delta": delta})
    out += [
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 100},
        },
        {"type": "message_stop"},
    ]
    return out


def sse_body(dialect: str, payloads: list[dict[str, Any]]) -> bytes:
    frames = []
    for p in payloads:
        head = f"event: {p['type']}\n" if dialect == "anthropic-messages" else ""
        frames.append(f"{head}data: {dumps(p)}\n\n")
    if dialect == "openai-chat":
        frames.append("data: [DONE]\n\n")
    return "".join(frames).encode()


def models(dialect: str, payloads: list[dict[str, Any]]) -> list[Any]:
    if dialect == "openai-chat":
        from openai.types.chat import ChatCompletionChunk

        return [ChatCompletionChunk.model_construct(**p) for p in payloads]
    import anthropic.types as t

    classes = {
        "message_start": t.RawMessageStartEvent,
        "content_block_start": t.RawContentBlockStartEvent,
        "content_block_delta": t.RawContentBlockDeltaEvent,
        "content_block_stop": t.RawContentBlockStopEvent,
        "message_delta": t.RawMessageDeltaEvent,
        "message_stop": t.RawMessageStopEvent,
    }
    return [classes[p["type"]].model_construct(**p) for p in payloads]


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def run(dialect: str, size: int, repeat: int) -> None:
    payloads = chat_payloads(size) if dialect == "openai-chat" else anthropic_payloads(size)
    body = sse_body(dialect, payloads)
    objs = models(dialect, payloads)
    dumped = [o.model_dump(mode="json", by_alias=True, exclude_unset=True) for o in objs]
    assert dumped == payloads, "model_dump does not give the payload back"
    # As the adapter feeds them: "type" first where the wire has it.
    framed = [type_first(p) if dialect != "openai-chat" else ("message", p) for p in dumped]
    texts = [dumps(p) for _, p in framed]
    event_names = [event for event, _ in framed]
    n = len(payloads)

    def decoder() -> None:
        d = StreamDecoder(dialect)
        d.feed(body)
        d.close()
        assert d.result().complete

    def adapter() -> None:
        events = adapters.AdaptedStream(objs, dialect)
        for _ in events:
            pass
        assert events.result().tool_calls

    def construct() -> None:
        models(dialect, payloads)

    def model_dump() -> None:
        for o in objs:
            o.model_dump(mode="json", by_alias=True, exclude_unset=True, warnings=False)

    def json_dumps() -> None:
        for p in dumped:
            dumps(p)

    def codec_and_accumulator() -> None:
        codec = codec_for(dialect)
        acc = Accumulator()
        out: list[Any] = []
        for event, text in zip(event_names, texts, strict=True):
            acc.apply(codec.decode(event, text), out)
        acc.close(out)

    print(f"\n{dialect}: {n:_} chunks, {len(body):_} bytes of SSE")
    rows = [
        ("StreamDecoder on the raw bytes", decoder),
        ("SDK builds its models (model_construct)", construct),
        ("adapter over the SDK models", adapter),
        ("  of which model_dump", model_dump),
        ("  of which jsonio.dumps", json_dumps),
        ("  of which codec + accumulator", codec_and_accumulator),
    ]
    base = None
    for label, fn in rows:
        seconds = best(fn, repeat)
        per_chunk = seconds / n * 1e6
        base = base or seconds
        print(f"  {label:<42} {per_chunk:7.2f} us/chunk  {seconds / base:5.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for dialect in ("openai-chat", "anthropic-messages"):
        run(dialect, args.size, args.repeat)


if __name__ == "__main__":
    main()
