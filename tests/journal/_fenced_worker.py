"""A worker whose payment is fenced out: it stops itself inside the tool.

Usage: ``python -m tests.journal._fenced_worker URL JOURNAL LEDGER``. It runs
the run ``fenced`` on the emulation server at ``URL`` with a Postgres journal
whose lease lives one second. The ``pay`` tool (not idempotent) prints
``{"paying": pid}`` and stops the process (``SIGSTOP``) before it pays: its
lease expires meanwhile. Once continued it pays (a line in ``LEDGER``) and
the run goes on; the worker prints ``{"outcome": ...}``: ``answered``, or the
type of the error that ended it (``lease_lost`` once another worker took the
run over).
"""

from __future__ import annotations

import json
import os
import signal
import sys

import anyio

from toolwire import Agent, tool
from toolwire.errors import ToolwireError
from toolwire.journal import PostgresJournal
from toolwire.providers import OpenAIChat


def make_pay(ledger: str, *, stop: bool) -> object:
    @tool(idempotent=False)
    def pay(cents: int) -> str:
        """Pay an amount (not idempotent)."""
        if stop:
            print(json.dumps({"paying": os.getpid()}), flush=True)
            os.kill(os.getpid(), signal.SIGSTOP)
        with open(ledger, "a") as out:
            out.write(f"{os.getpid()} {cents}\n")
        return "paid"

    return pay


async def main(url: str, store: str, ledger: str) -> str:
    journal = PostgresJournal(store, lease_ttl=1.0, timeout=10.0)
    agent = Agent(
        OpenAIChat(base_url=url, api_key="test-key"),
        model="fenced",
        tools=[make_pay(ledger, stop=True)],
        journal=journal,
    )
    try:
        await agent.run("pay", run_id="fenced")
    except ToolwireError as exc:
        return exc.type_name
    finally:
        await agent.aclose()
        journal.close()
    return "answered"


if __name__ == "__main__":
    outcome = anyio.run(main, *sys.argv[1:4])
    print(json.dumps({"outcome": outcome}), flush=True)
