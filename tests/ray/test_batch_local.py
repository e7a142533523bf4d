"""run_batch in local mode (no Ray): records, the results file, resuming,
errors, torn lines, duplicates and the concurrency bound."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolwire import Agent, BatchRecord, OpenAIChat, RunResult, Usage, UsageError, run_batch
from toolwire.batch import load_results
from toolwire.testing import EmulationServer, Scenario

from ._tools import whoami

pytestmark = pytest.mark.anyio

SCENARIO = Scenario.from_dict(
    {
        "turns": [
            {"tool_calls": [{"name": "whoami", "arguments": {}}]},
            {"text": "好的"},
        ]
    }
)


class Factory:
    """An agent factory against the server that can be told to fail."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.calls = 0
        self.fail_with: Exception | None = None

    def __call__(self) -> Agent:
        self.calls += 1
        if self.fail_with is not None:
            raise self.fail_with
        provider = OpenAIChat(api_key="test-key", base_url=self.base_url)
        return Agent(provider, model="gpt-4.1-mini", tools=[whoami])


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_local_batch_writes_a_line_per_prompt(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    async with EmulationServer(SCENARIO) as server:
        factory = Factory(server.url_for("openai-chat"))
        summary = await run_batch(
            ["a", "b", "c"], factory, mode="local", results_path=results, progress=False
        )
        assert len(server.requests) == 6
    assert factory.calls == 3
    assert summary.total == 3 and summary.answered == 3 and summary.errors == 0
    assert summary.results_path == results
    assert [r.prompt for r in summary.records] == ["a", "b", "c"]
    lines = lines_of(results)
    assert sorted(line["prompt"] for line in lines) == ["a", "b", "c"]
    for line in lines:
        assert set(line) == {
            "index",
            "prompt",
            "run_id",
            "outcome",
            "output",
            "usage",
            "cost",
            "error",
            "turns",
            "tool_calls",
            "elapsed",
        }
        assert line["outcome"] == "answered" and line["output"] == "好的"
        assert line["turns"] == 2 and line["usage"]["output_tokens"] > 0
    assert {r.run_id for r in load_results(results)} == {r.run_id for r in summary.records}


async def test_errors_are_lines_and_rerun_on_resume(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    async with EmulationServer(SCENARIO) as server:
        factory = Factory(server.url_for("openai-chat"))
        factory.fail_with = RuntimeError("cannot connect with api_key=sk-secret123456789")
        failed = await run_batch(
            ["a", "b"], factory, mode="local", results_path=results, progress=False
        )
        assert failed.errors == 2
        error = failed.records[0].error
        assert error is not None and error["type"] == "RuntimeError"
        assert "sk-secret" not in error["message"] and "<redacted>" in error["message"]

        # Without rerun_errors, a line is a line: nothing runs.
        kept = await run_batch(
            ["a", "b"],
            factory,
            mode="local",
            results_path=results,
            progress=False,
            rerun_errors=False,
        )
        assert kept.skipped == 2 and kept.records == ()

        factory.fail_with = None
        again = await run_batch(
            ["a", "b"], factory, mode="local", results_path=results, progress=False
        )
    assert again.skipped == 0 and again.answered == 2
    outcomes = [line["outcome"] for line in lines_of(results)]
    assert outcomes == ["error", "error", "answered", "answered"]
    # A third pass finds everything done: the last line of each prompt wins.
    done = await run_batch(["a", "b"], factory, mode="local", results_path=results, progress=False)
    assert done.skipped == 2 and done.records == ()


async def test_torn_last_line_is_dropped_and_rerun(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    results = tmp_path / "results.jsonl"
    good = BatchRecord(index=0, prompt="a", run_id="r0", outcome="answered", output="x")
    torn = json.dumps({"index": 1, "prompt": "b", "run_id": "r1", "outcome": "answ"})[:30]
    results.write_text(json.dumps(good.to_dict()) + "\n" + torn, encoding="utf-8")
    async with EmulationServer(SCENARIO) as server:
        factory = Factory(server.url_for("openai-chat"))
        with caplog.at_level(logging.WARNING, logger="toolwire.batch"):
            summary = await run_batch(
                ["a", "b"], factory, mode="local", results_path=results, progress=False
            )
    assert "incomplete" in caplog.text
    assert summary.skipped == 1 and [r.prompt for r in summary.records] == ["b"]
    records = load_results(results)
    assert [r.prompt for r in records] == ["a", "b"] and records[0] == good


async def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    good = BatchRecord(index=0, prompt="a", run_id="r0", outcome="answered", output="x")
    results.write_text(json.dumps(good.to_dict()), encoding="utf-8")
    async with EmulationServer(SCENARIO) as server:
        factory = Factory(server.url_for("openai-chat"))
        summary = await run_batch(
            ["a", "b"], factory, mode="local", results_path=results, progress=False
        )
    assert summary.skipped == 1
    assert [r.prompt for r in load_results(results)] == ["a", "b"]


async def test_a_bad_line_in_the_middle_stops_the_batch(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    content = 'not json\n{"prompt": "a", "outcome": "answered"}\n'
    results.write_text(content, encoding="utf-8")

    def never() -> Agent:
        raise AssertionError("no run may start")

    with pytest.raises(UsageError, match=r"results.jsonl:1: not a batch record"):
        await run_batch(["a"], never, mode="local", results_path=results, progress=False)
    assert results.read_text(encoding="utf-8") == content


async def test_duplicate_prompts_run_once_each(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    done = BatchRecord(index=0, prompt="same", run_id="r0", outcome="answered")
    results.write_text(json.dumps(done.to_dict()) + "\n", encoding="utf-8")
    async with EmulationServer(SCENARIO) as server:
        factory = Factory(server.url_for("openai-chat"))
        summary = await run_batch(
            ["same", "same", "other"],
            factory,
            mode="local",
            results_path=results,
            progress=False,
        )
    assert summary.skipped == 1
    assert [(r.index, r.prompt) for r in summary.records] == [(1, "same"), (2, "other")]


class CountingAgent:
    """A stand-in agent for the scheduler: it only tracks overlap."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    async def run(self, prompt: str, *, run_id: str) -> RunResult:
        await self.tracker.enter()
        return RunResult(
            output=prompt.upper(),
            outcome="answered",
            messages=(),
            usage=Usage(),
            tool_calls=(),
            turns=1,
            run_id=run_id,
        )

    async def aclose(self) -> None:
        self.tracker.closed += 1


class Tracker:
    def __init__(self, total: int, limit: int) -> None:
        self.total, self.limit = total, limit
        self.in_flight = self.finished = self.peak = self.closed = 0
        self.changed = anyio.Condition()

    async def enter(self) -> None:
        async with self.changed:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            self.changed.notify_all()
            # Hold the run until the limit is reached (or nothing more can come).
            while self.in_flight < min(self.limit, self.total - self.finished):
                await self.changed.wait()
            self.in_flight -= 1
            self.finished += 1
            self.changed.notify_all()


async def test_concurrency_is_bounded_and_reached() -> None:
    tracker = Tracker(total=7, limit=3)
    reports = []

    async def report(progress: Any) -> None:
        reports.append((progress.done, progress.total))

    summary = await run_batch(
        [f"p{i}" for i in range(7)],
        lambda: CountingAgent(tracker),  # type: ignore[arg-type, return-value]
        mode="local",
        concurrency=3,
        progress=report,
    )
    assert tracker.peak == 3 and tracker.closed == 7
    assert [r.output for r in summary.records] == [f"P{i}" for i in range(7)]
    assert reports == [(i, 7) for i in range(1, 8)]
    assert summary.results_path is None


async def test_progress_bar_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    tracker = Tracker(total=2, limit=1)
    await run_batch(
        ["x", "y"],
        lambda: CountingAgent(tracker),  # type: ignore[arg-type, return-value]
        mode="local",
        progress=True,
    )
    assert "2/2" in capsys.readouterr().err


async def test_bad_arguments() -> None:
    def factory() -> Agent:
        raise AssertionError("unused")

    with pytest.raises(UsageError, match="takes strings"):
        await run_batch(["ok", 3], factory, mode="local")  # type: ignore[list-item]
    with pytest.raises(UsageError, match="concurrency"):
        await run_batch(["ok"], factory, mode="local", concurrency=0)
    with pytest.raises(UsageError, match="mode"):
        await run_batch(["ok"], factory, mode="threads")  # type: ignore[arg-type]


def test_record_from_bad_data() -> None:
    with pytest.raises(UsageError):
        BatchRecord.from_dict(["not", "a", "dict"])
    with pytest.raises(UsageError):
        BatchRecord.from_dict({"prompt": "a", "outcome": "maybe"})
    record = BatchRecord.from_dict({"prompt": "a", "outcome": "error", "turns": True})
    assert record.index == -1 and record.turns == 0 and not record.ok


async def test_a_run_placed_again_waits_for_its_dead_workers_lease(postgres_url: str) -> None:
    # The dead worker took the run's lease and died before the run's first
    # record: the run placed again finds no record, waits for the lease to
    # expire, then runs from the start.
    from toolwire.batch._runs import _run_one
    from toolwire.journal import PostgresJournal

    dead = PostgresJournal(postgres_url, lease_ttl=1.0)
    held = dead.lease("run-1")
    held.__enter__()
    dead.close()  # no renewing, no release: as after kill -9
    journal = PostgresJournal(postgres_url)
    try:
        async with EmulationServer(SCENARIO) as server:
            base_url = server.url_for("openai-chat")

            def factory() -> Agent:
                provider = OpenAIChat(api_key="test-key", base_url=base_url)
                return Agent(provider, model="gpt-4.1-mini", tools=[whoami], journal=journal)

            with anyio.fail_after(30):
                record = await _run_one(factory, "你好", 0, "run-1", resume=True)
        assert (record["outcome"], record["output"]) == ("answered", "好的"), record
        assert journal.load_run("run-1").run.resumes == 0
    finally:
        journal.close()
        del held
