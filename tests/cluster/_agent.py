"""The agent every Ray worker of the cluster test builds, and its tools with
effects: each writes its effect into a table of the test's Postgres database,
so that the test can count how many times each effect happened.

Workers are configured by their environment: the node's (set by the test when
it starts the node: the emulation server's URL, where to hold) and the
driver's journal (``TOOLWIRE_JOURNAL``, set in the worker by ``toolwire
batch``).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from toolwire import Agent, OpenAIChat, ToolContext, tool
from toolwire.journal import PostgresJournal

BASE_URL = "TOOLWIRE_TEST_BASE_URL"
HOLD = "TOOLWIRE_TEST_HOLD"
"""A folder: once it holds a ``hold`` file, the first ``pay`` on the node
named by its ``victim`` file stops after its effect (and writes ``held``)."""
LEASE_TTL = 5.0
"""Seconds a dead worker's runs stay leased before another takes them over."""

TABLES = (
    "CREATE TABLE cluster_effects (run_id text NOT NULL, call_id text NOT NULL, "
    "tool text NOT NULL, PRIMARY KEY (run_id, call_id));"
    "CREATE TABLE cluster_executions (id bigserial PRIMARY KEY, run_id text NOT NULL, "
    "call_id text NOT NULL, tool text NOT NULL, node text NOT NULL)"
)
"""The effects (one row per call, whatever ran it) and every execution of a tool."""

_open: dict[int, Any] = {}


def _db() -> Any:
    """This process's connection to the journal's database (the effects' too)."""
    db = _open.get(os.getpid())
    if db is None:
        import psycopg

        db = psycopg.connect(os.environ["TOOLWIRE_JOURNAL"], autocommit=True, connect_timeout=30)
        _open[os.getpid()] = db
    return db


def _journal() -> PostgresJournal:
    journal = _open.get(-os.getpid())
    if journal is None:
        journal = PostgresJournal(os.environ["TOOLWIRE_JOURNAL"], lease_ttl=LEASE_TTL)
        _open[-os.getpid()] = journal
    return journal


def _executed(tool_name: str, ctx: ToolContext) -> None:
    _db().execute(
        "INSERT INTO cluster_executions (run_id, call_id, tool, node) VALUES (%s, %s, %s, %s)",
        (ctx.run_id, ctx.call_id, tool_name, os.environ.get("TOOLWIRE_TEST_RAY_NODE", "?")),
    )


def _maybe_hold(ctx: ToolContext) -> None:
    folder = Path(os.environ[HOLD])
    victim = (folder / "victim").read_text(encoding="utf-8").strip()
    if os.environ.get("TOOLWIRE_TEST_RAY_NODE") != victim or not (folder / "hold").exists():
        return
    try:
        fd = os.open(folder / "held", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.write(fd, f"{ctx.run_id}\n".encode())
    os.close(fd)
    time.sleep(600)  # until the test kills this node


@tool(idempotent=True)
def pay(amount_cents: int, ctx: ToolContext) -> dict[str, Any]:
    """Pay; safe to run again with the same idempotency key.

    Args:
        amount_cents: the amount.
    """
    _executed("pay", ctx)
    _db().execute(
        "INSERT INTO cluster_effects VALUES (%s, %s, 'pay') ON CONFLICT DO NOTHING",
        (ctx.run_id, ctx.call_id),
    )
    _maybe_hold(ctx)
    return {"payment_id": "p-" + ctx.idempotency_key[-12:], "amount_cents": amount_cents}


@tool
def notify(text: str, ctx: ToolContext) -> str:
    """Send a notification; not idempotent (a second effect fails).

    Args:
        text: the message.
    """
    _executed("notify", ctx)
    _db().execute(
        "INSERT INTO cluster_effects VALUES (%s, %s, 'notify')", (ctx.run_id, ctx.call_id)
    )
    return "sent"


def make_agent() -> Agent:
    """The batch's agent factory (``tests.cluster._agent:make_agent``)."""
    provider = OpenAIChat(api_key="test-key", base_url=os.environ[BASE_URL])
    return Agent(provider, model="gpt-4.1-mini", tools=[pay, notify], journal=_journal())
