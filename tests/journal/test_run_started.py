"""The run id comes first: ``Agent.stream`` and ``Agent.resume_stream`` open
with :class:`RunStarted`, before any request, so a caller knows what to
resume even when the run stops (or fails) on its first step."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolwire import RunFinished, RunStarted, ToolwireError
from toolwire.examples import PaymentLedger, payment_tool
from toolwire.journal import Decision, SQLiteJournal
from toolwire.run import AgentEvent
from toolwire.testing import EmulationServer

from ._support import make_agent
from .test_suspend import pay_scenario

pytestmark = pytest.mark.anyio


async def test_stream_and_resume_stream_open_with_the_run_id(tmp_path: Path) -> None:
    ledger = PaymentLedger(tmp_path / "ledger.sqlite3")
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    pay = payment_tool(ledger, requires_approval=True)
    with EmulationServer(pay_scenario()) as server:
        agent = make_agent(server, [pay], journal=journal)
        events = [event async for event in agent.stream("pay alice")]
        first, last = events[0], events[-1]
        assert isinstance(first, RunStarted) and isinstance(last, RunFinished)
        assert not first.resumed
        assert first.run_id == last.result.run_id and len(first.run_id) == 32
        assert [e for e in events if isinstance(e, RunStarted)] == [first]
        assert last.result.outcome == "suspended"

        (pending,) = last.result.pending
        approval = Decision.allow(pending, principal="ops:ann")
        resumed: list[AgentEvent] = [
            event async for event in agent.resume_stream(first.run_id[:8], approvals=[approval])
        ]
        await agent.aclose()
    assert resumed[0] == RunStarted(run_id=first.run_id, resumed=True)  # the short id, resolved
    finished = resumed[-1]
    assert isinstance(finished, RunFinished) and finished.result.outcome == "answered"
    assert len(ledger.payments()) == 1


async def test_the_run_id_is_told_before_the_first_request_fails(tmp_path: Path) -> None:
    with EmulationServer({"turns": [{"text": "x", "faults": [{"status": 400}]}]}) as server:
        agent = make_agent(server, [], journal=SQLiteJournal(tmp_path / "j.sqlite3"))
        seen: list[AgentEvent] = []
        with pytest.raises(ToolwireError):
            async for event in agent.stream("hello", run_id="run-fails-early"):
                seen.append(event)
        await agent.aclose()
    assert seen[0] == RunStarted(run_id="run-fails-early")
