"""A process that runs agents and dies: the subject of the kill -9 tests.

It reads cases (JSON, one per line) on stdin. For each case it forks one
child per kill plan: the first child starts the run, each next one resumes
it; a plan makes its child SIGKILL itself at an exact point (around the n-th
journal write, inside a tool before or after its effect, after the k-th
agent event) or makes this process SIGKILL the child after a delay. A last
child, without a plan, resumes the run to its end and writes the answer.
For each case it prints one JSON line: how each child ended.

Forking from this process (which imports toolwire once and never starts an
event loop or a thread) makes each child cheap; every child is a fresh
process as far as the journal, the ledger and the sockets are concerned.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import anyio

from toolwire import Agent, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.examples import PaymentLedger, payment_tool
from toolwire.journal import (
    Journal,
    JournalError,
    LeaseLost,
    PostgresJournal,
    RunLeased,
    RunLog,
    RunSummary,
    SQLiteJournal,
)
from toolwire.tools import ToolContext

PROMPT = "pay alice 12.50 and bob 9.90, tell them, and check the weather"


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class KillingJournal:
    """A journal that kills its process before or after its n-th write."""

    def __init__(self, inner: Journal, nth: int, when: str) -> None:
        self.inner = inner
        self.nth = nth
        self.when = when
        self.writes = 0

    def _around(self, write: Any) -> Any:
        self.writes += 1
        if self.writes == self.nth and self.when == "before":
            die()
        value = write()
        if self.writes == self.nth and self.when == "after":
            die()
        return value

    def record_run(self, run_id: str, **kwargs: Any) -> int:
        count: int = self._around(lambda: self.inner.record_run(run_id, **kwargs))
        return count

    def record_event(self, run_id: str, kind: str, data: str, **kwargs: Any) -> int:
        seq: int = self._around(lambda: self.inner.record_event(run_id, kind, data, **kwargs))
        return seq

    def record_end(self, run_id: str, **kwargs: Any) -> None:
        self._around(lambda: self.inner.record_end(run_id, **kwargs))

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


def make_tools(folder: Path, plan: dict[str, Any]) -> list[Any]:
    ledger = PaymentLedger(folder / "ledger.sqlite3")
    inner_pay = payment_tool(ledger)
    notes = folder / "notes.log"
    calls = {"send_payment": 0, "notify": 0}

    def maybe_die(name: str, when: str) -> None:
        if plan.get("mode") == "tool" and plan["tool"] == name and plan["when"] == when:
            if calls[name] == plan["nth"]:
                die()

    @tool(name="send_payment", strict=True, idempotent=True)  # it deduplicates by key
    def send_payment(to: str, amount_cents: int, ctx: ToolContext) -> Any:
        """Send a payment.

        Args:
            to: the recipient.
            amount_cents: the amount in cents.
        """
        calls["send_payment"] += 1
        maybe_die("send_payment", "before")
        result = inner_pay.function(to=to, amount_cents=amount_cents, ctx=ctx)
        maybe_die("send_payment", "after")
        return result

    @tool
    def notify(text: str) -> str:
        """Send a notification; not idempotent.

        Args:
            text: the message.
        """
        calls["notify"] += 1
        maybe_die("notify", "before")
        # O_APPEND, one write: the line is in the file (the OS cache) the
        # moment write() returns, even if the process is killed right after.
        fd = os.open(notes, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (json.dumps(text, ensure_ascii=False) + "\n").encode())
        finally:
            os.close(fd)
        maybe_die("notify", "after")
        return "notified"

    @tool(read_only=True)
    def get_weather(city: str) -> dict[str, Any]:
        """Weather of a city.

        Args:
            city: the city.
        """
        return {"city": city, "condition_zh": "小雨", "temperature": 24}

    return [send_payment, notify, get_weather]


LEASE_TTL = 0.5
"""Seconds a killed child's Postgres lease outlives it."""


def open_store(case: dict[str, Any]) -> Journal:
    """The case's journal: a SQLite file in its folder, or a Postgres URL."""
    where = case.get("journal") or str(Path(case["dir"]) / "journal.sqlite3")
    if where.startswith("postgresql://"):
        return PostgresJournal(where, lease_ttl=LEASE_TTL, timeout=10.0)
    return SQLiteJournal(where)


async def run_child(case: dict[str, Any], plan: dict[str, Any]) -> None:
    folder = Path(case["dir"])
    store = open_store(case)
    journal: Journal = store
    if plan.get("mode") == "write":
        journal = KillingJournal(store, plan["nth"], plan["when"])
    name = case["provider"]
    _, dialect, model = PROVIDERS[name]
    agent = Agent(
        make_provider(name, base_url=case["urls"][dialect], api_key="sk-test-crash-0123456789"),
        model=model,
        tools=make_tools(folder, plan),
        journal=journal,
        max_turns=6,
    )
    events = 0
    try:
        store.load_run(case["run_id"])
    except JournalError:  # killed before the run's first record: start it
        stream = agent.stream(PROMPT, run_id=case["run_id"])
    else:
        stream = agent.resume_stream(case["run_id"])
    output = None
    async for event in stream:
        events += 1
        if plan.get("mode") == "event" and events == plan["nth"]:
            die()
        result = getattr(event, "result", None)
        if getattr(event, "kind", None) == "run_finished" and result is not None:
            output = {
                "output": result.output,
                "outcome": result.outcome,
                "tool_calls": [
                    {
                        "name": r.call.name,
                        "id": r.call.id,
                        "ok": r.result.ok,
                        "content": r.result.content,
                    }
                    for r in result.tool_calls
                ],
            }
    await agent.aclose()
    (folder / "answer.json").write_text(json.dumps(output, ensure_ascii=False))


def child_main(case: dict[str, Any], plan: dict[str, Any]) -> None:
    deadline = time.monotonic() + 30.0
    try:
        while True:
            try:
                anyio.run(run_child, case, plan)
                break
            except LeaseLost:
                raise
            except RunLeased:  # a killed predecessor's Postgres lease, until it expires
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
    except BaseException:
        (Path(case["dir"]) / "error.txt").write_text(traceback.format_exc())
        os._exit(3)
    os._exit(0)


def fork_child(case: dict[str, Any], plan: dict[str, Any]) -> int:
    pid = os.fork()
    if pid == 0:
        child_main(case, plan)
    if plan.get("mode") == "timer":
        time.sleep(plan["seconds"])
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def warm_up() -> None:
    """Import here, once, what every child would otherwise import itself
    (the HTTP stack, the event loop backend, the codecs): forked children
    start with it loaded."""
    import anyio._backends._asyncio  # noqa: F401
    import httpcore  # noqa: F401
    import httpx
    import psycopg  # noqa: F401

    from toolwire import StreamDecoder

    httpx.AsyncClient()  # builds (and caches nothing of) an SSL context: imports only
    for name, (_, dialect, model) in PROVIDERS.items():
        provider = make_provider(name, base_url="http://127.0.0.1:9", api_key="x")
        provider.build_request(model=model, messages=[], tools=(), stream=True)
        StreamDecoder(dialect)


def main() -> None:
    warm_up()
    for line in sys.stdin:
        if not line.strip():
            continue
        case = json.loads(line)
        exits = []
        for plan in [*case["kills"], {}]:
            exits.append(fork_child(case, plan))
        report: dict[str, Any] = {"id": case["id"], "exits": exits}
        failed = Path(case["dir"]) / "error.txt"
        if failed.exists():  # a child that raised: why, for the test's message
            report["error"] = failed.read_text()[-2000:]
        print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
