"""The ``toolwire_approvals`` fixture's desk: it answers a suspended run from a
real ``toolwire`` subprocess, and a test then resumes the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import toolwire
from toolwire.errors import UsageError
from toolwire.providers import OpenAIChat
from toolwire.testing import EmulationServer
from toolwire.testing._desk import ApprovalDesk


def pick_color() -> Any:
    @toolwire.tool(external=True)
    def pick_color(prompt: str) -> str:
        """Ask the user for a color."""
        raise AssertionError("an external tool never runs here")

    return pick_color


def send_payment(paid: list[tuple[str, int]]) -> Any:
    @toolwire.tool(requires_approval=True)
    def send_payment(to: str, amount_cents: int) -> str:
        """Send money."""
        paid.append((to, amount_cents))
        return f"sent {amount_cents} to {to}"

    return send_payment


def test_a_denial_and_an_answer_from_another_process(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    desk = ApprovalDesk(journal)
    paid: list[tuple[str, int]] = []
    scenario = {
        "turns": [
            {
                "tool_calls": [
                    {"name": "send_payment", "arguments": {"to": "bo", "amount_cents": 99}},
                    {"name": "pick_color", "arguments": {"prompt": "which?"}},
                ]
            },
            {"text": "{result:send_payment} / {result:pick_color}"},
        ]
    }
    with EmulationServer(scenario) as server:
        provider = OpenAIChat(base_url=server.url_for("openai-chat"), api_key="t")
        tools = [send_payment(paid), pick_color()]
        agent = toolwire.Agent(provider, model="m", tools=tools, journal=str(journal))
        result = agent.run_sync("pay bo, and ask for a color")
        assert result.outcome == "suspended"
        with pytest.raises(UsageError, match="2 calls"):
            desk.approve(result.run_id)
        with pytest.raises(UsageError, match="does not wait on call 'nope'"):
            desk.deny(result.run_id, "nope")
        pay, color = sorted(desk.pending(result.run_id), key=lambda p: p.name != "send_payment")
        desk.deny(result.run_id[:8], pay, reason="over budget", principal="ann")
        assert desk.pending(result.run_id) == (color,)
        desk.answer(result.run_id, color.call_id, "teal", principal="browser")
        with pytest.raises(AssertionError, match="runs answer failed"):
            desk.answer(result.run_id, color.call_id, "red")  # answered already: no longer pending
        assert desk.pending(result.run_id) == ()
        resumed = agent.resume_sync(result.run_id)
    assert paid == []
    assert "over budget" in resumed.output and resumed.output.endswith("/ teal")
    assert [command[:2] for command in desk.commands] == [
        ["runs", "deny"],
        ["runs", "answer"],
        ["runs", "answer"],
    ]
