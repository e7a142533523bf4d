"""The speed tricks outside the core, each against its plain version: the agent's CPU per run.

A trick stays only while this benchmark shows it saving a share of a run
worth its code (about 3% or more), and a differential test holds it to the
plain version's behaviour.

The conversation is the agent benchmark's (``_agents.py``: two parallel
tool calls streamed in 4-character fragments, the tools run, a streamed
answer), held by one :class:`toolwire.Agent` against the emulation server in
a process of its own. In this one process, batches of runs alternate between
toolwire as it is and toolwire with a trick put back to its plain version:

* ``request``: each request built and sent by the pool's ``httpx.AsyncClient``
  (``client.send(client.build_request(...))``) instead of going straight to
  its connection pool (``toolwire.http._pools.DirectPools``).

Two more tricks were measured here and went (see ``docs/benchmarks.md``): a
cancel scope of its own for the transport's deadline in place of
``anyio.fail_after``, and a coroutine driven by hand in the tool scheduler.

Each repetition runs one batch of every variant (in a rotating order) and
takes each variant's process CPU time over the batch of ``as is``'s; the
figures are the medians of those ratios over the repetitions, and their
spread. CPU time, not wall time: the machine is shared, and other processes
holding a core do not count in it.

    python bench/bench_tricks.py                            # 1 and 50 at a time
    python bench/bench_tricks.py --repeats 61 --runs 50 --concurrency 50
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import toolwire  # noqa: F401
except ImportError:  # a clone that was not installed: use its sources
    sys.path.insert(0, str(HERE.parent / "src"))

from _agents import API_KEY, MODEL, PROMPT, VARIANTS, _tools, scenario  # noqa: E402
from _serve import serve_process  # noqa: E402

AS_IS = "as is"
TRICKS = ("request",)
VARIANT_NAMES = (AS_IS, *TRICKS)


class Switches:
    """Puts each trick back to its plain version, and back again."""

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        self._direct = transport._direct

    @contextmanager
    def plain(self, names: set[str]) -> Iterator[None]:
        if "request" in names:
            self._transport._direct = None
        try:
            yield
        finally:
            self._transport._direct = self._direct


def plain_names(variant: str) -> set[str]:
    return set() if variant == AS_IS else {variant}


async def measure(url: str, args: argparse.Namespace, log: Callable[[str], None]) -> dict:
    """Per concurrency: each variant's median CPU ratio to ``as is``, its spread,
    and ``as is``'s median CPU per run."""
    import toolwire
    from toolwire.http.transport import HttpxTransport
    from toolwire.providers import OpenAIChat

    variant = VARIANTS["small"]
    transport = HttpxTransport()
    agent = toolwire.Agent(
        OpenAIChat(base_url=url, api_key=API_KEY),
        model=MODEL,
        tools=[toolwire.tool(fn) for fn in _tools(variant)],
        journal=False,
        transport=transport,
    )
    switches = Switches(transport)

    async def lane(count: int) -> None:
        for _ in range(count):
            result = await agent.run(PROMPT)
            if result.output != variant.expected:
                raise SystemExit(f"wrong answer: {result.output!r}")

    async def batch(runs: int, concurrency: int) -> float:
        gc.collect()
        c0 = time.process_time()
        per_lane, extra = divmod(runs, concurrency)
        await asyncio.gather(*(lane(per_lane + (i < extra)) for i in range(concurrency)))
        return (time.process_time() - c0) / runs

    out: dict = {}
    try:
        for concurrency in args.concurrency:
            runs = max(args.runs, concurrency)
            names = args.variants
            for name in names:  # the warm-up: imports, connections, schemas
                with switches.plain(plain_names(name)):
                    await batch(concurrency, concurrency)
            ratios: dict[str, list[float]] = {name: [] for name in names[1:]}
            base: list[float] = []
            for rep in range(args.repeats):
                k = rep % len(names)
                order = names[k:] + names[:k]
                cpu = {}
                for name in order:
                    with switches.plain(plain_names(name)):
                        cpu[name] = await batch(runs, concurrency)
                base.append(cpu[AS_IS])
                for name in ratios:
                    ratios[name].append(cpu[name] / cpu[AS_IS])
            out[concurrency] = {"as_is": statistics.median(base), "ratios": ratios}
            log(f"  {concurrency} at a time: done ({args.repeats} repetitions of {runs} runs)")
    finally:
        await agent.aclose()
        await transport.aclose()  # the caller's, which the agent leaves open
    return out


def report(figures: dict, args: argparse.Namespace) -> str:
    lines = [
        f"`python bench/bench_tricks.py --repeats {args.repeats} --runs {args.runs} "
        f"--concurrency {','.join(map(str, args.concurrency))} "
        f"--variants {','.join(args.variants[1:])}`: process CPU per run with the "
        "trick's plain version over toolwire as it is (median of the repetitions, and the "
        "middle half of them).",
        "",
        "| plain version of | " + " | ".join(f"{n} at a time" for n in figures) + " |",
        "|---|" + "---|" * len(figures),
    ]
    for name in args.variants[1:]:
        cells = []
        for fig in figures.values():
            values = sorted(fig["ratios"][name])
            q1, q3 = statistics.quantiles(values, n=4)[0::2] if len(values) > 1 else values * 2
            cells.append(f"{statistics.median(values):.3f}× ({q1:.3f}–{q3:.3f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    cells = [f"{fig['as_is'] * 1e3:.2f} ms" for fig in figures.values()]
    lines.append("| (as is: CPU per run) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=21, help="repetitions (medians over them)")
    parser.add_argument("--runs", type=int, default=40, help="runs per batch")
    parser.add_argument("--concurrency", default="1,50", help="runs at a time, comma-separated")
    parser.add_argument(
        "--variants", default=",".join(VARIANT_NAMES[1:]), help="plain versions to measure"
    )
    args = parser.parse_args(argv)
    args.variants = [AS_IS, *(v for v in args.variants.split(",") if v in VARIANT_NAMES[1:])]
    args.concurrency = [int(n) for n in args.concurrency.split(",") if n]

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    with serve_process(scenario(VARIANTS["small"])) as base:
        figures = asyncio.run(measure(base + "/v1", args, log))
    print(report(figures, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
