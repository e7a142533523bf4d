"""A 20-tool-call run over a WebSocket and over HTTP: the client's CPU and wall time per run.

One conversation (twenty turns of one ``bump(n)`` call each, its arguments
streamed in 16-character fragments, then an answer quoting the last result)
is held by toolwire's agent against the emulation server (in a process of
its own: ``toolwire serve``), with ``OpenAIResponses()`` (every turn a POST
carrying the whole context, answered by SSE) and with
``OpenAIResponses(transport="websocket")`` (one socket per run, each later
turn continuing the previous response with only the tool's result). Every
run is checked: its answer, and each call run once.

Measured per transport: process CPU time per run (the client's only: the
server's process is not counted) and wall time per run, each the best of
``--rounds`` rounds of ``--runs`` runs one after another, the transports'
rounds interleaved in a shuffled order so that a burst of load hits both.

    python bench/bench_websocket.py                  # 5 rounds of 20 runs
    python bench/bench_websocket.py --quick          # 2 rounds of 5 runs
    python bench/bench_websocket.py --json out.json --readme docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import toolwire
except ImportError:  # a clone that was not installed: use its sources
    sys.path.insert(0, str(HERE.parent / "src"))
    import toolwire

from _serve import serve_process  # noqa: E402

from toolwire import Agent, OpenAIResponses  # noqa: E402

README_START = "<!-- bench-websocket:start -->"
README_END = "<!-- bench-websocket:end -->"
CALLS = 20
TRANSPORTS = ("http", "websocket")


def scenario(calls: int = CALLS) -> dict[str, Any]:
    """``calls`` turns of one call each, then the answer."""
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "bump", "arguments": {"n": n, "note": "x" * 40}}]}
        for n in range(calls)
    ]
    turns.append({"text": "last: {result:bump}"})
    return {"name": "bench-websocket", "turns": turns}


class Client:
    """One transport's agent, and the effects of its runs."""

    def __init__(self, base_url: str, transport: str) -> None:
        self.ran: Counter[int] = Counter()

        @toolwire.tool
        def bump(n: int, note: str) -> str:
            """Count one effect."""
            self.ran[n] += 1
            return f"bumped {n}"

        provider = OpenAIResponses(
            base_url=base_url + "/v1",
            api_key="sk-bench",
            transport="websocket" if transport == "websocket" else None,
        )
        self.agent = Agent(
            provider, model="bench", tools=[bump], journal=False, max_turns=CALLS + 2
        )

    async def run(self) -> None:
        self.ran.clear()
        result = await self.agent.run("count")
        if result.output != f"last: bumped {CALLS - 1}" or self.ran != Counter(range(CALLS)):
            raise AssertionError(f"a wrong run: {result.output!r}, {dict(self.ran)}")


async def measure(base_url: str, rounds: int, runs: int) -> dict[str, dict[str, list[float]]]:
    """Per transport, per round: CPU and wall seconds per run."""
    clients = {name: Client(base_url, name) for name in TRANSPORTS}
    for client in clients.values():  # warm-up: imports, connections, caches
        await client.run()
    figures: dict[str, dict[str, list[float]]] = {n: {"cpu": [], "wall": []} for n in TRANSPORTS}
    order = list(TRANSPORTS)
    for _ in range(rounds):
        random.shuffle(order)
        for name in order:
            gc.collect()
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(runs):
                await clients[name].run()
            figures[name]["cpu"].append((time.process_time() - cpu) / runs)
            figures[name]["wall"].append((time.perf_counter() - wall) / runs)
    for client in clients.values():
        await client.agent.aclose()
    return figures


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def render(figures: dict[str, dict[str, list[float]]], meta: dict[str, Any]) -> str:
    best = {name: {k: min(v) for k, v in row.items()} for name, row in figures.items()}
    lines = [
        f"`{meta['command']}` on {meta['machine']}, Python {meta['python']}; "
        f"load average {meta['load_before']} before, {meta['load_after']} after "
        f"(best of {meta['rounds']} rounds of {meta['runs']} runs; a shared machine).",
        "",
        f"| a run of {CALLS} tool calls | CPU per run | wall per run |",
        "|---|---|---|",
    ]
    titles = {"http": "HTTP (SSE, the whole context each turn)", "websocket": "WebSocket"}
    for name in TRANSPORTS:
        row = best[name]
        lines.append(f"| {titles[name]} | {_ms(row['cpu'])} | {_ms(row['wall'])} |")
    cpu = best["websocket"]["cpu"] / best["http"]["cpu"]
    wall = best["websocket"]["wall"] / best["http"]["wall"]
    lines += [
        "",
        f"Headline: over the WebSocket a run takes {cpu:.2f}× the CPU and {wall:.2f}× "
        "the wall time of the same run over HTTP.",
    ]
    return "\n".join(lines)


def update_readme(path: Path, text: str) -> None:
    """Replace the text between the page's bench-websocket markers."""
    page = path.read_text()
    if README_START not in page or README_END not in page:
        raise SystemExit(f"{path} has no {README_START} ... {README_END} section")
    head, rest = page.split(README_START, 1)
    _old, tail = rest.split(README_END, 1)
    path.write_text(f"{head}{README_START}\n{text}\n{README_END}{tail}")


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds")
    parser.add_argument("--runs", type=int, default=20, help="runs per round and transport")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 5 runs")
    parser.add_argument("--json", type=Path, help="save the raw figures here")
    parser.add_argument("--readme", type=Path, help="put the table in this page")
    args = parser.parse_args(argv)
    rounds, runs = (2, 5) if args.quick else (args.rounds, args.runs)
    load_before = _load()
    with serve_process(scenario()) as base_url:
        figures = asyncio.run(measure(base_url, rounds, runs))
    command = "python bench/bench_websocket.py" + (" --quick" if args.quick else "")
    meta = {
        "command": command,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}",
        "python": platform.python_version(),
        "load_before": load_before,
        "load_after": _load(),
        "rounds": rounds,
        "runs": runs,
    }
    text = render(figures, meta)
    print(text)
    if args.json:
        args.json.write_text(json.dumps({"meta": meta, "figures": figures}, indent=2))
    if args.readme:
        update_readme(args.readme, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
