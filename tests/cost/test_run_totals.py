"""A run's totals live in its journal: each resume goes on counting its limits
from them, whichever agent object (or process) resumes it, and a journal
written before the records carried totals still resumes, its totals derived
from its usage records.

Each resume below is made by a new Agent on the same journal file: nothing
is carried in memory. Against the emulation server; wall time with fake clocks."""

from __future__ import annotations

import json
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, UsageLimitExceeded, tool
from toolwire.cost import Cost, Prices, Rates, RunTotals, UsageLimits
from toolwire.journal import Decision, JournalError, SQLiteJournal, plan_resume
from toolwire.journal._totals import totals_from_record, totals_record
from toolwire.providers import OpenAIChat
from toolwire.run import RunResult
from toolwire.testing import EmulationServer, Scenario
from toolwire.types import Usage

pytestmark = pytest.mark.anyio

FEE = Decimal("0.008")
PRICES = Prices({"pay": Rates(input=0, output=0, per_request=FEE)}, data=False)


class FakeClock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def pay_twice() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "pay-twice",
            "turns": [
                {"tool_calls": [{"name": "send_payment", "arguments": {"to": "ann"}}]},
                {"tool_calls": [{"name": "send_payment", "arguments": {"to": "bob"}}]},
                {"text": "paid both"},
            ],
        }
    )


def agent_for(
    server: EmulationServer,
    journal: Path,
    paid: list[str],
    clock: FakeClock | None = None,
    **limits: Any,
) -> Agent:
    @tool(requires_approval=True)
    def send_payment(to: str) -> str:
        """Send a payment.

        Args:
            to: who receives it.
        """
        paid.append(to)
        if clock is not None:
            clock.now += 30
        return f"paid {to}"

    @tool(read_only=True)
    def lookup(key: str) -> str:
        """Look a key up.

        Args:
            key: what to look up.
        """
        if clock is not None:
            clock.now += 30
        return f"value of {key}"

    options: dict[str, Any] = {"clock": clock} if clock is not None else {}
    return Agent(
        OpenAIChat(base_url=server.url_for("openai-chat"), api_key="test-key"),
        model="pay",
        tools=[send_payment, lookup],
        journal=journal,
        prices=PRICES,
        limits=UsageLimits(**limits, **options),
    )


async def approve_and_resume(agent: Agent, result: RunResult) -> RunResult:
    (pending,) = result.pending
    try:
        return await agent.resume(result.run_id, approvals=[Decision.allow(pending)])
    finally:
        await agent.aclose()


async def first_run(agent: Agent) -> RunResult:
    try:
        return await agent.run("pay ann and bob", run_id="run-totals")
    finally:
        await agent.aclose()


async def test_the_request_limit_counts_every_resume(tmp_path: Path) -> None:
    journal, paid = tmp_path / "j.sqlite3", list[str]()
    with EmulationServer(pay_twice()) as server:
        first = await first_run(agent_for(server, journal, paid, model_requests=2))
        second = await approve_and_resume(agent_for(server, journal, paid, model_requests=2), first)
        assert second.outcome == "suspended" and paid == ["ann"]
        assert second.cost == Cost(total=2 * FEE)  # the whole run's, so far
        with pytest.raises(UsageLimitExceeded) as stopped:
            await approve_and_resume(agent_for(server, journal, paid, model_requests=2), second)
        requests = len(server.requests)
    assert stopped.value.limit == "model_requests" and stopped.value.value == 3
    assert requests == 2 and paid == ["ann", "bob"]
    store = SQLiteJournal(journal, read_only=True)
    try:
        (run,) = store.list_runs()
        totals = plan_resume(store.load_run(run.run_id)).totals
    finally:
        store.close()
    assert run.status == "limit"
    assert (totals.model_requests, totals.tool_calls, totals.cost) == (3, 2, Cost(total=2 * FEE))


def lookup_then_pay() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "lookup-then-pay",
            "turns": [
                {"tool_calls": [{"name": "lookup", "arguments": {"key": "a"}}]},
                {"tool_calls": [{"name": "send_payment", "arguments": {"to": "ann"}}]},
                {"text": "done"},
            ],
        }
    )


async def test_wall_time_counts_each_process_and_not_the_wait_between(tmp_path: Path) -> None:
    journal, paid = tmp_path / "j.sqlite3", list[str]()
    with EmulationServer(lookup_then_pay()) as server:
        # 30 s in the first process (the lookup), then the run waits for its approval.
        early = FakeClock(1000.0)
        first = await first_run(agent_for(server, journal, paid, early, wall_time=50))
        assert first.outcome == "suspended"
        # Another process, another clock: its 30 s (the payment) make 60 in all.
        late = FakeClock(99_000.0)
        with pytest.raises(UsageLimitExceeded) as stopped:
            await approve_and_resume(agent_for(server, journal, paid, late, wall_time=50), first)
        requests = len(server.requests)
    assert stopped.value.limit == "wall_time" and stopped.value.value == 60
    assert paid == ["ann"] and requests == 2


def strip_totals(journal: Path) -> None:
    """Make the journal one written before records carried totals."""
    with sqlite3.connect(journal) as db:
        db.execute("UPDATE events SET data = json_remove(data, '$.totals')")
        db.execute("UPDATE runs SET summary = json_remove(summary, '$.totals', '$.cost')")
    with sqlite3.connect(journal) as db:
        assert not db.execute("SELECT 1 FROM events WHERE data LIKE '%totals%'").fetchall()


async def test_a_journal_without_totals_resumes_with_totals_derived(tmp_path: Path) -> None:
    journal, paid = tmp_path / "j.sqlite3", list[str]()
    with EmulationServer(pay_twice()) as server:
        first = await first_run(agent_for(server, journal, paid, model_requests=1))
        strip_totals(journal)
        store = SQLiteJournal(journal, read_only=True)
        try:
            derived = plan_resume(store.load_run("run-totals")).totals
        finally:
            store.close()
        assert (derived.model_requests, derived.tool_calls) == (1, 1)
        assert derived.cost == Cost(total=FEE) and derived.known_cost == FEE
        with pytest.raises(UsageLimitExceeded) as stopped:
            await approve_and_resume(agent_for(server, journal, paid, model_requests=1), first)
        requests = len(server.requests)
    assert stopped.value.limit == "model_requests"
    assert requests == 1 and paid == ["ann"]


async def test_totals_that_are_not_toolwires_are_a_journal_error(tmp_path: Path) -> None:
    journal, paid = tmp_path / "j.sqlite3", list[str]()
    with EmulationServer(pay_twice()) as server:
        first = await first_run(agent_for(server, journal, paid, model_requests=5))
        with sqlite3.connect(journal) as db:
            bad = json.dumps({**totals_record(RunTotals()), "model_requests": -1})
            db.execute("UPDATE events SET data = json_set(data, '$.totals', json(?))", (bad,))
        with pytest.raises(JournalError, match="model_requests -1"):
            await approve_and_resume(agent_for(server, journal, paid, model_requests=5), first)
    assert paid == []


def test_totals_read_back_as_written() -> None:
    totals = RunTotals(
        usage=Usage(input_tokens=120, output_tokens=40, reasoning_tokens=12, cached_tokens=100),
        cost=None,
        known_cost=Decimal("0.0123456789"),
        model_requests=3,
        tool_calls=2,
        wall_time=12.5,
    )
    record = json.loads(json.dumps(totals_record(totals)))
    assert totals_from_record(record) == totals
    for broken in (
        {**record, "version": 2},
        {**record, "tool_calls": True},
        {**record, "known_cost": "-1"},
        {**record, "known_cost": "NaN"},
        {**record, "wall_time": float("inf")},
        {**record, "usage": {"input_tokens": 1.5}},
        {**record, "cost": {"total": "x"}},
        "totals",
    ):
        with pytest.raises(JournalError):
            totals_from_record(broken)
