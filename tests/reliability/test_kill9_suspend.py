"""kill -9 at every journal write around a suspension, its approval and the
resumption: the payment runs exactly once, with the approved arguments, and
the approval is recorded once (a child killed before writing it gives none,
and the next one gives it).

The agent runs in forked children of a worker (``_suspend_crash_worker.py``)
against an emulation server run by this test. Each chain starts from an
empty folder; one of its children dies before its k-th journal write, the
next ones carry the run on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolwire.examples import PaymentLedger
from toolwire.journal import SQLiteJournal
from toolwire.testing import EmulationServer, Scenario

WORKER = Path(__file__).with_name("_suspend_crash_worker.py")
RUN_WRITES = 4  # run + request, answer + suspension
RESUME_WRITES = 6  # resumed, intent, outcome, request, answer + end
KILLED = -9


def scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "pay-approved",
            "turns": [
                {
                    "tool_calls": [
                        {"name": "send_payment", "arguments": {"to": "alice", "amount_cents": 1250}}
                    ]
                },
                {"text": "paid {result:send_payment.to} {result:send_payment.amount_cents}"},
            ],
        }
    )


def chains() -> list[tuple[str, list[tuple[str, int]]]]:
    found: list[tuple[str, list[tuple[str, int]]]] = []
    for k in range(1, RUN_WRITES + 1):
        found.append((f"run-{k}", [("run", k), ("run", 0), ("approve", 0), ("resume", 0)]))
    found.append(("approve-1", [("run", 0), ("approve", 1), ("approve", 0), ("resume", 0)]))
    for k in range(1, RESUME_WRITES + 1):
        found.append((f"resume-{k}", [("run", 0), ("approve", 0), ("resume", k), ("resume", 0)]))
    return found


@pytest.mark.timeout(600)
def test_kill_at_every_write_around_a_suspension(tmp_path: Path) -> None:
    reports: dict[str, list[dict[str, Any]]] = {}
    with (
        EmulationServer(scenario()) as server,
        subprocess.Popen(
            [sys.executable, str(WORKER), server.url_for("openai-chat")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=WORKER.parent,
        ) as worker,
    ):
        assert worker.stdin is not None and worker.stdout is not None
        for name, steps in chains():
            folder = tmp_path / name
            folder.mkdir()
            reports[name] = []
            for phase, kill in steps:
                case = {"dir": str(folder), "run_id": "run-" + name, "phase": phase, "kill": kill}
                worker.stdin.write(json.dumps(case) + "\n")
                worker.stdin.flush()
                reports[name].append(json.loads(worker.stdout.readline()))
        worker.communicate(timeout=60)
    killed = 0
    for name, steps in chains():
        report = reports[name]
        *_, last = report
        assert last == {"exit": 0, "outcome": "answered"}, (name, report)
        for (phase, kill), step in zip(steps, report, strict=True):
            # The child with a kill point dies there; every other one lives.
            assert step["exit"] == (KILLED if kill else 0), (name, phase, step)
            killed += step["exit"] == KILLED
            if step["exit"] == 0 and phase == "run":
                assert step["outcome"] == "suspended", (name, report)
        payments = PaymentLedger(tmp_path / name / "ledger.sqlite3").payments()
        assert [(p["to"], p["amount_cents"]) for p in payments] == [("alice", 1250)], name
        journal = SQLiteJournal(tmp_path / name / "journal.sqlite3", read_only=True)
        try:
            log = journal.load_run("run-" + name)
        finally:
            journal.close()
        assert log.problems() == [], (name, log.problems())
        kinds = [e.kind for e in log.events]
        assert kinds.count("approval") == 1 and kinds.count("tool_intent") >= 1, (name, kinds)
    # Every kill point was reached: each chain lost exactly one child.
    assert killed == len(chains())
