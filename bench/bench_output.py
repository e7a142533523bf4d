"""Typed output streamed: the partial output read after every delta.

An invoice-like object of about 100 KB and 1 MB is serialized and streamed as
the text of a native structured-output answer, cut into ``--chunk``
characters; after every delta the partial output is read. The readers:

* **partial arguments**: the plain read of the same JSON as streamed tool
  arguments (``LazyPartial.partial_at`` after each fragment, what
  ``ToolCallDelta.partial`` does): the floor;
* **toolwire OutputDelta**: the agent's reader (``OutputStream.deltas`` over
  ``TextDelta`` events, one ``OutputDelta`` each, ``partial`` read);
* **toolwire stream_output**: the same with the partial ``Invoice`` built
  (``OutputStream(build=True)``: each complete value validated once);
* **naive re-parse**: the whole buffer parsed again after each delta with
  pydantic-core's partial JSON parser (``from_json(allow_partial=True)``,
  in Rust): what a reader without an incremental parser does;
* **pydantic partial validation**: the buffer validated again after each
  delta (``TypeAdapter.validate_json(experimental_allow_partial=True)``),
  the method pydantic-ai's streamed output uses;
* **pydantic-ai**: its own streamed output, when it is installed (the
  ``bench`` extra): an ``Agent`` over a ``FunctionModel`` streaming the same
  pieces as its answer (``PromptedOutput(Invoice)``), read with
  ``stream_output(debounce_by=None)``, which validates the partial text again
  after each delta (quadratic: left out with ``--skip-quadratic``).

Each figure is the best of ``--runs`` runs; the table gives the seconds and
the ratios (to the floor, and 1 MB over 100 KB: linear is about 10).

    python bench/bench_output.py [--chunk 256] [--runs 3] [--skip-quadratic] [--pydantic-ai]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import from_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from toolwire.agent._output import output_spec
from toolwire.agent._typed import OutputStream
from toolwire.events import TextDelta
from toolwire.stream.partial import LazyPartial


class Item(BaseModel):
    name: str
    note: str
    qty: int
    price: float


class Invoice(BaseModel):
    number: str
    customer: str
    items: list[Item]
    total: float


def invoice(size: int) -> dict[str, Any]:
    """An invoice whose JSON is about ``size`` bytes."""
    items: list[dict[str, Any]] = []
    body = {"number": "INV-1", "customer": 'Ünïcode & Co "quoted"', "items": items, "total": 0}
    used = len(json.dumps(body))
    i = 0
    while used < size:
        item = {
            "name": f"part {i}",
            "note": "line\n" * (i % 4) + "é" * (i % 9),
            "qty": i % 17,
            "price": round(i * 1.25, 2),
        }
        items.append(item)
        used += len(json.dumps(item)) + 2
        i += 1
    body["total"] = sum(it["price"] for it in items)
    return body


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def floor(pieces: list[str]) -> Any:
    fragments: list[str] = []
    parser = LazyPartial(fragments)
    value = None
    for piece in pieces:
        fragments.append(piece)
        value = parser.partial_at(len(fragments))
    return value


def toolwire_output(pieces: list[str]) -> Any:
    spec = output_spec(Invoice)
    assert spec is not None
    stream = OutputStream(spec, "native", 1, build=False)
    value = None
    for piece in pieces:
        for delta in stream.deltas([TextDelta(text=piece)]):
            value = delta.partial
    return value


def toolwire_partial_objects(pieces: list[str]) -> Any:
    """What ``stream_output`` reads: the partial ``Invoice`` after every delta."""
    spec = output_spec(Invoice)
    assert spec is not None
    stream = OutputStream(spec, "native", 1, build=True)
    value = None
    for piece in pieces:
        for delta in stream.deltas([TextDelta(text=piece)]):
            if delta.output is not None:
                value = delta.output
    return value.model_dump() if value is not None else None


def naive(pieces: list[str]) -> Any:
    buffer = ""
    value = None
    for piece in pieces:
        buffer += piece
        value = from_json(buffer, allow_partial=True)
    return value


_ADAPTER: TypeAdapter[Invoice] = TypeAdapter(Invoice)


def pydantic_partial(pieces: list[str]) -> Any:
    buffer = ""
    value = None
    for piece in pieces:
        buffer += piece
        try:  # a required field not reached yet: no object at this delta (as pydantic-ai)
            value = _ADAPTER.validate_json(buffer, experimental_allow_partial=True)
        except ValidationError:
            continue
    return value.model_dump() if value is not None else None


def pydantic_ai_stream(pieces: list[str]) -> Any:
    """pydantic-ai's streamed output of the same answer, read after every delta."""
    import asyncio

    from pydantic_ai import Agent, PromptedOutput
    from pydantic_ai.models.function import FunctionModel

    async def answer(messages: Any, info: Any) -> Any:
        for piece in pieces:
            yield piece

    agent = Agent(FunctionModel(stream_function=answer), output_type=PromptedOutput(Invoice))

    async def read() -> Any:
        value = None
        async with agent.run_stream("Extract the invoice.") as result:
            async for partial in result.stream_output(debounce_by=None):
                value = partial
        return value

    value = asyncio.run(read())
    return value.model_dump() if value is not None else None


def best(run: Callable[[list[str]], Any], pieces: list[str], runs: int, truth: Any) -> float:
    times = []
    for _ in range(runs):
        gc.collect()  # the previous run's garbage is not this run's cost
        started = time.perf_counter()
        value = run(pieces)
        times.append(time.perf_counter() - started)
        if value != truth:
            raise SystemExit(f"{run.__name__} read a wrong final value")
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunk", type=int, default=256, help="characters per delta")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-quadratic", action="store_true", help="leave out the re-parsers")
    parser.add_argument(
        "--pydantic-ai", action="store_true", help="pydantic-ai's reader even with --skip-quadratic"
    )
    args = parser.parse_args()
    readers: list[tuple[str, Callable[[list[str]], Any]]] = [
        ("partial arguments (floor)", floor),
        ("toolwire OutputDelta", toolwire_output),
        ("toolwire stream_output (partial Invoice)", toolwire_partial_objects),
    ]
    if not args.skip_quadratic:
        readers += [("naive re-parse", naive), ("pydantic partial validation", pydantic_partial)]
    has_pydantic_ai = importlib.util.find_spec("pydantic_ai") is not None
    if has_pydantic_ai and (args.pydantic_ai or not args.skip_quadratic):
        readers.append(("pydantic-ai stream_output", pydantic_ai_stream))
    sizes = {"100 KB": 100_000, "1 MB": 1_000_000}
    seconds: dict[tuple[str, str], float] = {}
    for label, size in sizes.items():
        data = invoice(size)
        pieces = chunks(json.dumps(data, ensure_ascii=False), args.chunk)
        truth = Invoice.model_validate(data).model_dump()
        for name, run in readers:
            typed = run in (pydantic_partial, toolwire_partial_objects, pydantic_ai_stream)
            expected = truth if typed else data
            seconds[name, label] = best(run, pieces, args.runs, expected)
    print(
        f"`python bench/bench_output.py --chunk {args.chunk} --runs {args.runs}` on "
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}; "
        f"{args.chunk} characters per delta, the partial read after each."
    )
    print()
    print("| reader | 100 KB | 1 MB | ÷ floor (1 MB) | 1 MB ÷ 100 KB |")
    print("|---|---|---|---|---|")
    for name, _ in readers:
        small, large = seconds[name, "100 KB"], seconds[name, "1 MB"]
        ratio = large / seconds["partial arguments (floor)", "1 MB"]
        print(
            f"| {name} | {small * 1e3:.1f} ms | {large * 1e3:.1f} ms | {ratio:.2f}× | "
            f"{large / small:.1f} |"
        )
    if not has_pydantic_ai:
        print("| pydantic-ai | not installed | | | |")


if __name__ == "__main__":
    main()
