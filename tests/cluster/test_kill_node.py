"""A batch over a real Ray cluster, one Postgres journal, and a node that dies.

A head and four worker nodes (``ray start``, each with its own raylet and one
worker process: four machines as far as Ray can tell) run ``toolwire batch
--ray ADDRESS --journal postgresql://...`` against the emulation server in a
process of its own. Every run pays (an idempotent tool), then notifies (a
tool that is not), then answers. Both write their effect to a table of the
journal's database, keyed by run and call, and every execution to another.

Mid-batch, a ``pay`` on node ``n1`` stops right after its effect, before its
outcome is journaled; the test then kills -9 every process of ``n1``: its
raylet, its agents, its worker. The driver places the run again on another
node, which takes its lease over once it expires and resumes it from the
journal: ``pay`` runs again (idempotent: its effect is not made twice), then
``notify`` runs, once. Every run ends answered, the results file has one line
per prompt, and every effect happened exactly once.

``TOOLWIRE_CLUSTER_RUNS`` sets the batch's size: 500 by default, as
``make test`` runs it (about a minute on two cores, the cluster's start
included); ``make test-cluster`` runs 2,000 (about two and a half).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest

from tests._ray_cluster import RayCluster
from toolwire.journal import PostgresJournal

from ._agent import BASE_URL, HOLD, TABLES

ROOT = Path(__file__).resolve().parents[2]
RUNS = int(os.environ.get("TOOLWIRE_CLUSTER_RUNS", "500"))
DEADLINE = 120.0 + RUNS * 0.25
"""Seconds each wait of the batch may take, generously: the whole batch takes
about a fifth of that."""
SCENARIO = {
    "name": "pay-then-notify",
    "turns": [
        {"tool_calls": [{"name": "pay", "arguments": {"amount_cents": 1250}}]},
        {"tool_calls": [{"name": "notify", "arguments": {"text": "{result:pay.payment_id}"}}]},
        {"text": "paid as {result:pay.payment_id}: {result:notify}"},
    ],
}


@pytest.fixture
def emulation_server(tmp_path: Path) -> Iterator[str]:
    """``toolwire serve`` in a process of its own; its OpenAI base URL.

    Its output goes to a file: it logs every request, and a pipe nobody
    reads would fill and stop it."""
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO, ensure_ascii=False), encoding="utf-8")
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "toolwire", "serve", "--port", "0", "--scenario", str(scenario)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while "listening on" not in (text := log.read_text(errors="replace")):
            assert server.poll() is None and time.monotonic() < deadline, text
            time.sleep(0.1)
        yield text.split("listening on", 1)[1].split()[0] + "/v1"
    finally:
        server.kill()
        server.wait(10)


@pytest.fixture
def cluster(tmp_path: Path, emulation_server: str) -> Iterator[RayCluster]:
    hold = tmp_path / "hold"
    hold.mkdir()
    (hold / "victim").write_text("n1", encoding="utf-8")
    env = {"PYTHONPATH": str(ROOT), BASE_URL: emulation_server, HOLD: str(hold)}
    ray_cluster = RayCluster.start(4, cpus=1, env=env)
    try:
        yield ray_cluster
    finally:
        ray_cluster.stop()


def _wait(
    condition: Callable[[], bool], what: str, deadline: float, batch: subprocess.Popen[bytes]
) -> None:
    until = time.monotonic() + deadline
    while time.monotonic() < until:
        if condition():
            return
        if batch.poll() is not None:
            raise AssertionError(f"the batch ended before {what}")
        time.sleep(0.2)
    raise AssertionError(f"no {what} within {deadline:g} s")


def _count(db: psycopg.Connection[tuple[object, ...]], query: str) -> int:
    row = db.execute(query).fetchone()
    return int(row[0]) if row else 0  # type: ignore[call-overload]


@pytest.mark.timeout(1800)
def test_a_batch_survives_the_death_of_a_node(
    tmp_path: Path, postgres_url: str, cluster: RayCluster
) -> None:
    db = psycopg.connect(postgres_url, autocommit=True)
    db.execute(TABLES)
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("".join(f"第 {i} 笔付款\n" for i in range(RUNS)), encoding="utf-8")
    results = tmp_path / "results.jsonl"
    hold = Path(cluster.env[HOLD])
    started = time.monotonic()
    batch = subprocess.Popen(
        [
            *(sys.executable, "-m", "toolwire", "batch", str(prompts)),
            *("--agent", "tests.cluster._agent:make_agent", "--results", str(results)),
            *("--ray", cluster.address, "--journal", postgres_url),
            *("--concurrency", "8", "--no-progress"),
        ],
        cwd=ROOT,
        env=cluster.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        executions = "SELECT count(*) FROM cluster_executions WHERE node = 'n1'"
        _wait(lambda: _count(db, executions) >= RUNS // 16, "run on n1", DEADLINE, batch)
        (hold / "hold").touch()
        _wait((hold / "held").exists, "held run", DEADLINE, batch)
        killed = cluster.kill_node("n1")
        output, _ = batch.communicate(timeout=DEADLINE)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait(10)
    elapsed = time.monotonic() - started
    print(f"{RUNS} runs in {elapsed:.1f} s; killed n1 ({len(killed)} processes)")
    text = output.decode(errors="replace")
    assert batch.returncode == 0, text[-3000:]
    assert f"{RUNS} runs: {RUNS} answered, 0 failed" in text, text[-3000:]

    # The results file: one answered line per prompt, in dataset order by index.
    lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    assert sorted(line["index"] for line in lines) == list(range(RUNS))
    by_index = sorted(lines, key=lambda line: line["index"])
    assert [line["prompt"] for line in by_index] == [f"第 {i} 笔付款" for i in range(RUNS)]
    assert all(line["outcome"] == "answered" for line in lines)
    assert all(line["output"].endswith(": sent") for line in lines), lines
    run_ids = {line["run_id"] for line in lines}
    assert len(run_ids) == RUNS

    # Every effect happened exactly once: one row per run and tool.
    effects = db.execute("SELECT run_id, tool FROM cluster_effects").fetchall()
    assert sorted(effects) == sorted((run, name) for run in run_ids for name in ("pay", "notify"))
    # The non-idempotent tool never ran twice; only the held run's pay did.
    again = db.execute(
        "SELECT run_id, tool, count(*) FROM cluster_executions "
        "GROUP BY run_id, call_id, tool HAVING count(*) > 1"
    ).fetchall()
    held_run = (hold / "held").read_text(encoding="utf-8").strip()
    assert again == [(held_run, "pay", 2)]
    # Nothing ran on n1 after it died, and the others carried the batch.
    nodes = dict(
        db.execute("SELECT node, count(*) FROM cluster_executions GROUP BY node").fetchall()
    )
    assert set(nodes) == {"n0", "n1", "n2", "n3"}

    # The held run was taken over and resumed from the journal, its model
    # turn not asked again.
    journal = PostgresJournal(postgres_url, read_only=True)
    try:
        log = journal.load_run(held_run)
        assert log.run.status == "answered" and log.run.resumes == 1, log.run
        assert log.problems() == []
        kinds = [event.kind for event in log.events]
        assert kinds.count("model_response") == 3
        listed = journal.list_runs(limit=RUNS + 10)
        assert {run.run_id for run in listed} == run_ids
        assert {run.status for run in listed} == {"answered"}
    finally:
        journal.close()
        db.close()
