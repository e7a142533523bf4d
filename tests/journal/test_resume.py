"""Resuming an interrupted run: recorded outcomes are reused, interrupted
calls run again only when that is safe, approvals are asked again, and the
answer is the one an uninterrupted run gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolwire import Approval, ApprovalRequest, Toolbox, UsageError
from toolwire.journal import Journal, JournalError, SQLiteJournal, default_journal_path
from toolwire.testing import EmulationServer, Scenario

from ._support import (
    Counter,
    CrashAt,
    crashing_agent,
    expect_crash,
    expected_answer,
    make_agent,
    scenario,
)
from .conftest import OpenJournal

pytestmark = pytest.mark.anyio


async def crash_then_resume(
    tmp_path: Path, open_journal: OpenJournal, crash: CrashAt, *, before_journal: bool
) -> tuple[Counter, Any, Journal, EmulationServer]:
    """A run dies at ``crash``; another worker (another journal object on the
    same store) resumes it."""
    counter = Counter(tmp_path / "ledger.sqlite3")
    journal = open_journal()
    server = EmulationServer(scenario()).start()
    first = crashing_agent(server, counter.tools, journal, crash, before_journal=before_journal)
    await expect_crash(first.run("pay alice", run_id="run-1"))
    await first.aclose()
    second = make_agent(server, counter.tools, journal=open_journal())
    result = await second.resume("run-1")
    await second.aclose()
    return counter, result, journal, server


async def test_an_uninterrupted_run_is_recorded_step_by_step(tmp_path: Path) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    with EmulationServer(scenario()) as server:
        agent = make_agent(server, counter.tools, journal=str(tmp_path / "j.sqlite3"))
        result = await agent.run("pay alice")
        await agent.aclose()
    assert result.output == expected_answer(counter)
    assert agent.journal is not None
    log = agent.journal.load_run(result.run_id)
    kinds = [e.kind for e in log.events]
    assert kinds[:3] == ["run_started", "model_request", "model_response"]
    assert kinds.count("tool_intent") == 3 and kinds.count("tool_outcome") == 3
    assert kinds[-1] == "run_finished" and log.problems() == []
    for event in log.events:
        if event.kind == "tool_outcome":
            intent = next(
                e for e in log.events if e.kind == "tool_intent" and e.call_id == event.call_id
            )
            assert intent.seq < event.seq
    assert log.run.status == "answered" and log.run.output == result.output
    assert log.run.tool_calls == 3 and log.run.turns == 2
    assert [m["kind"] for m in log.messages] == ["user", "assistant"] + ["tool_result"] * 3


async def test_a_crash_after_the_tool_ran_but_before_its_outcome_was_recorded(
    tmp_path: Path,
    open_journal: OpenJournal,
) -> None:
    # notify is not idempotent: it ran once, and must not run again.
    counter, result, journal, server = await crash_then_resume(
        tmp_path, open_journal, CrashAt("tool_finished", name="notify"), before_journal=True
    )
    server.stop()
    assert counter.notes == ["paying alice"], "the non-idempotent tool ran exactly once"
    assert len(counter.ledger.payments()) == 1
    assert result.output == expected_answer(counter)
    notify = next(r for r in result.tool_calls if r.call.name == "notify")
    assert json.loads(notify.result.content)["error"] == "interrupted"
    log = journal.load_run("run-1")
    assert any(e.kind == "tool_outcome" and e.data["interrupted"] for e in log.events)
    assert log.run.status == "answered" and log.run.resumes == 1
    # The model was told: the interrupted result went back in the next request.
    second_request = json.dumps(server.requests[-1], ensure_ascii=False)
    assert "interrupted" in second_request


async def test_a_crash_after_the_intent_reruns_idempotent_and_read_only_tools(
    tmp_path: Path,
    open_journal: OpenJournal,
) -> None:
    # Crash right after the payment's intent is committed, before its body.
    counter, result, _, server = await crash_then_resume(
        tmp_path, open_journal, CrashAt("tool_started", name="send_payment"), before_journal=False
    )
    server.stop()
    assert len(counter.ledger.payments()) == 1
    assert result.output == expected_answer(counter)
    payment = next(r for r in result.tool_calls if r.call.name == "send_payment")
    assert payment.result.ok and json.loads(payment.result.content)["status"] == "sent"


async def test_a_payment_that_ran_before_the_crash_is_not_paid_twice(
    tmp_path: Path, open_journal: OpenJournal
) -> None:
    counter, result, journal, server = await crash_then_resume(
        tmp_path, open_journal, CrashAt("tool_finished", name="send_payment"), before_journal=True
    )
    server.stop()
    (payment,) = counter.ledger.payments()
    record = next(r for r in result.tool_calls if r.call.name == "send_payment")
    # Run again with the same idempotency key: the ledger recognised it.
    assert json.loads(record.result.content)["status"] == "already_sent"
    assert json.loads(record.result.content)["payment_id"] == payment["payment_id"]
    assert result.output == expected_answer(counter)
    intents = [
        e
        for e in journal.load_run("run-1").events
        if e.kind == "tool_intent" and e.data["name"] == "send_payment"
    ]
    assert len(intents) == 2
    assert intents[0].data["idempotency_key"] == intents[1].data["idempotency_key"]
    assert intents[0].data["idempotency_key"] == payment["idempotency_key"]


async def test_recorded_outcomes_are_reused_not_run_again(
    tmp_path: Path, open_journal: OpenJournal
) -> None:
    # Crash before turn 2's request is recorded: every tool outcome is on disk.
    counter, result, _, server = await crash_then_resume(
        tmp_path, open_journal, CrashAt("model_request", nth=2), before_journal=True
    )
    server.stop()
    assert counter.notes == ["paying alice"] and counter.weather == 1
    assert len(counter.ledger.payments()) == 1
    assert result.output == expected_answer(counter)
    assert result.turns == 2 and len(result.tool_calls) == 3
    assert all(r.result.ok for r in result.tool_calls)


async def test_a_turn_whose_answer_was_not_recorded_is_requested_again(
    tmp_path: Path, open_journal: OpenJournal
) -> None:
    counter, result, journal, server = await crash_then_resume(
        tmp_path, open_journal, CrashAt("model_response"), before_journal=True
    )
    requests = len(server.requests)
    server.stop()
    assert requests == 3, "turn 1 twice (the crash, the resume), then turn 2"
    assert result.output == expected_answer(counter)
    assert counter.notes == ["paying alice"] and counter.weather == 1
    log = journal.load_run("run-1")
    assert [e.kind for e in log.events].count("model_request") == 3
    assert log.problems() == []


async def test_resuming_a_finished_run_sends_nothing(tmp_path: Path) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    with EmulationServer(scenario()) as server:
        agent = make_agent(server, counter.tools)
        result = await agent.run("pay alice")
        count = len(server.requests)
        again = await agent.resume(result.run_id)
        assert len(server.requests) == count
        await agent.aclose()
    assert again.output == result.output and again.outcome == "answered"
    assert again.turns == result.turns and again.usage == result.usage
    assert [r.call.id for r in again.tool_calls] == [r.call.id for r in result.tool_calls]
    assert [type(m) for m in again.messages] == [type(m) for m in result.messages]


async def test_the_default_journal_is_the_environment_s(
    tmp_path: Path, _hermetic_journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert default_journal_path() == _hermetic_journal
    counter = Counter(tmp_path / "ledger.sqlite3")
    with EmulationServer(scenario()) as server:
        agent = make_agent(server, counter.tools)
        result = await agent.run("pay alice")
        await agent.aclose()
    assert await anyio.Path(_hermetic_journal).exists()
    journal = SQLiteJournal(_hermetic_journal)
    assert journal.load_run(result.run_id).run.status == "answered"
    journal.close()
    monkeypatch.setenv("TOOLWIRE_JOURNAL", "off")
    assert default_journal_path() is None
    monkeypatch.delenv("TOOLWIRE_JOURNAL")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert default_journal_path() == tmp_path / "state" / "toolwire" / "journal.sqlite3"


async def test_without_a_journal_nothing_is_written_and_resume_is_refused(
    tmp_path: Path, _hermetic_journal: Path
) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    with EmulationServer(scenario()) as server:
        agent = make_agent(server, counter.tools, journal=False)
        result = await agent.run("pay alice")
        with pytest.raises(UsageError, match="needs a journal"):
            await agent.resume(result.run_id)
        await agent.aclose()
        with pytest.raises(UsageError):
            make_agent(server, counter.tools, journal=42)  # type: ignore[arg-type]
    assert agent.journal is None and not await anyio.Path(_hermetic_journal).exists()


async def test_an_unknown_run_is_a_journal_error(tmp_path: Path) -> None:
    with EmulationServer(scenario()) as server:
        agent = make_agent(server, [])
        with pytest.raises(JournalError, match="no run"):
            await agent.resume("nope")
        await agent.aclose()


async def test_a_run_id_cannot_be_reused(tmp_path: Path) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    with EmulationServer(scenario()) as server:
        agent = make_agent(server, counter.tools)
        await agent.run("pay alice", run_id="same")
        with pytest.raises(JournalError, match="already in the journal"):
            await agent.run("pay alice", run_id="same")
        await agent.aclose()
    assert len(counter.ledger.payments()) == 1


# -- approvals -------------------------------------------------------------------------


def approval_scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "approve",
            "turns": [
                {"tool_calls": [{"name": "notify", "arguments": {"text": "hello"}}]},
                {"text": "done: {result:notify}"},
            ],
        }
    )


async def test_approval_is_recorded_and_asked_again_on_resume(tmp_path: Path) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    asked: list[str] = []

    def approve(request: ApprovalRequest) -> Approval:
        asked.append(request.call_id)
        return Approval.allow()

    guarded = counter.guarded_notify
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    with EmulationServer(approval_scenario()) as server:
        # The process dies after the intent, before the approver is asked.
        crash = CrashAt("tool_started", name="notify")
        first = crashing_agent(
            server, Toolbox([guarded], approve=approve), journal, crash, before_journal=False
        )
        await expect_crash(first.run("say hello", run_id="run-b"))
        await first.aclose()
        assert asked == [] and counter.notes == []
        second = make_agent(server, Toolbox([guarded], approve=approve), journal=journal)
        result = await second.resume("run-b")
        await second.aclose()
    assert len(asked) == 1, "approval was asked on resume"
    assert counter.notes == ["hello"] and result.output == "done: sent"
    log = journal.load_run("run-b")
    approvals = [e for e in log.events if e.kind == "approval"]
    assert [a.data["decision"] for a in approvals] == ["allow"]


async def test_an_approved_call_that_may_have_run_is_not_run_again(tmp_path: Path) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    asked: list[str] = []

    def approve(request: ApprovalRequest) -> bool:
        asked.append(request.call_id)
        return True

    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    with EmulationServer(approval_scenario()) as server:
        counter.die_in_notify = True
        first = make_agent(
            server, Toolbox([counter.guarded_notify], approve=approve), journal=journal
        )
        await expect_crash(first.run("say hello", run_id="run-c"))
        await first.aclose()
        counter.die_in_notify = False
        second = make_agent(
            server, Toolbox([counter.guarded_notify], approve=approve), journal=journal
        )
        result = await second.resume("run-c")
        await second.aclose()
    assert len(asked) == 1 and counter.notes == []
    assert json.loads(result.tool_calls[0].result.content)["error"] == "interrupted"
    assert result.output.startswith("done: ")


async def test_a_recorded_denial_stays_a_denial(tmp_path: Path) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    guarded = counter.guarded_notify
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    asked: list[str] = []

    def deny(request: ApprovalRequest) -> Approval:
        asked.append(request.call_id)
        return Approval.deny("not today")

    def allow(request: ApprovalRequest) -> bool:
        asked.append(request.call_id)
        return True

    with EmulationServer(approval_scenario()) as server:
        crash = CrashAt("tool_finished", name="notify")
        first = crashing_agent(
            server, Toolbox([guarded], approve=deny), journal, crash, before_journal=True
        )
        await expect_crash(first.run("say hello", run_id="run-d"))
        await first.aclose()
        second = make_agent(server, Toolbox([guarded], approve=allow), journal=journal)
        result = await second.resume("run-d")
        await second.aclose()
    assert len(asked) == 1, "the denial was not asked about again"
    assert counter.notes == []
    record = result.tool_calls[0]
    assert record.result.error == "denied" and "not today" in record.result.content


async def test_a_batch_run_whose_worker_died_is_resumed_not_run_again(
    tmp_path: Path, store: str, open_journal: OpenJournal
) -> None:
    """What a batch does when a run's Ray worker dies: another worker resumes
    the run, waiting for the dead worker's lease, and no effect runs twice."""
    from toolwire.batch._runs import _run_one

    from .test_lease import _holder

    counter = Counter(tmp_path / "ledger.sqlite3")
    with EmulationServer(scenario()) as server:
        crash = CrashAt("tool_finished", name="notify")
        first = crashing_agent(server, counter.tools, open_journal(), crash, before_journal=True)
        await expect_crash(first.run("pay alice", run_id="run-1"))
        await first.aclose()
        dead = _holder(store, "run-1")  # the worker died holding the run's lease
        dead.kill()
        dead.communicate()

        def factory() -> Any:
            return make_agent(server, counter.tools, journal=store)

        record = await _run_one(factory, "pay alice", 0, "run-1", resume=True)
        assert record["outcome"] == "answered", record
        assert record["output"] == expected_answer(counter)
        fresh = await _run_one(factory, "pay alice", 1, "run-2", resume=True)
    assert fresh["outcome"] == "answered", fresh  # a run never journaled starts afresh
    assert len(counter.notes) == 2  # once for each run: the resume did not notify again
    log = open_journal().load_run("run-1")
    assert log.run.resumes == 1 and log.run.status == "answered" and log.problems() == []
