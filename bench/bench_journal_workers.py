"""Workers sharing one PostgreSQL journal: runs per second and commits per run.

Starts the emulation server in a process of its own, and 1, 2 and 4 worker
processes that run ``--runs`` journaled agent runs in all (each worker its
share, ``--concurrency`` at a time). All of them record to the same Postgres
database. Each run streams a turn with one read-only tool call, runs the tool,
and streams the answer. Reported for each worker count: runs per second over
the whole batch (from the moment every worker has started and connected to
the last one's end), and
journal commits per run (the database's committed transactions over the batch,
the lease's taking and giving up included, divided by the runs).

    python bench/bench_journal_workers.py [--runs 400] [--concurrency 8]
                                          [--journal postgresql://...]

Without ``--journal``, it starts a throwaway server (``tests/_postgres.py``:
the ``pgserver`` wheel's binaries, a Unix socket in a temporary directory).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

SCRIPT: dict[str, Any] = {
    "name": "workers",
    "turns": [
        {"tool_calls": [{"name": "get_weather", "arguments": {"city": "杭州"}}], "chunk_size": 16},
        {"text": "{result:get_weather.condition_zh}", "chunk_size": 8},
    ],
}


async def _worker(base_url: str, journal: str, prefix: str, runs: int, concurrency: int) -> None:
    from toolwire import Agent, OpenAIChat, tool

    @tool(read_only=True)
    def get_weather(city: str) -> dict[str, Any]:
        """Weather of a city.

        Args:
            city: the city.
        """
        return {"city": city, "condition_zh": "小雨"}

    agent = Agent(
        OpenAIChat(base_url=base_url, api_key="bench-key"),
        model="bench",
        tools=[get_weather],
        journal=journal,
    )
    agent.journal  # connected before the clock starts  # noqa: B018
    limiter = anyio.CapacityLimiter(concurrency)
    print("ready", flush=True)
    await anyio.to_thread.run_sync(sys.stdin.readline)

    async def one(n: int) -> None:
        async with limiter:
            result = await agent.run("天气?", run_id=f"{prefix}-{n}")
            if result.output != "小雨":
                raise SystemExit(f"wrong answer: {result.output!r}")

    async with anyio.create_task_group() as group:
        for n in range(runs):
            group.start_soon(one, n)
    await agent.aclose()


def _commits(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        db.execute("SELECT pg_stat_clear_snapshot()")
        row = db.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    return int(row[0]) if row else 0


def _round(
    base_url: str, journal: str, workers: int, runs: int, concurrency: int
) -> dict[str, Any]:
    share = runs // workers
    argv = [sys.executable, __file__, "--worker", base_url, journal]
    procs = [
        subprocess.Popen(
            [*argv, f"w{workers}-{i}", str(share), str(concurrency)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(workers)
    ]
    for proc in procs:  # imported and connected: the clock starts now
        assert proc.stdout is not None
        if proc.stdout.readline().strip() != "ready":
            raise SystemExit("a worker did not start")
    before = _commits(journal)
    started = time.perf_counter()
    for proc in procs:
        proc.communicate("go\n", timeout=1800)
    codes = [proc.returncode for proc in procs]
    elapsed = time.perf_counter() - started
    if any(codes):
        raise SystemExit(f"a worker failed: exit codes {codes}")
    time.sleep(0.6)  # the statistics collector's flush (PGSTAT_MIN_INTERVAL is 500 ms)
    commits = _commits(journal) - before
    total = share * workers
    return {
        "workers": workers,
        "runs": total,
        "runs_per_s": total / elapsed,
        "commits_per_run": commits / total,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--journal", default=None)
    parser.add_argument("--workers", default="1,2,4")
    args = parser.parse_args()
    from _serve import serve_process

    server = None
    journal = args.journal
    if journal is None:
        from tests._postgres import PostgresServer, find_bin

        bin_dir = find_bin()
        if bin_dir is None:
            raise SystemExit("no PostgreSQL binaries: pip install pgserver, or give --journal")
        server = PostgresServer.start(bin_dir)
        journal = server.new_database()
    try:
        with serve_process(SCRIPT) as base_url:
            rows = [
                _round(base_url + "/v1", journal, int(n), args.runs, args.concurrency)
                for n in args.workers.split(",")
            ]
    finally:
        if server is not None:
            server.stop()
    for row in rows:
        print(json.dumps(row))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        base, journal, prefix, runs, concurrency = sys.argv[2:7]
        anyio.run(_worker, base, journal, prefix, int(runs), int(concurrency))
    else:
        main()
