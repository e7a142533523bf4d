"""Agent benchmark: the client's CPU per run, for toolwire and the frameworks people pick.

One conversation (see ``_agents.py``: two parallel tool calls streamed in
4-character fragments, the tools run, a streamed answer quoting both
results) is held many times against the emulation server, which runs in its
own process (``toolwire serve``), by each client in a process of its own:
the bare-httpx floor, toolwire without and with its journal, openai-agents
and pydantic-ai. Every answer is checked; a client that answers wrong is
reported as wrong, never timed.

Measured per client: process CPU time per run (the verdicts: the machine is
shared, and CPU time does not count the time other processes hold a core)
and wall time per run, with 1 run at a time and with 50 at once, for the
small conversation and for one whose first call carries 100 KB of
arguments. Each cell is the best of ``--rounds`` rounds, each round a fresh
process (imports and a warm-up excluded from the timing), the rounds of all
clients interleaved so that a burst of load hits them alike.

    python bench/bench_agent.py                     # full run, several minutes
    python bench/bench_agent.py --quick             # 1 round, small conversation only
    python bench/bench_agent.py --json out.json --readme docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.util
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import toolwire  # noqa: F401
except ImportError:  # a clone that was not installed: use its sources
    sys.path.insert(0, str(HERE.parent / "src"))

from _agents import CLIENTS, PACKAGES, VARIANTS, Variant, make_client, scenario  # noqa: E402
from _serve import serve_process  # noqa: E402
from bench_stream import fmt_ratio, fmt_time, machine  # noqa: E402

CONCURRENCY = (1, 50)
TITLES = {"small": "two small calls", "100kb": "the first call with 100 KB of arguments"}
README_START = "<!-- bench-agent:start -->"
README_END = "<!-- bench-agent:end -->"
FLOOR = "floor"
TARGETS = {"toolwire": 1.3, "toolwire+journal": 1.5}
"""Most CPU per run, as a multiple of the floor's."""
WORKER_TIMEOUT = 1800
"""Seconds a worker may take (a peer's round of 100 KB runs, 50 at a time, takes minutes)."""
PEER_FACTOR = 5.0
"""How many times cheaper than each peer toolwire (journal off) should be."""


# -- the worker: one client, one round, in its own process --------------------------------


async def _round(name: str, url: str, variant: Variant, concurrency: int, budget: float) -> dict:
    """Warm up, then time about ``budget`` CPU seconds of runs; every answer checked."""
    client = await make_client(name, url, variant)
    wrong: list[str] = []

    async def lane(count: int) -> None:
        for _ in range(count):
            answer = await client.run()
            if answer != variant.expected:
                wrong.append(answer)

    async def batch(runs: int) -> tuple[float, float]:
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        per_lane, extra = divmod(runs, concurrency)
        await asyncio.gather(*(lane(per_lane + (i < extra)) for i in range(concurrency)))
        return time.process_time() - c0, time.perf_counter() - t0

    try:
        cpu, _ = await batch(concurrency)  # imports, connections, schema builds
        estimate = cpu / concurrency
        least = 10 if concurrency == 1 else 4 * concurrency
        if cpu > budget:
            # Heavy runs (100 KB, 50 at a time): the warm-up alone took the
            # budget, so one more batch is measured, without a second estimate.
            least = concurrency
        else:
            cpu, _ = await batch(max(concurrency, 3))
            estimate = cpu / max(concurrency, 3)
        runs = min(max(least, int(budget / max(estimate, 1e-6))), 2000)
        runs -= runs % concurrency
        cpu, wall = await batch(runs)
    finally:
        await client.aclose()
    if wrong:
        return {"status": "wrong", "note": f"{len(wrong)} wrong answers, e.g. {wrong[0][:80]!r}"}
    return {"status": "measured", "runs": runs, "cpu": cpu / runs, "wall": wall / runs}


def worker(args: argparse.Namespace) -> int:
    variant = VARIANTS[args.variant]
    try:
        out = asyncio.run(_round(args.worker, args.url, variant, args.concurrency, args.budget))
    except Exception as exc:
        out = {"status": "failed", "note": f"{type(exc).__name__}: {str(exc)[:160]}"}
    print(json.dumps(out), flush=True)
    return 0


# -- the emulation server, in its own process ---------------------------------------------


@contextmanager
def served(variant: Variant) -> Iterator[str]:
    """``toolwire serve`` in its own process with ``variant``'s script; its OpenAI base URL."""
    with serve_process(scenario(variant)) as base:
        yield base + "/v1"


# -- the run -------------------------------------------------------------------------------


@dataclass
class Cell:
    """One client, one variant, one concurrency: the best of the rounds."""

    status: str = "pending"
    cpu: float | None = None
    wall: float | None = None
    cpus: list[float] = field(default_factory=list[float])
    walls: list[float] = field(default_factory=list[float])
    runs: list[int] = field(default_factory=list[int])
    note: str = ""


def _spawn(name: str, url: str, variant: str, concurrency: int, budget: float) -> dict:
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", name, "--url", url]
    command += ["--variant", variant, "--concurrency", str(concurrency), "--budget", str(budget)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=WORKER_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        return {"status": "failed", "note": f"no result within {WORKER_TIMEOUT} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        return {"status": "failed", "note": (done.stderr.strip().splitlines() or ["?"])[-1]}
    result: dict = json.loads(lines[-1])
    return result


def available_clients() -> tuple[list[str], list[str]]:
    """The clients that can run here, and why the others cannot."""
    names, missing = [], []
    for name in CLIENTS:
        package = PACKAGES.get(name)
        if package and importlib.util.find_spec(package) is None:
            missing.append(f"{name} (not installed: `make bench` installs it)")
        else:
            names.append(name)
    return names, missing


Results = dict[str, dict[str, dict[int, Cell]]]
"""variant -> client -> concurrency -> cell."""


def bench(
    variants: list[str], clients: list[str], rounds: dict[str, int], budget: float, log: Any
) -> Results:
    results: Results = {v: {c: {n: Cell() for n in CONCURRENCY} for c in clients} for v in variants}
    for variant in variants:
        with served(VARIANTS[variant]) as url:
            for round_no in range(rounds[variant]):
                for concurrency in CONCURRENCY:
                    for name in clients:
                        cell = results[variant][name][concurrency]
                        if cell.status in ("wrong", "failed"):
                            continue
                        got = _spawn(name, url, variant, concurrency, budget)
                        if got["status"] != "measured":
                            cell.status, cell.note = got["status"], got["note"]
                        else:
                            cell.status = "measured"
                            cell.cpus.append(got["cpu"])
                            cell.walls.append(got["wall"])
                            cell.runs.append(got["runs"])
                            cell.cpu, cell.wall = min(cell.cpus), min(cell.walls)
                        log(
                            f"  {variant:6s} round {round_no + 1} x{concurrency:<3d} {name:17s} "
                            + _log_cell(got)
                        )
    return results


def _log_cell(got: dict) -> str:
    if got["status"] != "measured":
        return f"{got['status']}: {got['note']}"
    return f"{fmt_time(got['cpu'])} CPU/run, {fmt_time(got['wall'])} wall/run ({got['runs']} runs)"


# -- the report ----------------------------------------------------------------------------


def _cell_text(cell: Cell, floor: Cell | None, what: str) -> str:
    value = cell.cpu if what == "cpu" else cell.wall
    if cell.status != "measured" or value is None:
        return cell.status
    text = fmt_time(value)
    base = None if floor is None else (floor.cpu if what == "cpu" else floor.wall)
    if base and cell is not floor:
        text += f" ({fmt_ratio(value / base)})"
    return text


def render_table(rows: dict[str, dict[int, Cell]]) -> str:
    header = ["client"]
    header += [f"CPU/run, {n} at a time" for n in CONCURRENCY]
    header += [f"wall/run, {n} at a time" for n in CONCURRENCY]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    floor = rows.get(FLOOR, {})
    for name, cells in rows.items():
        out = [name]
        for what in ("cpu", "wall"):
            out += [_cell_text(cells[n], floor.get(n), what) for n in CONCURRENCY]
        lines.append("| " + " | ".join(out) + " |")
    return "\n".join(lines)


def _ratio(rows: dict[str, dict[int, Cell]], a: str, b: str, n: int) -> float | None:
    ca, cb = rows.get(a, {}).get(n), rows.get(b, {}).get(n)
    if ca is None or cb is None or not ca.cpu or not cb.cpu:
        return None
    return ca.cpu / cb.cpu


def verdicts(results: Results) -> list[str]:
    """The goals, each with its figure and a verdict, on CPU time."""
    out = []
    for variant, rows in results.items():
        for name, target in TARGETS.items():
            for n in CONCURRENCY:
                r = _ratio(rows, name, FLOOR, n)
                if r is not None:
                    ok = "met" if r <= target else "NOT met"
                    out.append(
                        f"- {variant}, {n} at a time: {name} / floor = {r:.2f}× CPU "
                        f"(target ≤ {target}×: {ok})"
                    )
        for peer in ("openai-agents", "pydantic-ai"):
            for n in CONCURRENCY:
                r = _ratio(rows, peer, "toolwire", n)
                if r is not None:
                    ok = "met" if r >= PEER_FACTOR else "NOT met"
                    out.append(
                        f"- {variant}, {n} at a time: {peer} / toolwire = {r:.1f}× CPU "
                        f"(target ≥ {PEER_FACTOR:g}×: {ok})"
                    )
    return out


def _rounds_text(rounds: dict[str, int]) -> str:
    parts = [f"{n} round{'s' * (n != 1)} ({TITLES.get(v, v)})" for v, n in rounds.items()]
    return "the best of " + ", ".join(parts) if parts else "the best of 0 rounds"


def _versions() -> str:
    out = []
    for dist in ("toolwire", "httpx", "openai", "openai-agents", "pydantic-ai-slim"):
        try:
            out.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            continue
    return ", ".join(out)


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def report(results: Results, meta: dict[str, Any]) -> str:
    parts = [
        f"`{meta['command']}` on {meta['machine']}; load average {meta['load_before']} before, "
        f"{meta['load_after']} after. Versions: {meta['versions']}.",
        "",
        "The same conversation for every client, against `toolwire serve` in another "
        "process: two parallel tool calls streamed in 4-character fragments, both tools "
        "run, a streamed answer quoting both results (checked on every run). Each client "
        "runs in a process of its own; each cell is "
        f"{_rounds_text(meta['rounds'])}, each of about {meta['budget']:g} CPU seconds of runs "
        "(at least one batch), after a "
        "warm-up, with the ratio to the floor (bare httpx and a naive loop). `floor`: "
        "httpx (its connections in pools of 4, as toolwire's), `json.loads` per SSE "
        "payload, fragments joined per call; `toolwire`: "
        "`Agent.run` without and with the journal (SQLite, a temporary file); "
        "`openai-agents`: `Runner.run_streamed` with every event read (tracing off); "
        "`pydantic-ai`: `Agent.run` with an `event_stream_handler` reading every event.",
    ]
    if meta["missing"]:
        parts += ["", "Not run: " + "; ".join(meta["missing"]) + "."]
    for variant, rows in results.items():
        title = TITLES.get(variant, variant)
        parts += ["", f"**{title}**", "", render_table(rows)]
        notes = [
            f"- {name}, {n} at a time: {cell.note}"
            for name, cells in rows.items()
            for n, cell in cells.items()
            if cell.note
        ]
        parts += ["", *notes] if notes else []
    parts += ["", "Verdicts (process CPU time per run):", "", *verdicts(results)]
    return "\n".join(parts)


def update_readme(path: Path, text: str) -> None:
    """Replace the README's agent-benchmark block (between its markers) with ``text``."""
    readme = path.read_text()
    if README_START not in readme or README_END not in readme:
        raise SystemExit(f"{path} has no {README_START} ... {README_END} block")
    head, rest = readme.split(README_START, 1)
    _old, tail = rest.split(README_END, 1)
    path.write_text(f"{head}{README_START}\n{text}\n{README_END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 round, small conversation")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--heavy-rounds", type=int, default=1, help="rounds of the 100 KB variant (minutes each)"
    )
    parser.add_argument("--budget", type=float, default=2.0, help="CPU seconds per round")
    parser.add_argument("--clients", default=",".join(CLIENTS))
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--json", type=Path, help="save the raw figures here")
    parser.add_argument("--readme", type=Path, help="put the tables in this page")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--variant", help=argparse.SUPPRESS)
    parser.add_argument("--concurrency", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(args)

    variants = ["small"] if args.quick else [v for v in args.variants.split(",") if v]
    rounds = {
        v: 1 if args.quick else args.rounds if v == "small" else args.heavy_rounds for v in variants
    }
    wanted = [c for c in args.clients.split(",") if c]
    names, missing = available_clients()
    clients = [c for c in names if c in wanted]
    command = "python bench/bench_agent.py" + (" --quick" if args.quick else "")

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    meta: dict[str, Any] = {
        "command": command,
        "machine": machine(),
        "versions": _versions(),
        "load_before": _load(),
        "missing": [m for m in missing if m.split(" ")[0] in wanted],
        "rounds": rounds,
        "budget": args.budget,
    }
    results = bench(variants, clients, rounds, args.budget, log)
    meta["load_after"] = _load()
    text = report(results, meta)
    print(text)
    if args.json:
        raw = {
            **meta,
            "results": {
                v: {c: {str(n): asdict(x) for n, x in row.items()} for c, row in rows.items()}
                for v, rows in results.items()
            },
        }
        args.json.write_text(json.dumps(raw, indent=2, ensure_ascii=False) + "\n")
    if args.readme:
        update_readme(args.readme, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
