"""Soak: many concurrent journaled agent runs in one client process, on loopback.

Runs ``--runs`` agent runs at once (one shared agent and HTTP transport, as a
server would) against the emulation server, which runs in a process of its
own (``toolwire serve``; ``--server inline`` puts it in this process): each run
streams a turn with two parallel tool calls (a read-only weather lookup and
an idempotent payment), runs them, and streams the answer. Every run must
answer correctly. Reported, for each journal mode:

* runs/s over the whole batch;
* the latency overhead of a run under load over the same run alone with no
  journal (which is the server's own scripted delays plus one client's
  work), p50 and p99;
* peak memory per run: the growth of the process's peak RSS over the batch,
  divided by the number of runs (the server's share included);
* journal records and commits (transactions) per run, a commit's mean
  latency, and the commits' share of the batch (inline on the event loop, or
  offloaded to worker threads).

    python bench/soak.py [--runs 2000] [--delay 0.005] [--mode inline|offload|off|all]
                         [--server process|inline]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio

from toolwire import Agent, Backoff, HttpRetryPolicy, HttpxTransport, OpenAIChat, tool
from toolwire.examples import PaymentLedger, payment_tool
from toolwire.journal import JournalObserver, SQLiteJournal, Step
from toolwire.testing import EmulationServer, Scenario


def scenario(delay: float) -> Scenario:
    """Two turns: two parallel calls, then an answer quoting both results."""
    return Scenario.from_dict(script(delay))


def script(delay: float) -> dict[str, Any]:
    """:func:`scenario` as JSON data, for a server in another process."""
    return {
        "name": "soak",
        "turns": [
            {
                "tool_calls": [
                    {"name": "get_weather", "arguments": {"city": "杭州"}},
                    {"name": "send_payment", "arguments": {"to": "alice", "amount_cents": 1}},
                ],
                "chunk_size": 16,
                "delay": delay,
            },
            {
                "text": "{result:get_weather.condition_zh} {result:send_payment.status}",
                "chunk_size": 8,
                "delay": delay,
            },
        ],
    }


EXPECTED = "小雨 sent"
HERE = str(Path(__file__).resolve().parent)


@tool(read_only=True)
def get_weather(city: str) -> dict[str, Any]:
    """Weather of a city.

    Args:
        city: the city.
    """
    return {"city": city, "condition_zh": "小雨"}


T = TypeVar("T")


class TimedJournal(SQLiteJournal):
    """A SQLite journal that counts its commits and adds up the time they take."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.write_seconds = 0.0
        self.commits = 0

    def _timed(self, write: Callable[[], T]) -> T:
        start = time.perf_counter()
        try:
            return write()
        finally:
            self.write_seconds += time.perf_counter() - start
            self.commits += 1

    def record_run(self, run_id: str, **kwargs: Any) -> int:
        return self._timed(lambda: super(TimedJournal, self).record_run(run_id, **kwargs))

    def record_event(self, run_id: str, kind: str, data: str, **kwargs: Any) -> int:
        return self._timed(
            lambda: super(TimedJournal, self).record_event(run_id, kind, data, **kwargs)
        )

    def record_end(self, run_id: str, **kwargs: Any) -> None:
        self._timed(lambda: super(TimedJournal, self).record_end(run_id, **kwargs))

    def record_steps(self, run_id: str, steps: Sequence[Step]) -> None:
        self._timed(lambda: super(TimedJournal, self).record_steps(run_id, steps))


@dataclass
class Report:
    """The figures of one batch."""

    mode: str
    runs: int
    seconds: float
    overheads: list[float]
    solo: float
    peak_rss_per_run: float
    writes_per_run: float
    """Records per run."""
    commits_per_run: float
    """Transactions per run (a commit may hold several records)."""
    write_seconds: float

    @property
    def write_latency(self) -> float:
        """Mean seconds per journal commit."""
        commits = self.commits_per_run * self.runs
        return self.write_seconds / commits if commits else 0.0

    @property
    def runs_per_second(self) -> float:
        return self.runs / self.seconds

    def percentile(self, p: float) -> float:
        ordered = sorted(self.overheads)
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    def line(self) -> str:
        return (
            f"{self.mode:8} {self.runs:5} runs  {self.runs_per_second:7.1f} runs/s  "
            f"solo {self.solo * 1000:6.1f} ms  overhead p50 {self.percentile(0.5) * 1000:7.1f} ms"
            f"  p99 {self.percentile(0.99) * 1000:7.1f} ms  "
            f"peak RSS {self.peak_rss_per_run / 1024:6.1f} KiB/run  "
            f"{self.writes_per_run:.0f} journal records in {self.commits_per_run:.0f} "
            f"commits/run, {self.write_latency * 1e6:.0f} µs each, "
            f"{self.write_seconds * 1000:.0f} ms in commits "
            f"({100 * self.write_seconds / self.seconds:.1f}% of the batch)"
        )


def _peak_rss() -> int:
    """Peak resident set size of this process, in bytes (Linux: ru_maxrss is KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def batch(
    base_url: str,
    runs: int,
    mode: str,
    folder: Path,
    *,
    limit: float = 120.0,
    tally: dict[str, int] | None = None,
) -> tuple[float, list[float], int, float]:
    """``runs`` concurrent runs (``mode``: ``off``, ``inline`` or ``offload``
    journaling); every run must answer correctly. Returns the batch's seconds,
    the runs' latencies, the journal events written and the seconds spent in
    journal commits; their number goes in ``tally["commits"]``."""
    transport = HttpxTransport(
        retry=HttpRetryPolicy(retries=2, backoff=Backoff(initial_delay=0.01)),
        max_connections=min(runs, 256),
    )
    ledger = PaymentLedger()
    journal: TimedJournal | None = None
    observers = []
    if mode != "off":
        journal = TimedJournal(folder / f"journal-{mode}-{runs}.sqlite3")
        observers.append(JournalObserver(journal, offload=mode == "offload"))
    agent = Agent(
        OpenAIChat(api_key="sk-soak", base_url=base_url + "/v1"),
        model="gpt-4.1-mini",
        tools=[get_weather, payment_tool(ledger)],
        transport=transport,
        journal=False,
        observers=observers,
    )
    latencies: list[float] = []
    failures: list[str] = []

    async def one(number: int) -> None:
        start = time.perf_counter()
        result = await agent.run("weather and pay", run_id=f"{mode}-{runs}-{number}")
        latencies.append(time.perf_counter() - start)
        if result.output != EXPECTED:
            failures.append(result.output)

    start = time.perf_counter()
    with anyio.fail_after(limit):
        async with anyio.create_task_group() as tg:
            for number in range(runs):
                tg.start_soon(one, number)
    seconds = time.perf_counter() - start
    await transport.aclose()
    events = commits = 0
    spent = 0.0
    if journal is not None:
        for summary in journal.list_runs(limit=runs):
            log = journal.load_run(summary.run_id)
            assert log.run.status == "answered" and not log.problems(), log.problems()
            events += len(log.events)
        spent, commits = journal.write_seconds, journal.commits
        journal.close()
    assert not failures, f"{len(failures)} wrong answers, e.g. {failures[0]!r}"
    assert len(latencies) == runs and len(ledger.payments()) == runs
    if tally is not None:
        tally["commits"] = commits
    return seconds, latencies, events, spent


@asynccontextmanager
async def serving(delay: float, where: str) -> AsyncIterator[str]:
    """The emulation server's base URL: in its own process, or in this one."""
    if where == "inline":
        async with EmulationServer(scenario(delay)) as server:
            yield server.base_url
        return
    sys.path.insert(0, HERE)
    from _serve import serve_process

    with serve_process(script(delay)) as base_url:
        yield base_url


async def soak(runs: int, delay: float, modes: list[str], where: str, limit: float) -> list[Report]:
    """Measure each mode against one server, on loopback."""
    reports = []
    with tempfile.TemporaryDirectory() as tmp:
        async with serving(delay, where) as url:
            reports = await _measure(url, runs, modes, Path(tmp), limit)
    return reports


async def _measure(
    url: str, runs: int, modes: list[str], folder: Path, limit: float
) -> list[Report]:
    reports = []
    # Warm up (imports, first connections), then the solo baseline.
    await batch(url, 5, "off", folder)
    solo = statistics.median([(await batch(url, 1, "off", folder))[1][0] for _ in range(5)])
    for mode in modes:
        rss_before = _peak_rss()
        tally: dict[str, int] = {}
        seconds, latencies, events, spent = await batch(
            url, runs, mode, folder, limit=limit, tally=tally
        )
        peak = max(_peak_rss() - rss_before, 0)
        reports.append(
            Report(
                mode=mode,
                runs=runs,
                seconds=seconds,
                overheads=[latency - solo for latency in latencies],
                solo=solo,
                peak_rss_per_run=peak / runs,
                writes_per_run=events / runs,
                commits_per_run=tally.get("commits", 0) / runs,
                write_seconds=spent,
            )
        )
    return reports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--delay", type=float, default=0.005, help="server delay between chunks")
    parser.add_argument("--mode", choices=["inline", "offload", "off", "all"], default="all")
    parser.add_argument("--server", choices=["process", "inline"], default="process")
    parser.add_argument("--limit", type=float, default=600.0, help="seconds per batch, at most")
    args = parser.parse_args()
    # Peak RSS only grows: measure the modes in increasing order of expected memory.
    modes = ["off", "inline", "offload"] if args.mode == "all" else [args.mode]
    for report in anyio.run(soak, args.runs, args.delay, modes, args.server, args.limit):
        print(report.line(), flush=True)


if __name__ == "__main__":
    main()
