"""Suspending a run that waits for a person or the outside world, and resuming
it from the journal: approvals bound to the exact arguments, fail closed."""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, Approval, ApprovalRequest, RunFinished, tool
from toolwire.examples import PaymentLedger, payment_tool
from toolwire.journal import (
    ApprovalRefused,
    Decision,
    RunLeased,
    SQLiteJournal,
    pending_calls,
    record_decision,
)
from toolwire.run import argument_digest, canonical_arguments
from toolwire.testing import EmulationServer, Scenario
from toolwire.tools import ApprovalFailed

from ._support import make_agent

pytestmark = pytest.mark.anyio

PAY = {"to": "alice", "amount_cents": 1250}


def pay_scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "pay-approved",
            "turns": [
                {"tool_calls": [{"name": "send_payment", "arguments": PAY}]},
                {"text": "paid {result:send_payment.to} {result:send_payment.amount_cents}"},
            ],
        }
    )


def setup(tmp_path: Path) -> tuple[PaymentLedger, SQLiteJournal, Any]:
    ledger = PaymentLedger(tmp_path / "ledger.sqlite3")
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    return ledger, journal, payment_tool(ledger, requires_approval=True)


def test_the_digest_is_sha256_of_canonical_json() -> None:
    arguments = {"b": [1, "é"], "a": {"y": True, "x": None}}
    text = canonical_arguments(arguments)
    assert text == '{"a":{"x":null,"y":true},"b":[1,"é"]}'
    assert argument_digest(arguments) == "sha256:" + hashlib.sha256(text.encode()).hexdigest()


async def test_no_approver_suspends_and_an_approval_resumes_once(tmp_path: Path) -> None:
    ledger, journal, pay = setup(tmp_path)
    with EmulationServer(pay_scenario()) as server:
        agent = make_agent(server, [pay], journal=journal)
        result = await agent.run("pay alice", run_id="run-s1")
        assert result.outcome == "suspended" and not result.ok
        (pending,) = result.pending
        assert (pending.name, pending.awaiting, pending.arguments) == (
            "send_payment",
            "approval",
            PAY,
        )
        assert pending.digest == argument_digest(PAY)
        assert ledger.payments() == []
        log = journal.load_run("run-s1")
        assert log.run.status == "suspended" and log.problems() == []
        assert pending_calls(log) == (pending,)

        # A short id names the run; the approval is journaled with its principal.
        assert record_decision(journal, "run-s", Decision.allow(pending, principal="ops:ann"))
        log = journal.load_run("run-s1")
        assert log.events[-1].kind == "approval"
        assert log.events[-1].data["principal"] == "ops:ann"
        assert log.problems() == []

        resumed = await agent.resume("run-s1")
        again = await agent.resume("run-s1")
        await agent.aclose()
    assert resumed.output == "paid alice 1250" and again.output == resumed.output
    assert [(p["to"], p["amount_cents"]) for p in ledger.payments()] == [("alice", 1250)]


async def test_refusals_fail_closed_and_record_nothing(tmp_path: Path) -> None:
    ledger, journal, pay = setup(tmp_path)
    with EmulationServer(pay_scenario()) as server:
        agent = make_agent(server, [pay], journal=journal)
        (pending,) = (await agent.run("pay alice", run_id="run-r")).pending
        await agent.aclose()
    before = len(journal.load_run("run-r").events)

    def refused(decision: Decision, **options: Any) -> str:
        with pytest.raises(ApprovalRefused) as caught:
            record_decision(journal, "run-r", decision, **options)
        return caught.value.reason

    other = argument_digest({**PAY, "amount_cents": 125000})
    assert refused(Decision(call_id=pending.call_id, decision="allow", digest=other)) == "digest"
    assert refused(Decision(call_id=pending.call_id, decision="allow")) == "digest"
    assert refused(Decision(call_id="call_x", decision="allow", digest=pending.digest)) == (
        "unknown_call"
    )
    expired = Decision.allow(pending, expires_at=1000.0)
    assert refused(expired, now=1001.0) == "expired"
    assert refused(Decision.answer(pending, "done")) == "wrong_kind"
    key = b"k" * 32
    assert refused(Decision.allow(pending), key=key) == "signature"
    assert refused(Decision.allow(pending).signed(b"other", "run-r"), key=key) == "signature"
    assert len(journal.load_run("run-r").events) == before

    signed = Decision.allow(pending, principal="web").signed(key, "run-r")
    assert record_decision(journal, "run-r", signed, key=key)
    assert not record_decision(journal, "run-r", signed, key=key)  # the same answer: once
    assert refused(Decision.deny(pending, "no")) == "conflict"
    assert ledger.payments() == []


async def test_a_denial_from_outside_reaches_the_model(tmp_path: Path) -> None:
    ledger, journal, pay = setup(tmp_path)
    scenario = Scenario.from_dict(
        {
            "name": "pay-denied",
            "turns": [
                {"tool_calls": [{"name": "send_payment", "arguments": PAY}]},
                {"text": "not paid"},
            ],
        }
    )
    with EmulationServer(scenario) as server:
        agent = make_agent(server, [pay], journal=journal)
        (pending,) = (await agent.run("pay alice", run_id="run-d")).pending
        result = await agent.resume(
            "run-d", approvals=[Decision.deny(pending, "over budget", principal="bob")]
        )
        await agent.aclose()
    assert result.output == "not paid" and ledger.payments() == []
    (record,) = result.tool_calls
    assert record.result.error == "denied" and "over budget" in record.result.content


async def test_an_external_tool_suspends_until_its_result_is_given(tmp_path: Path) -> None:
    ran: list[str] = []

    @tool(external=True)
    def ask_human(question: str) -> str:
        """Ask the user a question; a person answers.

        Args:
            question: what to ask.
        """
        ran.append(question)
        return "never"

    scenario = Scenario.from_dict(
        {
            "name": "ask",
            "turns": [
                {"tool_calls": [{"name": "ask_human", "arguments": {"question": "color?"}}]},
                {"text": "you said {result:ask_human.color}"},
            ],
        }
    )
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    with EmulationServer(scenario) as server:
        agent = make_agent(server, [ask_human], journal=journal)
        first = await agent.run("ask", run_id="run-e")
        (pending,) = first.pending
        assert pending.awaiting == "result"
        with pytest.raises(ApprovalRefused):
            await agent.resume("run-e", results={"call_nope": "x"})
        result = await agent.resume(
            "run-e", results={pending.call_id: {"color": "teal"}}, principal="browser"
        )
        await agent.aclose()
    assert result.output == "you said teal" and ran == []
    answer = journal.load_run("run-e").events
    assert [e.data.get("principal") for e in answer if e.kind == "answer"] == ["browser"]


async def test_an_approver_that_raises_is_an_error_not_a_denial(tmp_path: Path) -> None:
    ledger, journal, pay = setup(tmp_path)
    asked: list[ApprovalRequest] = []

    def broken(request: ApprovalRequest) -> Approval:
        asked.append(request)
        raise RuntimeError("approval service down")

    with EmulationServer(pay_scenario()) as server:
        agent = Agent(
            make_agent(server, []).provider,
            model="m",
            tools=[pay],
            approve=broken,
            journal=journal,
        )
        with pytest.raises(ApprovalFailed):
            await agent.run("pay alice", run_id="run-x")
        await agent.aclose()
    assert len(asked) == 1 and ledger.payments() == []
    kinds = [e.kind for e in journal.load_run("run-x").events]
    assert "approval" not in kinds and "tool_outcome" not in kinds
    assert kinds[-1] == "run_failed"


async def test_an_answer_during_a_resume_is_refused_with_a_typed_error(tmp_path: Path) -> None:
    _, journal, pay = setup(tmp_path)
    with EmulationServer(pay_scenario()) as server:
        agent = make_agent(server, [pay], journal=journal)
        (pending,) = (await agent.run("pay alice", run_id="run-l")).pending
        await agent.aclose()
    with journal.lease("run-l"), pytest.raises(RunLeased):
        record_decision(journal, "run-l", Decision.allow(pending))


async def test_resume_stream_takes_the_answers_too(tmp_path: Path) -> None:
    ledger, journal, pay = setup(tmp_path)
    with EmulationServer(pay_scenario()) as server:
        agent = make_agent(server, [pay], journal=journal)
        (pending,) = (await agent.run("pay alice", run_id="run-stream")).pending
        kinds: list[str] = []
        output = None
        async with contextlib.aclosing(
            agent.resume_stream("run-str", approvals=[Decision.allow(pending, principal="ann")])
        ) as events:
            async for event in events:
                kinds.append(event.kind)
                if isinstance(event, RunFinished):
                    output = event.result.output
        await agent.aclose()
    assert output == "paid alice 1250" and kinds[-1] == "run_finished"
    assert len(ledger.payments()) == 1
