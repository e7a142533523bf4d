"""Through ``Agent.run``, the tool layer alone decides what is a duplicate and
asks for approval: identical side-effecting calls of one turn run once however
the model wrote their JSON, and the caller's approval callback is used as
given, never replaced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, Approval, ApprovalRequest, Toolbox, ToolContext, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.journal import open_journal
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

# The same arguments three ways: keys reordered at every level, unicode
# literal or escaped, spacing changed. Parsed, they are one value.
SAME_CHARGE = [
    '{"amount_cents": 500, "order": {"id": "A-1", "tags": ["gift", "杭州"]}, "note": "茶 ☕"}',
    '{"note":"\\u8336 \\u2615","order":{"tags":["gift","\\u676d\\u5dde"],"id":"A-1"},'
    '"amount_cents":500}',
    '{ "order" : { "id" : "A-1" , "tags" : [ "gift" , "杭州" ] } ,\n "amount_cents" : 500 ,'
    ' "note" : "茶 ☕" }',
]
OTHER_CHARGE = (
    '{"amount_cents": 500, "order": {"id": "A-1", "tags": ["杭州", "gift"]}, "note": "茶 ☕"}'
)


class Ledger:
    def __init__(self) -> None:
        self.charges: list[dict[str, Any]] = []

        @tool(requires_approval=True)
        def charge(amount_cents: int, order: dict[str, Any], note: str, ctx: ToolContext) -> str:
            """Charge a customer (a side effect: must run once per distinct call)."""
            self.charges.append({"amount_cents": amount_cents, "order": order, "note": note})
            return f"charged {amount_cents}"

        self.charge = charge


def scenario(raw_arguments: list[str]) -> Scenario:
    return Scenario.from_dict(
        {
            "name": "charges",
            "turns": [
                {"tool_calls": [{"name": "charge", "arguments": raw} for raw in raw_arguments]},
                {"text": "done"},
            ],
        }
    )


def agent_for(server: EmulationServer, name: str, toolbox: Toolbox, journal: Path) -> Agent:
    _, dialect, model = PROVIDERS[name]
    provider = make_provider(name, base_url=server.url_for(dialect), api_key="test-key")
    return Agent(provider, model=model, tools=toolbox, journal=journal)


@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_identical_calls_with_reordered_keys_run_once(name: str, tmp_path: Path) -> None:
    ledger = Ledger()
    asked: list[dict[str, Any]] = []

    def approve(request: ApprovalRequest) -> Approval:
        asked.append(request.arguments)
        return Approval.allow()

    toolbox = Toolbox([ledger.charge], approve=approve)
    journal = tmp_path / "journal.sqlite3"
    with EmulationServer(scenario([*SAME_CHARGE, OTHER_CHARGE])) as server:
        agent = agent_for(server, name, toolbox, journal)
        try:
            result = await agent.run("charge it")
        finally:
            await agent.aclose()

    assert result.output == "done"
    # One charge for the three spellings of one call, one for the call whose
    # list is in another order (a list's order is part of its value).
    # (The two run concurrently: their order is not fixed.)
    tags = sorted(c["order"]["tags"] for c in ledger.charges)
    assert tags == [["gift", "杭州"], ["杭州", "gift"]]
    assert len(asked) == 2
    records = result.tool_calls
    assert [r.result.ok for r in records] == [True, True, True, True]
    first = records[0].call.id
    assert [r.result.deduplicated_from for r in records] == [None, first, first, None]
    # The caller's callback is the toolbox's, untouched by the run.
    assert toolbox.approve is approve

    # The journal holds every call's intent and outcome, and the two decisions.
    log = open_journal(journal).load_run(result.run_id)
    kinds = [event.kind for event in log.events]
    assert kinds.count("approval") == 2
    outcomes = [e for e in log.events if e.kind == "tool_outcome"]
    assert [e.kind for e in log.events].count("tool_intent") == 4
    assert len(outcomes) == 4


async def test_approval_decisions_are_recorded_without_a_swapped_callback(
    tmp_path: Path,
) -> None:
    ledger = Ledger()

    # The two calls are asked about concurrently, in no fixed order: the
    # decision goes by the call, not by the order of the questions.
    async def approve(request: ApprovalRequest) -> Approval:
        if request.arguments["order"]["tags"] == ["gift", "杭州"]:
            return Approval.deny("not today")
        return Approval.allow()

    toolbox = Toolbox([ledger.charge], approve=approve)
    journal = tmp_path / "journal.sqlite3"
    distinct = [SAME_CHARGE[0], OTHER_CHARGE]
    with EmulationServer(scenario(distinct)) as server:
        agent = agent_for(server, "openai-chat", toolbox, journal)
        try:
            result = await agent.run("charge it")
        finally:
            await agent.aclose()
    assert toolbox.approve is approve
    assert [r.result.error for r in result.tool_calls] == ["denied", None]
    assert [c["order"]["tags"] for c in ledger.charges] == [["杭州", "gift"]]
    log = open_journal(journal).load_run(result.run_id)
    recorded = {e.call_id: e.data["decision"] for e in log.events if e.kind == "approval"}
    denied, allowed = (r.call.id for r in result.tool_calls)
    assert recorded == {denied: "deny", allowed: "allow"}
