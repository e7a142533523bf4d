"""Repair never changes what the model meant, over real HTTP: a number at the
cut, a key written twice, pay nothing; a call that needed repair runs only on
a tool that allows it, and is flagged in events, approvals, the journal,
``runs show`` and OTel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.agent.test_agent_http import PROVIDER_NAMES, agent_for, collect
from toolwire import ToolCallReady, tool
from toolwire.cli import main as cli_main
from toolwire.journal import SQLiteJournal
from toolwire.testing import EmulationServer, Scenario
from toolwire.tools import Approval, ApprovalRequest

pytestmark = pytest.mark.anyio

TEXT_PROVIDERS = [n for n in PROVIDER_NAMES if n != "gemini"]  # Gemini sends objects


class Bank:
    def __init__(self) -> None:
        self.paid: list[tuple[str, int]] = []
        self.looked_up: list[str] = []

        @tool
        def pay(to: str, cents: int) -> str:
            """Pay someone.

            Args:
                to: who is paid.
                cents: how much.
            """
            self.paid.append((to, cents))
            return "paid"

        @tool(read_only=True)
        def balance(of: str) -> int:
            """The balance of an account.

            Args:
                of: the account.
            """
            self.looked_up.append(of)
            return 100

        self.tools = [pay, balance]


def resend(first: str, name: str = "pay", good: dict[str, Any] | None = None) -> Scenario:
    return Scenario.from_dict(
        {
            "name": "repair",
            "turns": [
                {"tool_calls": [{"name": name, "arguments": first}]},
                {
                    "text": "the error was not reported",
                    "if_error": {
                        "tool_calls": [
                            {"name": name, "arguments": good or {"to": "Alice", "cents": 500}}
                        ]
                    },
                },
                {"text": "done"},
            ],
        }
    )


@pytest.mark.parametrize("name", TEXT_PROVIDERS)
@pytest.mark.parametrize(
    "arguments",
    [
        '{"to": "Alice", "cents": 5',  # the number was cut: it may have been 500
        '{"to":"alice","to":"mallory","cents":5',  # a key twice, and a number at the cut
        '{"to":"alice","to":"mallory","cents":5,}',  # a key twice in repaired text
        '{"to": "Alice", "cents": 5,}',  # unambiguous, but pay is not read-only
        '```json\n{"to": "Alice", "cents": 5}\n```',
    ],
)
async def test_nothing_is_paid_on_arguments_that_needed_repair(name: str, arguments: str) -> None:
    bank = Bank()
    with EmulationServer(resend(arguments)) as server:
        events, result = await collect(agent_for(server, name, bank.tools, journal=False))
    assert bank.paid == [("Alice", 500)], "only the call sent again ran"
    first, second = result.tool_calls
    assert (first.result.ok, first.result.error) == (False, "invalid_arguments")
    assert second.result.ok and second.turn == 2
    message = json.loads(first.result.content)["message"]
    assert "Nothing was run" in message
    ready = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert all(not c.repaired for c in ready[1:])


@pytest.mark.parametrize("name", TEXT_PROVIDERS)
async def test_a_read_only_tool_runs_on_repaired_arguments_flagged(name: str) -> None:
    bank = Bank()
    with EmulationServer(resend('{"of": "Alice",}', "balance", {"of": "Bob"})) as server:
        events, result = await collect(agent_for(server, name, bank.tools, journal=False))
    assert bank.looked_up == ["Alice"] and result.output == "the error was not reported"
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [e.call.repaired for e in ready] == [True]


async def test_a_tool_that_opts_in_runs_on_repaired_arguments_after_approval(
    tmp_path: Path,
) -> None:
    paid: list[int] = []
    asked: list[ApprovalRequest] = []

    @tool(accept_repaired=True, requires_approval=True)
    def pay(to: str, cents: int) -> str:
        """Pay someone.

        Args:
            to: who is paid.
            cents: how much.
        """
        paid.append(cents)
        return "paid"

    def approve(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return Approval.allow()

    journal_path = tmp_path / "j.sqlite3"
    scenario = resend('{"to": "Alice", "cents": 5,}')
    with EmulationServer(scenario) as server:
        agent = agent_for(
            server, "openai-chat", [pay], approve=approve, journal=SQLiteJournal(journal_path)
        )
        _, result = await collect(agent)
    assert paid == [5] and [r.repaired for r in asked] == [True]
    shown = CliRunner().invoke(
        cli_main, ["runs", "show", result.run_id, "--journal", str(journal_path)]
    )
    assert shown.exit_code == 0, shown.output
    assert "(arguments repaired)" in shown.output
    as_json = CliRunner().invoke(
        cli_main, ["runs", "show", result.run_id, "--journal", str(journal_path), "--json"]
    )
    calls = [c for t in json.loads(as_json.output)["turns"] for c in t["tool_calls"]]
    assert [c["repaired"] for c in calls] == [True]
