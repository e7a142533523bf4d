"""Shared pieces of the tests that answer a suspended run: a payment that
counts its runs, a run suspended on it, and the ``toolwire runs`` CLI run in
a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

from toolwire import Agent, tool
from toolwire.journal import Journal, close_journals
from toolwire.run import PendingCall
from toolwire.testing import EmulationServer, Scenario

from ._support import make_agent

ROOT = Path(__file__).resolve().parents[2]
PAY = {"to": "alice", "amount_cents": 1250}
KEY = "approval-key-for-tests-0123456789abcdef"

paid: list[dict[str, Any]] = []


@tool(requires_approval=True)
def send_payment(to: str, amount_cents: int) -> str:
    """Send money.

    Args:
        to: who receives it.
        amount_cents: how much, in cents.
    """
    paid.append({"to": to, "amount_cents": amount_cents})
    return f"sent {amount_cents} to {to}"


def scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "pay-signed",
            "turns": [
                {"tool_calls": [{"name": "send_payment", "arguments": PAY}]},
                {"text": "paid: {result:0}"},
            ],
        }
    )


def agent_for(server: EmulationServer, journal: Journal | str) -> Agent:
    return make_agent(server, [send_payment], journal=journal)


def suspend(server: EmulationServer, journal: Journal | str, run_id: str) -> PendingCall:
    """Run until the payment waits for approval; its pending call."""

    async def main() -> PendingCall:
        agent = agent_for(server, journal)
        try:
            result = await agent.run("pay alice", run_id=run_id)
        finally:
            await agent.aclose()
        assert result.outcome == "suspended"
        (pending,) = result.pending
        return pending

    found = anyio.run(main)
    close_journals()
    return found


def resume(server: EmulationServer, journal: Journal | str, run_id: str, key: bytes | None) -> str:
    async def main() -> str:
        agent = agent_for(server, journal)
        try:
            return (await agent.resume(run_id, approval_key=key)).outcome
        finally:
            await agent.aclose()

    try:
        return anyio.run(main)
    finally:
        close_journals()


def cli(
    *args: str, env: dict[str, str] | None = None, journal: Path | str | None = None
) -> subprocess.CompletedProcess[str]:
    """``toolwire runs ARGS`` in a subprocess, without an approval key unless
    ``env`` gives one."""
    base = {k: v for k, v in os.environ.items() if k != "TOOLWIRE_APPROVAL_KEY"}
    where = ["--journal", str(journal)] if journal is not None else []
    return subprocess.run(
        [sys.executable, "-m", "toolwire", "runs", *args, *where],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**base, **(env or {})},
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
