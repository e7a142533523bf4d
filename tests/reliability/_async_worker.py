"""A process that runs an agent with an asynchronous tool and may die: the
subject of the kill -9 test of asynchronous calls.

``python _async_worker.py <url> <folder> <mode>``: ``mode`` ``start`` runs
the run ``booking`` (its tool SIGKILLs this process right after its effect,
before its result exists), ``outcome`` runs it and SIGKILLs this process as
soon as the tool's outcome is journaled (the model still streaming), and
``resume`` resumes it to its end and prints the result as JSON. The tool's
effect is a line in ``<folder>/ledger`` per idempotency key it has not seen
(an idempotent tool: a call repeated with its key changes nothing; not
idempotent when ``<folder>/not-idempotent`` exists).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import anyio

from toolwire import Agent, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.journal import Journal, RunLog, RunSummary, SQLiteJournal
from toolwire.tools import ToolContext

RUN_ID = "booking"


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class DyingJournal:
    """Kills its process right after the first tool outcome is committed
    (one write per record: it has no ``record_steps``)."""

    def __init__(self, inner: Journal) -> None:
        self.inner = inner

    def record_event(self, run_id: str, kind: str, data: str, **kwargs: Any) -> int:
        seq: int = self.inner.record_event(run_id, kind, data, **kwargs)
        if kind == "tool_outcome":
            die()
        return seq

    def record_run(self, run_id: str, **kwargs: Any) -> int:
        count: int = self.inner.record_run(run_id, **kwargs)
        return count

    def record_end(self, run_id: str, **kwargs: Any) -> None:
        self.inner.record_end(run_id, **kwargs)

    def load_run(self, run_id: str) -> RunLog:
        return self.inner.load_run(run_id)

    def list_runs(self, *, limit: int = 50) -> list[RunSummary]:
        return self.inner.list_runs(limit=limit)

    def find_run(self, ref: str) -> str:
        return self.inner.find_run(ref)

    def lease(self, run_id: str) -> AbstractContextManager[None]:
        return self.inner.lease(run_id)

    def close(self) -> None:
        self.inner.close()


def booker(folder: Path, *, dying: bool) -> Any:
    ledger = folder / "ledger"
    idempotent = not (folder / "not-idempotent").exists()

    @tool(asynchronous=True, idempotent=idempotent)
    def book(room: str, context: ToolContext) -> str:
        """Book a room.

        Args:
            room: the room.
        """
        seen = ledger.read_text().split() if ledger.exists() else []
        if context.idempotency_key not in seen:
            with ledger.open("a") as out:
                out.write(context.idempotency_key + "\n")
                out.flush()
                os.fsync(out.fileno())
        if dying:
            die()
        return f"room {room} booked"

    return book


async def main(url: str, folder: Path, mode: str) -> None:
    store = SQLiteJournal(folder / "journal.sqlite3")
    journal: Any = DyingJournal(store) if mode == "outcome" else store
    _, _, model = PROVIDERS["openai-responses"]
    provider = make_provider("openai-responses", base_url=url, api_key="test-key")
    agent = Agent(
        provider,
        model=model,
        tools=[booker(folder, dying=mode == "start")],
        journal=journal,
    )
    try:
        if mode == "resume":
            result = await agent.resume(RUN_ID)
            calls = [(r.call.name, r.result.content) for r in result.tool_calls]
            print(json.dumps({"output": result.output, "turns": result.turns, "calls": calls}))
        else:
            await agent.run("book A", run_id=RUN_ID)
    finally:
        await agent.aclose()
        store.close()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], Path(sys.argv[2]), sys.argv[3])
