"""A journal written by toolwire a87298d (before records had versions) reads
as typed records and resumes: ``tests/fixtures/journals/a87298d.sqlite3``,
made by ``make_a87298d.py`` beside it with a87298d's source."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from toolwire import Agent
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.examples import PaymentLedger, payment_tool
from toolwire.journal import (
    ApprovalGiven,
    Decision,
    ModelRequest,
    ModelResponse,
    RunFinished,
    RunStarted,
    RunSuspended,
    SQLiteJournal,
    ToolIntent,
    ToolOutcome,
    payload_of,
    pending_calls,
    plan_resume,
    record_decision,
)
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

FIXTURE = Path(__file__).parent.parent / "fixtures" / "journals" / "a87298d.sqlite3"
PAY = {"to": "alice", "amount_cents": 1250}


@pytest.fixture
def old_journal(tmp_path: Path) -> Path:
    """A copy of the fixture (a resume writes to it)."""
    path = tmp_path / "a87298d.sqlite3"
    shutil.copyfile(FIXTURE, path)
    path.chmod(0o600)
    return path


def pay_scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "pay",
            "turns": [
                {"tool_calls": [{"name": "send_payment", "arguments": PAY}]},
                {"text": "paid {result:send_payment.to} {result:send_payment.amount_cents}"},
            ],
        }
    )


def test_every_record_reads_as_its_type(old_journal: Path) -> None:
    journal = SQLiteJournal(old_journal, read_only=True)
    try:
        done = journal.load_run("done-1")
        waiting = journal.load_run("wait-1")
        approved = journal.load_run("approved-1")
    finally:
        journal.close()
    assert [type(e.record) for e in done.events] == [
        RunStarted,
        ModelRequest,
        ModelResponse,
        ToolIntent,
        ToolIntent,
        ToolOutcome,
        ToolOutcome,
        ModelRequest,
        ModelResponse,
        RunFinished,
    ]
    start = done.events[0].record
    assert isinstance(start, RunStarted)
    assert (start.model, start.dialect, start.tools) == (
        "gpt-4.1-mini",
        "openai-chat",
        ("lookup", "broken"),
    )
    outcomes = [e.record for e in done.events if isinstance(e.record, ToolOutcome)]
    assert [(o.result or {}).get("ok") for o in outcomes] == [True, False]
    assert not any(o.interrupted or o.may_have_run for o in outcomes)
    end = done.events[-1].record
    assert isinstance(end, RunFinished) and end.output == "it is sunny in Paris"
    assert end.totals is None  # a87298d's records carry no totals: derived on resume
    for log in (done, waiting, approved):
        assert log.problems() == []
    assert isinstance(waiting.events[-1].record, RunSuspended)
    (pending,) = pending_calls(waiting)
    assert (pending.name, pending.arguments) == ("send_payment", PAY)
    approval = approved.events[-1].record
    assert isinstance(approval, ApprovalGiven)
    assert (approval.decision, approval.principal, approval.digest) == (
        "allow",
        "ann",
        pending.digest,
    )
    plan = plan_resume(approved)
    assert plan.turn == 1 and plan.response is not None
    assert plan.totals.model_requests == 1 and plan.totals.usage.input_tokens == 156


def _runs(journal: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "toolwire", "runs", *args, "--journal", str(journal)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_runs_show_reads_each_run(old_journal: Path) -> None:
    shown = _runs(old_journal, "show", "done-1")
    for expected in ("✓ lookup", "✗ broken", "run answered", "answer: it is sunny in Paris"):
        assert expected in shown, shown
    assert "journal problems" not in shown
    timeline = json.loads(_runs(old_journal, "show", "done-1", "--json"))
    assert [len(t["tool_calls"]) for t in timeline["turns"]] == [2, 0]
    assert timeline["turns"][1]["answer"]["text"] == "it is sunny in Paris"
    waiting = _runs(old_journal, "show", "wait-1")
    assert "suspended: waiting on 1 call" in waiting and "send_payment" in waiting
    approved = json.loads(_runs(old_journal, "show", "approved-1", "--json"))
    (call,) = approved["turns"][0]["tool_calls"]
    assert call["approval"]["decision"] == "allow" and call["approval"]["principal"] == "ann"


def _agent(server: EmulationServer, ledger: PaymentLedger, journal: SQLiteJournal) -> Agent:
    _, dialect, model = PROVIDERS["openai-chat"]
    provider = make_provider("openai-chat", base_url=server.url_for(dialect), api_key="sk-x")
    tools = [payment_tool(ledger, requires_approval=True)]
    return Agent(provider, model=model, tools=tools, journal=journal)


async def test_the_suspended_runs_resume_to_their_answer(old_journal: Path, tmp_path: Path) -> None:
    ledger = PaymentLedger(tmp_path / "ledger.sqlite3")
    journal = SQLiteJournal(old_journal)
    try:
        # Approved by a87298d: resumed by this toolwire.
        with EmulationServer(pay_scenario()) as server:
            agent = _agent(server, ledger, journal)
            first = await agent.resume("approved-1")
            # Suspended by a87298d, approved and resumed by this toolwire.
            (pending,) = pending_calls(journal.load_run("wait-1"))
            assert record_decision(journal, "wait-1", Decision.allow(pending, principal="bo"))
            second = await agent.resume("wait-1")
            await agent.aclose()
        assert first.output == second.output == "paid alice 1250"
        assert [(p["to"], p["amount_cents"]) for p in ledger.payments()] == [
            ("alice", 1250),
            ("alice", 1250),
        ]
        for run_id in ("approved-1", "wait-1"):
            log = journal.load_run(run_id)
            assert log.run.status == "answered" and log.problems() == []
            assert isinstance(log.events[-1].record, RunFinished)
            # Each record, a87298d's and this toolwire's, encodes to what is stored.
            assert [payload_of(e.record) for e in log.events] == [e.data for e in log.events]
    finally:
        journal.close()
