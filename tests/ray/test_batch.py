"""run_batch on Ray: each run is a Ray task whose agent talks to the emulation
server in this process over loopback; the results file is resumable."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolwire import BatchProgress, SQLiteJournal, run_batch
from toolwire.batch import load_results
from toolwire.journal import PostgresJournal
from toolwire.testing import EmulationServer, Scenario

from ._tools import AgentFactory, CrashingFactory, CrashOnceFactory

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("ray_instance")]

SCENARIO = Scenario.from_dict(
    {
        "turns": [
            {"tool_calls": [{"name": "whoami", "arguments": {}}]},
            {"text": "ran in {result:whoami.pid}"},
        ]
    }
)


def prompts(n: int) -> list[str]:
    return [f"问题 {i}: 你在哪个进程?" for i in range(n)]


async def test_batch_on_ray_then_resume(tmp_path: Path) -> None:
    results = tmp_path / "out" / "results.jsonl"
    seen: list[BatchProgress] = []
    async with EmulationServer(SCENARIO) as server:
        factory = AgentFactory(server.url_for("openai-chat"))
        first = await run_batch(
            prompts(10),
            factory,
            concurrency=2,
            results_path=results,
            progress=seen.append,
        )
        requests_after_first = len(server.requests)
        first_text = results.read_text(encoding="utf-8")
        second = await run_batch(
            prompts(12), factory, concurrency=2, results_path=results, progress=False
        )
        requests_after_second = len(server.requests)

    assert first.total == 10 and first.skipped == 0 and first.answered == 10
    assert requests_after_first == 20  # two model turns per run
    assert [p.done for p in seen] == list(range(1, 11)) and seen[-1].errors == 0
    lines = [json.loads(line) for line in first_text.splitlines()]
    assert len(lines) == 10
    assert sorted(line["index"] for line in lines) == list(range(10))
    assert {line["prompt"] for line in lines} == set(prompts(10))
    assert len({line["run_id"] for line in lines}) == 10
    for line in lines:
        assert line["outcome"] == "answered" and line["error"] is None
        assert line["usage"]["input_tokens"] > 0 and line["tool_calls"] == 1
        # The tool ran inside the Ray worker that ran the agent.
        pid = int(line["output"].removeprefix("ran in "))
        assert pid != os.getpid()

    # The resumed batch ran only the two new prompts.
    assert second.total == 12 and second.skipped == 10
    assert [r.index for r in second.records] == [10, 11]
    assert requests_after_second - requests_after_first == 4
    records = load_results(results)
    assert len(records) == 12 and all(r.ok for r in records)
    assert {r.prompt for r in records[10:]} == set(prompts(12)[10:])


async def test_workers_record_to_the_drivers_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ray was started before this test set its journal: the workers' own
    # environment names another one (or the user's), and must not be used.
    journal = tmp_path / "driver" / "journal.sqlite3"
    monkeypatch.setenv("TOOLWIRE_JOURNAL", str(journal))
    async with EmulationServer(SCENARIO) as server:
        summary = await run_batch(
            prompts(2), AgentFactory(server.url_for("openai-chat")), progress=False
        )
    assert summary.answered == 2
    store = SQLiteJournal(journal)
    try:
        recorded = {run.run_id for run in store.list_runs()}
    finally:
        store.close()
    assert recorded == {record.run_id for record in summary.records}

    monkeypatch.setenv("TOOLWIRE_JOURNAL", "off")
    async with EmulationServer(SCENARIO) as server:
        factory = AgentFactory(server.url_for("openai-chat"))
        off = await run_batch(prompts(1), factory, progress=False)
    assert off.answered == 1
    store = SQLiteJournal(journal)
    try:
        assert {run.run_id for run in store.list_runs()} == recorded
    finally:
        store.close()


async def test_lost_worker_is_an_error_line(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    summary = await run_batch(
        ["这一个会崩溃"], CrashingFactory(), results_path=results, progress=False
    )
    (record,) = summary.records
    assert record.outcome == "error" and record.error is not None
    assert record.error["type"] == "WorkerCrashedError"
    assert load_results(results) == [record]


CRASH_ONCE = Scenario.from_dict(
    {
        "turns": [
            {"tool_calls": [{"name": "crash_once", "arguments": {}}]},
            {"text": "after {result:crash_once}"},
        ]
    }
)


async def test_a_run_whose_worker_dies_is_resumed_on_another_worker(
    tmp_path: Path, postgres_url: str
) -> None:
    flag = tmp_path / "crashed"
    async with EmulationServer(CRASH_ONCE) as server:
        factory = CrashOnceFactory(server.url_for("openai-chat"), postgres_url, str(flag))
        summary = await run_batch(
            ["这一个的进程会死一次"], factory, results_path=tmp_path / "r.jsonl", progress=False
        )
    (record,) = summary.records
    assert (record.outcome, record.output) == ("answered", "after survived"), record
    assert flag.exists()  # the first worker died in the tool
    journal = PostgresJournal(postgres_url, read_only=True)
    try:
        log = journal.load_run(record.run_id)
    finally:
        journal.close()
    assert log.run.resumes == 1 and log.problems() == []
    # The read-only tool ran again on the second worker; the model turn that
    # asked for it was not requested again.
    kinds = [e.kind for e in log.events]
    assert kinds.count("tool_intent") == 2 and kinds.count("model_response") == 2
