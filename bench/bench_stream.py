"""Streaming benchmark: toolwire side by side with the libraries users would otherwise pick.

One run decodes the same synthetic streams (one ``write_file`` call whose
arguments are 1 KB to 1 MB of source code, cut into 4-8 character fragments,
plus 8 parallel calls of 10 KB) in the OpenAI chat-completions and the
Anthropic Messages formats, with every runner of ``_peers.py``: toolwire with
and without partial values, a naive loop, the openai and anthropic SDKs'
stream helpers, langchain-core chunk folding, litellm's chunk builder and
jiter's per-chunk partial re-parse; and in Bedrock's ConverseStream (AWS's
binary event stream), toolwire beside a naive loop. Each runner starts from the body bytes
(parsing SSE and JSON is part of everyone's work) and its result is checked
against the generator's ground truth on every run: a wrong result is
reported, never timed.

Timing: wall clock (``time.perf_counter``) and process CPU time
(``time.process_time``; the machine may be shared), best of N runs, N chosen
from the first run's duration. Runs of different runners at one size are
interleaved so that a burst of load hits them alike. The garbage collector
stays on (users have it on) but is emptied before each run, and the objects
of the imported libraries are frozen out of it (``gc.freeze``) so that no
runner pays for scanning another library's modules.

A runner whose time at the next size is projected (from its last two
measured sizes, see :func:`project`) to exceed ``--cap`` seconds (30 by
default) is not run there nor at larger sizes: the table shows the
projection, marked ``~``. A run that overshoots twice the cap anyway is
stopped by an alarm. A last table decodes streams of 1,000 to 100,000
distinct calls (``_many_calls.py``): the cost of opening a call must not grow
with the calls before it. The whole run takes about five minutes on two cores.

    python bench/bench_stream.py                     # full run, a few minutes
    python bench/bench_stream.py --quick             # sizes up to 100 KB
    python bench/bench_stream.py --json out.json --readme docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from types import FrameType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import toolwire  # noqa: F401
except ImportError:  # a clone that was not installed: use its sources
    sys.path.insert(0, str(HERE.parent / "src"))

from _many_calls import (  # noqa: E402
    FULL_SIZES,
    QUICK_SIZES,
    ManyCalls,
    bench_many_calls,
    render_many_calls,
)
from _peers import FORMATS, Runner, available_runners, missing_runners  # noqa: E402
from _streams import Generator, load_generator  # noqa: E402

KB = 1000
MB = 1000 * KB
DEFAULT_CAP = 30.0


@dataclass(frozen=True)
class Case:
    """One stream shape: ``k`` calls of ``n_bytes`` of arguments each."""

    label: str
    n_bytes: int
    k: int = 1


FULL_CASES = (
    Case("1 KB", KB),
    Case("10 KB", 10 * KB),
    Case("100 KB", 100 * KB),
    Case("1 MB", MB),
    Case("8 × 10 KB", 10 * KB, 8),
)
QUICK_CASES = tuple(c for c in FULL_CASES if c.n_bytes * c.k <= 100 * KB)


@dataclass
class Cell:
    """The figures of one runner on one case."""

    status: str = "pending"
    """``measured``, ``projected``, ``stopped`` (by the alarm: ``wall`` is a lower
    bound), ``wrong`` or ``n/a``."""
    wall: float | None = None
    """Best wall time in seconds (the projection for ``projected``)."""
    cpu: float | None = None
    """Best process CPU time in seconds (projected alike)."""
    walls: list[float] = field(default_factory=list[float])
    cpus: list[float] = field(default_factory=list[float])
    note: str = ""

    @property
    def repeats(self) -> int:
        return len(self.walls)


class _Overtime(Exception):
    pass


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise _Overtime


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    # Pure-Python peers can take minutes at 1 MB; SIGALRM interrupts them
    # between bytecodes. Not available off POSIX: then only the projection guards.
    if not hasattr(signal, "setitimer"):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def fit_exponent(n1: float, t1: float, n2: float, t2: float) -> float:
    """The ``p`` of ``t = a * n**p`` through two measurements."""
    return math.log(t2 / t1) / math.log(n2 / n1)


@dataclass(frozen=True)
class Projection:
    """A runner's expected time at a size it was not run at."""

    time: float
    """From ``t = a*n + b*n**2`` (see :func:`project`): what the table shows."""
    exponent: float
    """The growth exponent from the last measured size to this projection."""
    low: float
    """From the power law ``t = c*n**p``: a lower estimate, used to decide whether
    to run at all."""


def project(points: list[tuple[int, float]], n: int) -> Projection | None:
    """Time at size ``n`` from the last two ``(size, time)`` points.

    The peers' cost is a per-chunk part (linear in the size) plus, for most of
    them, a re-parse of the whole buffer per chunk (quadratic), and at small
    sizes the linear part hides the quadratic one. Checked against runs at
    1 MB: a power law through 10 KB and 100 KB predicted 36 s for the openai
    SDK (95 s measured), 12 s for the anthropic SDK (39 s) and 35 s for the
    jiter re-parse (65 s), while ``t = a*n + b*n**2`` through the same two
    points predicted 79 s, 34 s and 61 s. That fit is the projection shown;
    it falls back to the power law when it is not a growing cost (``a`` or
    ``b`` negative). It overshoots a runner that is nearly linear but
    superlinear between the two points (litellm: 61 s projected, 19 s
    measured), so whether to run at all is decided on the power law, the
    lower of the two, and such runners are measured.
    """
    if len(points) < 2:
        return None
    (n1, t1), (n2, t2) = points[-2], points[-1]
    if n1 == n2 or t1 <= 0 or t2 <= 0:
        return None
    low = t2 * (n / n2) ** fit_exponent(n1, t1, n2, t2)
    # a*n1 + b*n1**2 = t1 and a*n2 + b*n2**2 = t2
    b = (t2 / n2 - t1 / n1) / (n2 - n1)
    a = t1 / n1 - b * n1
    t = a * n + b * n * n if a >= 0 and b >= 0 else low
    return Projection(t, fit_exponent(n2, t2, n, t), min(low, t))


def _expected(calls: list[dict[str, str]]) -> list[Any]:
    return [json.loads(call["arguments"]) for call in calls]


def _check(runner: Runner, body: bytes, expected: list[Any]) -> str | None:
    """Why the runner's result is wrong, or ``None``."""
    try:
        got = runner.run(body)
    except Exception as exc:
        return f"raised {type(exc).__name__}: {str(exc)[:120]}"
    if got != expected:
        return f"returned {len(got)} calls, not the {len(expected)} expected values"
    return None


def _time_once(
    runner: Runner, body: bytes, expected: list[Any], *, collect: bool = True
) -> tuple[float, float, str | None]:
    if collect:
        gc.collect()
    c0 = time.process_time()
    t0 = time.perf_counter()
    try:
        got = runner.run(body)
    except _Overtime:
        raise
    except Exception as exc:
        return 0.0, 0.0, f"raised {type(exc).__name__}: {str(exc)[:120]}"
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    if got != expected:
        return wall, cpu, "wrong result"
    return wall, cpu, None


@dataclass
class Settings:
    cases: tuple[Case, ...]
    cap: float
    budget: float
    """Seconds of repeats per runner and case (after the first run)."""
    max_repeats: int
    min_repeats: int
    collect: bool = True
    """Empty the garbage collector before each timed run (off in tests: it costs
    a quarter of a second with every peer imported)."""


def bench_format(
    fmt: str, gen: Generator, runners: list[Runner], settings: Settings, log: Any
) -> dict[str, dict[str, Cell]]:
    """Run every runner on every case of one format; cells by runner, then case label."""
    cells: dict[str, dict[str, Cell]] = {r.name: {} for r in runners}
    # Measured single-call figures per runner: n_bytes -> (wall, cpu).
    growth: dict[str, dict[int, tuple[float, float]]] = {r.name: {} for r in runners}
    wrong: dict[str, str] = {}
    too_slow: set[str] = set()  # not run at larger single-call sizes

    # Warm-up and first correctness check on a tiny stream (first calls pay
    # for lazy imports, pydantic schema builds and the like).
    body, calls = gen.stream(fmt, KB, 2)
    expected = _expected(calls)
    for runner in runners:
        why = _check(runner, body, expected)
        if why is not None:
            wrong[runner.name] = f"wrong on a 1 KB warm-up stream: {why}"

    for case in settings.cases:
        body, calls = gen.stream(fmt, case.n_bytes, case.k)
        expected = _expected(calls)
        log(f"  {fmt:9s} {case.label:>9s}  body {len(body):>10,d} B")
        active: list[Runner] = []
        for runner in runners:
            cell = cells[runner.name][case.label] = Cell()
            if runner.name in wrong:
                cell.status, cell.note = "n/a", wrong[runner.name]
                continue
            estimate = _estimate(growth[runner.name], case)
            over = estimate is not None and estimate.low_cpu > settings.cap
            if (case.k == 1 and runner.name in too_slow) or over:
                if estimate is None:
                    cell.status, cell.note = "n/a", f"over {settings.cap:g} s, no projection"
                else:
                    cell.status, cell.wall, cell.cpu = "projected", estimate.wall, estimate.cpu
                    cell.note = f"projected (n^{estimate.exponent:.2f})"
                if case.k == 1:
                    too_slow.add(runner.name)
                log(f"    {runner.name:24s} {_fmt_cell_log(cell)}")
                continue
            active.append(runner)

        # Round-robin repeats: every active runner once per round, so that a
        # burst of load from elsewhere hits them alike.
        wanted: dict[str, int] = {}
        for round_no in range(settings.max_repeats):
            for runner in active:
                cell = cells[runner.name][case.label]
                if cell.status in ("wrong", "projected", "stopped"):
                    continue
                if round_no and round_no >= wanted.get(runner.name, 1):
                    continue
                try:
                    with _deadline(2 * settings.cap):
                        wall, cpu, why = _time_once(
                            runner, body, expected, collect=settings.collect
                        )
                except _Overtime:
                    floor = 2 * settings.cap
                    estimate = _estimate(growth[runner.name], case)
                    cell.walls.clear()
                    cell.cpus.clear()
                    if estimate is not None and estimate.wall > floor:
                        cell.status, cell.wall, cell.cpu = "projected", estimate.wall, estimate.cpu
                        cell.note = (
                            f"stopped after {floor:g} s; projected (n^{estimate.exponent:.2f})"
                        )
                    else:
                        cell.status, cell.note = "stopped", f"stopped after {floor:g} s"
                        cell.wall = cell.cpu = floor  # a lower bound, not a figure
                    if case.k == 1:
                        too_slow.add(runner.name)
                    continue
                if why is not None:
                    cell.status, cell.note = "wrong", why
                    cell.walls.clear()
                    cell.cpus.clear()
                    continue
                cell.status = "measured"
                cell.walls.append(wall)
                cell.cpus.append(cpu)
                if round_no == 0:
                    wanted[runner.name] = _repeats(wall, settings)
        for runner in active:
            cell = cells[runner.name][case.label]
            if cell.status == "measured":
                cell.wall, cell.cpu = min(cell.walls), min(cell.cpus)
                if case.k == 1:
                    growth[runner.name][case.n_bytes] = (cell.wall, cell.cpu)
                    if cell.wall > settings.cap:
                        too_slow.add(runner.name)
            log(f"    {runner.name:24s} {_fmt_cell_log(cell)}")
    return cells


def _repeats(first: float, settings: Settings) -> int:
    """How many runs to take the best of, given the first run's time."""
    n = int(settings.budget / max(first, 1e-9))
    if n < settings.min_repeats:
        # Slow enough that noise matters less; still two runs up to the budget,
        # as the two largest sizes measured decide and make the projections.
        return max(n, 2 if first <= settings.budget and settings.min_repeats > 1 else 1)
    return min(settings.max_repeats, n)


@dataclass(frozen=True)
class Estimate:
    """Projected wall and CPU time of a runner at one case."""

    wall: float
    cpu: float
    exponent: float
    low_cpu: float
    """The power-law CPU time, what the decision to run is made on (CPU time
    does not count the time other processes of a shared machine take)."""


def _estimate(measured: dict[int, tuple[float, float]], case: Case) -> Estimate | None:
    """A runner's projected time at ``case``, from its measured growth."""
    if case.k > 1:
        # k calls of n bytes cost at least k times one call of n bytes.
        single = measured.get(case.n_bytes)
        if single is None:
            return None
        return Estimate(single[0] * case.k, single[1] * case.k, 1.0, single[1] * case.k)
    sizes = sorted(n for n in measured if n < case.n_bytes)
    wall = project([(n, measured[n][0]) for n in sizes], case.n_bytes)
    cpu = project([(n, measured[n][1]) for n in sizes], case.n_bytes)
    if wall is None or cpu is None:
        return None
    return Estimate(wall.time, cpu.time, wall.exponent, cpu.low)


def _fmt_cell_log(cell: Cell) -> str:
    if cell.status == "measured":
        return f"{fmt_time(cell.wall)} wall, {fmt_time(cell.cpu)} cpu, best of {cell.repeats}"
    if cell.status == "projected":
        return f"~{fmt_time(cell.wall)} (projected)"
    return f"{cell.status}: {cell.note}"


def fmt_time(seconds: float | None) -> str:
    """Seconds with three significant digits, in ms below one second."""
    if seconds is None:
        return "–"
    if seconds < 1:
        ms = seconds * 1000
        return f"{ms:.3g} ms" if ms < 100 else f"{ms:.0f} ms"
    return f"{seconds:.3g} s" if seconds < 1000 else f"{seconds:,.0f} s"


def fmt_ratio(value: float) -> str:
    """A ratio, with fewer digits as it grows."""
    if value >= 100:
        return f"{value:,.0f}×"
    if value >= 10:
        return f"{value:.0f}×"
    return f"{value:.2f}×"


def _value(cell: Cell | None, cpu: bool) -> float | None:
    if cell is None or cell.status not in ("measured", "projected"):
        return None
    return cell.cpu if cpu else cell.wall


def render_table(
    cells: dict[str, dict[str, Cell]], cases: tuple[Case, ...], *, cpu: bool = False
) -> str:
    """A markdown table: runner × case with time, ratio to naive and to toolwire."""
    growth = [c for c in cases if c.k == 1]
    big, small = (growth[-1], growth[-2]) if len(growth) >= 2 else (None, None)
    header = ["runner", *(c.label for c in cases)]
    if big and small:
        header.append(f"{big.label} / {small.label}")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    naive = cells.get("naive", {})
    tw = cells.get("toolwire", {})
    for name, row in cells.items():
        out = [name]
        for case in cases:
            cell = row.get(case.label)
            if cell is not None and cell.status == "stopped":
                out.append(f"> {fmt_time(cell.wall)} (stopped)")
                continue
            t = _value(cell, cpu)
            if cell is None or t is None:
                out.append(cell.status if cell and cell.status != "pending" else "–")
                continue
            assert cell is not None
            mark = "~" if cell.status == "projected" else ""
            text = f"{mark}{fmt_time(t)}"
            ratios = []
            base = _value(naive.get(case.label), cpu)
            if base and name != "naive":
                ratios.append(f"{mark}{fmt_ratio(t / base)} naive")
            ref = _value(tw.get(case.label), cpu)
            if ref and name not in ("toolwire", "naive"):
                ratios.append(f"{mark}{fmt_ratio(t / ref)} tw")
            if ratios:
                text += " (" + ", ".join(ratios) + ")"
            if mark:
                text += " (projected)"
            out.append(text)
        if big and small:
            tb, ts = _value(row.get(big.label), cpu), _value(row.get(small.label), cpu)
            if tb and ts:
                projected = any(
                    (row.get(c.label) or Cell()).status == "projected" for c in (big, small)
                )
                p = fit_exponent(small.n_bytes, ts, big.n_bytes, tb)
                mark = "~" if projected else ""
                out.append(f"{mark}{tb / ts:.1f} (n^{p:.2f})")
            else:
                out.append("–")
        lines.append("| " + " | ".join(out) + " |")
    return "\n".join(lines)


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


PARTIALS_TARGET = {"openai": 1.0, "anthropic": 1.0, "bedrock": 1.1}
"""Toolwire with partial values read after every delta, at the largest size,
at most this many times the naive loop (CPU); 1.0× for a format not named."""

GROWTH_TARGET = 1.1
"""The time from the second-largest size to the largest, at most this many
times their ratio of sizes: linear, with room for noise."""


def headline(results: dict[str, dict[str, dict[str, Cell]]], cases: tuple[Case, ...]) -> list[str]:
    """The figures the goals are stated in, per format, each with its target.

    Verdicts are on CPU time: on a shared machine the wall time of a run also
    counts the time other processes held the core.
    """
    growth = [c for c in cases if c.k == 1]
    big, small = growth[-1], growth[-2]

    def both(a: Cell | None, b: Cell | None) -> tuple[float, float] | None:
        wa, wb, ca, cb = _value(a, False), _value(b, False), _value(a, True), _value(b, True)
        if not (wa and wb and ca and cb):
            return None
        return wa / wb, ca / cb

    out: list[str] = []
    for fmt, cells in results.items():
        tw, naive = cells.get("toolwire", {}), cells.get("naive", {})
        r = both(tw.get(big.label), naive.get(big.label))
        if r:
            target = PARTIALS_TARGET.get(fmt, 1.0)
            out.append(
                f"- {fmt}: toolwire (partial values read) / naive at {big.label}: "
                f"{r[0]:.2f}× wall, {r[1]:.2f}× CPU "
                f"(target ≤ {target:.1f}×: {_verdict(r[1] <= target)})"
            )
        r = both(tw.get(big.label), tw.get(small.label))
        if r:
            most = GROWTH_TARGET * big.n_bytes / small.n_bytes
            out.append(
                f"- {fmt}: toolwire time({big.label}) / time({small.label}): "
                f"{r[0]:.1f} wall, {r[1]:.1f} CPU (target ≤ {most:g}: {_verdict(r[1] <= most)})"
            )
        for peer in ("openai SDK", "anthropic SDK"):
            row = cells.get(peer)
            if not row:
                continue
            shown = 0
            for case in reversed(growth):
                cell = row.get(case.label)
                r = both(cell, tw.get(case.label))
                if cell is None or r is None:
                    continue
                projected = cell.status == "projected"
                if projected and shown:
                    continue
                mark, how = ("~", "projected") if projected else ("", "measured")
                line = (
                    f"- {fmt}: {peer} / toolwire at {case.label} ({how}): "
                    f"{mark}{r[0]:,.0f}× wall, {mark}{r[1]:,.0f}× CPU"
                )
                if peer == "openai SDK":
                    line += f" (target ≥ 30×: {_verdict(r[1] >= 30)}; goal ≥ 100×)"
                out.append(line)
                shown += 1
                if not projected:
                    break  # the largest measured size, after the projection if any
    return out


def _versions() -> dict[str, str]:
    out = {}
    for dist in ("toolwire", "openai", "anthropic", "langchain-core", "litellm", "jiter", "orjson"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


def machine() -> str:
    """CPU model, core count, Python and OS, for the record."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


def _load() -> str:
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


_LEGEND = (
    "Runners: `naive` joins the fragments and parses once at the end (no partial "
    "values); `toolwire` is `StreamDecoder` fed 64 KiB pieces, reading "
    "`ToolCallDelta.partial` of every delta; `openai SDK` is `ChatCompletionStream` "
    "(its `ChatCompletionStreamState`) with a strict `pydantic_function_tool`, over "
    "the SDK's own SSE decoding; `anthropic SDK` is `MessageStream` over the SDK's "
    "own SSE decoding; `langchain-core` folds one `AIMessageChunk` with "
    "`tool_call_chunks` per payload with `+`; `litellm` is `stream_chunk_builder` "
    "over `ModelResponseStream` chunks (Anthropic payloads through litellm's own "
    "Anthropic chunk parser; no partial values); `jiter partial re-parse` is "
    "`jiter.from_json(buffer, partial_mode='trailing-strings')` after every chunk."
)


def report(
    results: dict[str, dict[str, dict[str, Cell]]],
    settings: Settings,
    generator: str,
    command: str,
    meta: dict[str, Any],
) -> str:
    """The markdown report: how it was run, one table per format, the headline ratios."""
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    parts = [
        f"`{command}` on {meta['machine']}; load average {meta['load_before']} before, "
        f"{meta['load_after']} after (a shared machine: compare the ratios, not the seconds).",
        "",
        f"Streams from {generator}: one call with arguments of the given size, or 8 "
        "parallel calls, 4-8 characters per chunk. Versions: " + versions + ".",
        "",
        _LEGEND,
        "",
        "Each cell: best time over N runs (the body bytes to the final parsed "
        "arguments, JSON parsing of every payload included, each result checked), "
        "then the ratio to `naive` and to `toolwire`. `~` marks a projection from the "
        "runner's measured growth (linear plus quadratic fit of its two largest "
        f"measured sizes) for runners that would need more than {settings.cap:g} s. "
        "The last column is the growth from the second-largest to the largest size, "
        "with its exponent.",
    ]
    for fmt, cells in results.items():
        parts += ["", f"**{fmt}** — wall time", "", render_table(cells, settings.cases)]
        missing = meta["missing"].get(fmt)
        if missing:
            parts += ["", "Not run: " + "; ".join(missing) + "."]
        notes = sorted(
            {
                f"{name} at {label}: {cell.note}"
                for name, row in cells.items()
                for label, cell in row.items()
                if cell.status in ("wrong", "n/a")
            }
        )
        if notes:
            parts += ["", *(f"- {n}" for n in notes)]
    for fmt, cells in results.items():
        parts += ["", f"**{fmt}** — process CPU time", ""]
        parts += [render_table(cells, settings.cases, cpu=True)]
    if len([c for c in settings.cases if c.k == 1]) >= 2:
        parts += [
            "",
            "Headline (verdicts on CPU time, which other processes on the machine do not inflate):",
            "",
            *headline(results, settings.cases),
        ]
    return "\n".join(parts)


README_START = "<!-- bench-stream:start -->"
README_END = "<!-- bench-stream:end -->"


def update_readme(path: Path, text: str) -> None:
    """Put ``text`` in the README's Benchmarks section, replacing an older table."""
    readme = path.read_text()
    block = f"{README_START}\n{text}\n{README_END}"
    if README_START in readme and README_END in readme:
        head, rest = readme.split(README_START, 1)
        _old, tail = rest.split(README_END, 1)
        readme = head + block + tail
    else:
        section = (
            "\n## Benchmarks\n\n"
            "How long it takes to turn a streamed response into the final tool-call\n"
            "arguments, for toolwire and for the libraries you would otherwise use.\n"
            "`make bench` installs them (dev-only) and runs `bench/bench_stream.py`;\n"
            "`--quick` stops at 100 KB, `--json FILE` saves the raw figures.\n\n"
        )
        readme = readme.rstrip("\n") + "\n" + section + block + "\n"
    path.write_text(readme)


def _command(args: argparse.Namespace) -> str:
    """The command line, with only the options that change the figures."""
    words = ["python bench/bench_stream.py"]
    if args.quick:
        words.append("--quick")
    if args.builtin_gen:
        words.append("--builtin-gen")
    elif args.gen:
        words.append(f"--gen {args.gen}")
    if args.cap != DEFAULT_CAP:
        words.append(f"--cap {args.cap:g}")
    if args.formats != ",".join(FORMATS):
        words.append(f"--formats {args.formats}")
    return " ".join(words)


def _settings(args: argparse.Namespace) -> Settings:
    return Settings(
        cases=QUICK_CASES if args.quick else FULL_CASES,
        cap=args.cap,
        budget=1.0 if args.quick else 6.0,
        max_repeats=3 if args.quick else 7,
        min_repeats=1 if args.quick else 3,
    )


def _to_json(
    results: dict[str, dict[str, dict[str, Cell]]],
    settings: Settings,
    generator: str,
    command: str,
    meta: dict[str, Any],
) -> dict[str, Any]:
    return {
        "command": command,
        "generator": generator,
        "settings": asdict(settings),
        **meta,
        "results": {
            fmt: {
                name: {label: asdict(cell) for label, cell in row.items()}
                for name, row in cells.items()
            }
            for fmt, cells in results.items()
        },
    }


def _from_json(
    raw: dict[str, Any],
) -> tuple[dict[str, dict[str, dict[str, Cell]]], Settings, str, str, dict[str, Any]]:
    s = raw["settings"]
    settings = Settings(**{**s, "cases": tuple(Case(**c) for c in s["cases"])})
    results = {
        fmt: {
            name: {label: Cell(**cell) for label, cell in row.items()}
            for name, row in cells.items()
        }
        for fmt, cells in raw["results"].items()
    }
    meta = {k: raw[k] for k in ("machine", "versions", "load_before", "load_after", "missing")}
    return results, settings, raw["generator"], raw["command"], meta


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the tables; optionally save JSON and update a README."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="sizes up to 100 KB only")
    parser.add_argument("--gen", type=Path, help="path of a gen.py stream generator")
    parser.add_argument("--builtin-gen", action="store_true", help="use the built-in generator")
    parser.add_argument("--cap", type=float, default=DEFAULT_CAP, help="seconds per runner, size")
    parser.add_argument("--formats", default=",".join(FORMATS), help="openai,anthropic,bedrock")
    parser.add_argument("--json", type=Path, help="save the raw figures here")
    parser.add_argument("--readme", type=Path, help="put the tables in this page")
    parser.add_argument("--render", type=Path, help="no run: print the figures of a --json file")
    args = parser.parse_args(argv)

    if args.render:
        saved = json.loads(args.render.read_text())
        text = report(*_from_json(saved))
        if saved.get("many_calls"):
            rows = [ManyCalls(row["calls"], row["cpu"]) for row in saved["many_calls"]]
            text += "\n\n" + render_many_calls(rows)
        print(text)
        if args.readme:
            update_readme(args.readme, text)
        return 0

    gen = load_generator(args.gen, builtin=args.builtin_gen)
    settings = _settings(args)
    formats = [f for f in args.formats.split(",") if f]
    for fmt in formats:
        if fmt not in FORMATS:
            parser.error(f"unknown format {fmt!r}; expected {', '.join(FORMATS)}")
    command = _command(args)

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    log(f"generator: {gen.description}")
    meta: dict[str, Any] = {
        "machine": machine(),
        "versions": _versions(),
        "load_before": _load(),
        "missing": {fmt: missing_runners(fmt) for fmt in formats},
    }
    runners = {fmt: available_runners(fmt) for fmt in formats}
    # Everything imported so far (five libraries' worth of modules) is moved out
    # of the collector's sight, so that no runner pays for scanning the others'.
    gc.collect()
    gc.freeze()
    started = time.perf_counter()
    results = {}
    for fmt in formats:
        results[fmt] = bench_format(fmt, gen, runners[fmt], settings, log)
    many = bench_many_calls(QUICK_SIZES if args.quick else FULL_SIZES, log)
    meta["load_after"] = _load()
    meta["elapsed_s"] = round(time.perf_counter() - started, 1)
    text = report(results, settings, gen.description, command, meta)
    text += "\n\n" + render_many_calls(many)
    print(text)
    log(f"total {meta['elapsed_s']} s")
    if args.json:
        raw = _to_json(results, settings, gen.description, command, meta)
        raw["many_calls"] = [{"calls": row.calls, "cpu": row.cpu} for row in many]
        args.json.write_text(json.dumps(raw, indent=2, ensure_ascii=False) + "\n")
    if args.readme:
        update_readme(args.readme, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
