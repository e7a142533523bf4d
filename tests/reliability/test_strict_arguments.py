"""The model's arguments are held to JSON as written, through a whole agent run
over HTTP: a payment tool never pays what the model did not say (``true`` is
not 1 cent, ``"500"`` and ``500.0`` are not 500), NaN and Infinity are not
numbers, a key written twice is refused, and a NUL character is refused unless
the tool opts in. Each refusal is an ``invalid_arguments`` result the model can
act on, the tool never runs, and the journal records it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, ToolContext, tool
from toolwire.examples.payments import PaymentLedger, payment_tool
from toolwire.journal import open_journal
from toolwire.providers import OpenAIChat
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio


REFUSED = {
    "bool for an integer": '{"to": "alice", "amount_cents": true}',
    "string for an integer": '{"to": "alice", "amount_cents": "500"}',
    "float for an integer": '{"to": "alice", "amount_cents": 500.0}',
    "duplicate key": '{"to": "alice", "amount_cents": 1, "amount_cents": 500}',
    "NUL in a string": '{"to": "ali\\u0000ce", "amount_cents": 500}',
}


def scenario(raw: str) -> Scenario:
    return Scenario.from_dict(
        {
            "name": "strict",
            "turns": [
                {"tool_calls": [{"name": "send_payment", "arguments": raw}], "chunk_size": 7},
                {"text": "told: {result:send_payment}"},
            ],
        }
    )


async def run(raw: str, tools: list[Any], journal: Path) -> Any:
    with EmulationServer(scenario(raw)) as server:
        agent = Agent(
            OpenAIChat(base_url=server.url_for("openai-chat"), api_key="test"),
            model="test",
            tools=tools,
            journal=journal,
        )
        try:
            return await agent.run("pay alice")
        finally:
            await agent.aclose()


@pytest.mark.parametrize("raw", list(REFUSED.values()), ids=list(REFUSED))
async def test_arguments_that_are_not_strict_json_are_refused(raw: str, tmp_path: Path) -> None:
    ledger = PaymentLedger()
    journal = tmp_path / "journal.sqlite3"
    result = await run(raw, [payment_tool(ledger)], journal)
    assert len(ledger) == 0, "nothing was paid"
    [record] = result.tool_calls
    assert (record.result.ok, record.result.error, record.result.attempts) == (
        False,
        "invalid_arguments",
        0,
    )
    assert "Invalid arguments for tool 'send_payment'" in record.result.message
    assert "amount_cents" in record.result.message or "to" in record.result.message
    # The model was told, and the journal holds the refusal.
    assert result.output.startswith("told: ")
    log = open_journal(journal).load_run(result.run_id)
    [outcome] = [e for e in log.events if e.kind == "tool_outcome"]
    assert outcome.data["result"]["error"] == "invalid_arguments"


NOT_NUMBERS = {
    "NaN": ('{"limit": NaN}', "not valid JSON"),
    "Infinity": ('{"limit": Infinity}', "not valid JSON"),
    "-Infinity": ('{"limit": -Infinity}', "not valid JSON"),
    "overflowing number": ('{"limit": 1e999}', "too large for a float"),
}


@pytest.mark.parametrize(("raw", "why"), list(NOT_NUMBERS.values()), ids=list(NOT_NUMBERS))
async def test_nan_and_infinity_are_not_numbers(raw: str, why: str, tmp_path: Path) -> None:
    limits: list[float] = []

    @tool(name="send_payment")
    def set_limit(limit: float) -> str:
        """Set a spending limit."""
        limits.append(limit)
        return "set"

    result = await run(raw, [set_limit], tmp_path / "journal.sqlite3")
    assert limits == []
    [record] = result.tool_calls
    assert record.result.error == "invalid_arguments"
    assert why in record.result.message and "Nothing was run" in record.result.message


async def test_the_same_payment_written_strictly_is_paid(tmp_path: Path) -> None:
    ledger = PaymentLedger()
    result = await run(
        '{"to": "alice", "amount_cents": 500}', [payment_tool(ledger)], tmp_path / "j.sqlite3"
    )
    assert [(p["to"], p["amount_cents"]) for p in ledger.payments()] == [("alice", 500)]
    assert result.tool_calls[0].result.ok


async def test_a_tool_may_opt_in_to_nul_and_to_lax_coercion(tmp_path: Path) -> None:
    received: list[tuple[str, int]] = []

    @tool(name="send_payment", allow_nul=True, coerce=True)
    def lax_payment(to: str, amount_cents: int, ctx: ToolContext) -> str:
        """A tool that accepts what a lax parser would."""
        received.append((to, amount_cents))
        return "ok"

    raw = '{"to": "ali\\u0000ce", "amount_cents": "500"}'
    result = await run(raw, [lax_payment], tmp_path / "j.sqlite3")
    assert received == [("ali\x00ce", 500)]
    assert result.tool_calls[0].result.ok
