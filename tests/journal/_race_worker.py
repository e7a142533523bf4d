"""A process that resumes runs on command, to race another one.

Usage: ``python -m tests.journal._race_worker URL JOURNAL LEDGER``. It reads
run ids on stdin, one per line; for each it resumes the run at once and
prints one JSON line: ``{"run_id", "outcome"}`` where outcome is ``ran`` (it
resumed the run to its end), ``leased`` (another process held the run) or
``error: ...``. The ``notify`` tool records each execution in the SQLite
ledger with the run id, so a run notified twice shows as two rows.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys

import anyio

from toolwire import Agent, ToolContext, tool
from toolwire.journal import RunLeased
from toolwire.providers import OpenAIChat


def make_notify(ledger: str) -> object:
    @tool(idempotent=False)
    def notify(text: str, ctx: ToolContext) -> str:
        """Send a notification (not idempotent)."""
        with sqlite3.connect(ledger, timeout=30) as db:
            db.execute("INSERT INTO notes VALUES (?, ?)", (ctx.run_id, os.getpid()))
        return "sent"

    return notify


async def resume(url: str, journal: str, ledger: str, run_id: str) -> str:
    agent = Agent(
        OpenAIChat(base_url=url, api_key="test-key"),
        model="race",
        tools=[make_notify(ledger)],
        journal=journal,
    )
    try:
        result = await agent.resume(run_id)
    except RunLeased:
        return "leased"
    except Exception as exc:
        return f"error: {type(exc).__name__}: {exc}"
    finally:
        await agent.aclose()
    return "ran" if result.output == "done: sent" else f"error: output {result.output!r}"


def main() -> None:
    url, journal, ledger = sys.argv[1:4]
    print(json.dumps({"ready": os.getpid()}), flush=True)
    for line in sys.stdin:
        run_id = line.strip()
        outcome = anyio.run(resume, url, journal, ledger, run_id)
        print(json.dumps({"run_id": run_id, "outcome": outcome}), flush=True)


if __name__ == "__main__":
    main()
