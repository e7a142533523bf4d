"""kill -9 around a suspension and a resumption, in forked children.

Usage: ``python _suspend_crash_worker.py URL`` and cases (JSON, one per line)
on stdin: ``{"dir", "run_id", "phase", "kill"}``. ``phase`` is ``run`` (start
the run, or resume it if an earlier child was killed, until it suspends),
``approve`` (record the approval of the pending payment) or ``resume``
(resume the approved run to its end). ``kill`` is the journal write (1, 2...)
before which the child SIGKILLs itself, or 0 for none. For each case it prints
one JSON line: the child's exit code and, when it lived, its outcome.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path
from typing import Any

import anyio
from _crash_worker import KillingJournal, warm_up  # type: ignore[import-not-found]

from toolwire import Agent, ToolContext, tool
from toolwire.examples import PaymentLedger
from toolwire.journal import Decision, JournalError, SQLiteJournal, pending_calls, record_decision
from toolwire.providers import OpenAIChat


def payment(folder: Path) -> Any:
    ledger = PaymentLedger(folder / "ledger.sqlite3")

    @tool(name="send_payment", requires_approval=True, idempotent=True)  # it deduplicates by key
    def send_payment(to: str, amount_cents: int, ctx: ToolContext) -> Any:
        """Send a payment.

        Args:
            to: the recipient.
            amount_cents: the amount in cents.
        """
        record, _ = ledger.pay(key=ctx.idempotency_key, to=to, amount_cents=amount_cents)
        return record

    return send_payment


async def child(url: str, case: dict[str, Any]) -> str:
    folder = Path(case["dir"])
    store = SQLiteJournal(folder / "journal.sqlite3")
    journal: Any = KillingJournal(store, case["kill"], "before") if case["kill"] else store
    if case["phase"] == "approve":
        (pending,) = pending_calls(store.load_run(case["run_id"]))
        decision = Decision.allow(pending, principal="ops")
        record_decision(journal, case["run_id"], decision)
        return "approved"
    agent = Agent(
        OpenAIChat(base_url=url, api_key="sk-test-crash-0123456789"),
        model="pay",
        tools=[payment(folder)],
        journal=journal,
    )
    try:
        try:
            store.load_run(case["run_id"])
        except JournalError:  # killed before the run's first record: start it
            result = await agent.run("pay alice", run_id=case["run_id"])
        else:
            result = await agent.resume(case["run_id"])
    finally:
        await agent.aclose()
    return result.outcome


def run_case(url: str, case: dict[str, Any]) -> dict[str, Any]:
    report = Path(case["dir"]) / "outcome.txt"
    report.unlink(missing_ok=True)
    pid = os.fork()
    if pid == 0:
        try:
            report.write_text(anyio.run(child, url, case))
        except BaseException:
            report.write_text("error: " + traceback.format_exc())
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    outcome = report.read_text() if report.exists() else None
    return {"exit": os.waitstatus_to_exitcode(status), "outcome": outcome}


def main() -> None:
    url = sys.argv[1]
    warm_up()
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(run_case(url, json.loads(line))), flush=True)


if __name__ == "__main__":
    main()
