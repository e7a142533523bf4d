"""kill -9 at many points of a run, resume in a new process: every payment
is made exactly once, the non-idempotent tool never runs twice, and the
answer is the one an uninterrupted run gives.

The agent runs in forked children of a worker process (see
``_crash_worker.py``) against an emulation server run by this test. Kill
points are chosen deterministically (a seeded random generator): around
every journal write (before and after it commits: between intent and
outcome, between a request and its answer...), inside each side-effecting
tool before and after its effect, after the k-th event of the agent's stream
(during streaming), and by a timer in the parent; some cases chain several
kills (a resume killed in turn).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import toolwire
from toolwire.testing import EmulationServer, Scenario
from toolwire.types import PROVIDER_DIALECTS

from ._crash_worker import open_store

WORKER = Path(__file__).with_name("_crash_worker.py")
PROVIDER_NAMES = ["openai-chat", "anthropic", "openai-responses", "gemini"]
JOURNAL_WRITES = 18  # run, 3 requests + answers, 5 intents + outcomes, end
ANSWER = "paid {to} {amount} as {payment_id}; weather 小雨"


def scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "payments",
            "turns": [
                {
                    "tool_calls": [
                        {
                            "name": "send_payment",
                            "arguments": {"to": "alice", "amount_cents": 1250},
                        },
                        {"name": "notify", "arguments": {"text": "paying alice"}},
                        {"name": "get_weather", "arguments": {"city": "杭州"}},
                    ],
                    "chunk_size": 8,
                    "delay": 0.001,
                },
                {
                    "text": "now bob",
                    "tool_calls": [
                        {"name": "send_payment", "arguments": {"to": "bob", "amount_cents": 990}},
                        {
                            "name": "notify",
                            "arguments": {"text": "alice got {result:send_payment.payment_id}"},
                        },
                    ],
                    "chunk_size": 8,
                    "delay": 0.001,
                },
                {
                    "text": "paid {result:send_payment.to} {result:send_payment.amount_cents} "
                    "as {result:send_payment.payment_id}; "
                    "weather {result:get_weather.condition_zh}",
                    "chunk_size": 6,
                    "delay": 0.001,
                },
            ],
        }
    )


def kill_plans(rng: random.Random) -> list[list[dict[str, Any]]]:
    """Every case's kills, in order: one list of plans per case."""
    single: list[dict[str, Any]] = []
    for nth in range(1, JOURNAL_WRITES + 1):
        for when in ("before", "after"):
            single.append({"mode": "write", "nth": nth, "when": when})
    for tool in ("send_payment", "notify"):
        for nth in (1, 2):
            for when in ("before", "after"):
                single.append({"mode": "tool", "tool": tool, "nth": nth, "when": when})
    # A run yields about 50 agent events (deltas, tool and turn events).
    for nth in rng.sample(range(2, 48), 12):
        single.append({"mode": "event", "nth": nth})
    for _ in range(6):
        single.append({"mode": "timer", "seconds": round(rng.uniform(0.02, 0.25), 3)})
    cases = [[plan] for plan in single]
    for _ in range(6):
        chain = rng.sample(single, 3)
        cases.append(chain)
    return cases


def check_case(folder: Path, run_id: str, store: str) -> str:
    """Assert the ledger, the notifications, the journal and the answer;
    return the answer with the payment id masked."""
    error = folder / "error.txt"
    assert not error.exists(), error.read_text()
    journal = open_store({"dir": str(folder), "journal": store})
    log = journal.load_run(run_id)
    journal.close()
    ledger = _payments(folder)
    assert sorted((p["to"], p["amount_cents"]) for p in ledger) == [
        ("alice", 1250),
        ("bob", 990),
    ], f"{folder.name}: each payment exactly once"
    answer = json.loads((folder / "answer.json").read_text())
    bob = next(p for p in ledger if p["to"] == "bob")
    alice = next(p for p in ledger if p["to"] == "alice")
    expected = ANSWER.format(to="bob", amount=990, payment_id=bob["payment_id"])
    assert answer["output"] == expected, folder.name
    assert answer["outcome"] == "answered"
    notes_file = folder / "notes.log"
    notes = (
        [json.loads(line) for line in notes_file.read_text().splitlines()]
        if (notes_file.exists())
        else []
    )
    for text in ("paying alice", f"alice got {alice['payment_id']}"):
        ran = notes.count(text)
        assert ran <= 1, f"{folder.name}: notify({text!r}) ran {ran} times"
        record = next(
            c for c in answer["tool_calls"] if c["name"] == "notify" and text_of(c, log) == text
        )
        if record["ok"]:
            assert ran == 1, f"{folder.name}: notify reported sent but ran {ran} times"
        else:
            assert json.loads(record["content"])["error"] == "interrupted"
    assert len(notes) <= 2
    assert log.run.status == "answered"
    assert log.problems() == [], log.problems()
    return str(answer["output"]).replace(bob["payment_id"], "<payment id>")


def text_of(call: dict[str, Any], log: Any) -> str:
    for event in log.events:
        if event.kind == "tool_intent" and event.call_id == call["id"]:
            return str(event.data["arguments"]["text"])
    for event in log.events:
        if event.kind == "model_response":
            for c in event.data["assistant"]["tool_calls"]:
                if c["id"] == call["id"]:
                    return str(c["arguments"]["text"])
    raise AssertionError(f"no record of call {call['id']}")


def _payments(folder: Path) -> list[dict[str, Any]]:
    from toolwire.examples import PaymentLedger

    return PaymentLedger(folder / "ledger.sqlite3").payments()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_kill_9_at_many_points_then_resume(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    # One Postgres database for every case (their run ids differ), or a
    # SQLite file in each case's folder.
    shared = request.getfixturevalue("postgres_url") if backend == "postgres" else ""
    rng = random.Random(20261123)
    plans: list[list[dict[str, Any]]] = [
        [],
        *kill_plans(rng),
    ]  # the first case is the uninterrupted reference
    with EmulationServer(scenario()) as server:
        urls = {dialect: server.url_for(dialect) for dialect in PROVIDER_DIALECTS}
        cases = []
        for number, kills in enumerate(plans):
            folder = tmp_path / f"case{number:03d}"
            folder.mkdir()
            cases.append(
                {
                    "id": number,
                    "dir": str(folder),
                    "run_id": f"run-{number}",
                    "provider": PROVIDER_NAMES[number % len(PROVIDER_NAMES)],
                    "urls": urls,
                    "kills": kills,
                    "journal": shared or str(folder / "journal.sqlite3"),
                }
            )
        src = str(Path(toolwire.__file__).parents[1])
        env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
        workers = [
            subprocess.Popen(
                [sys.executable, str(WORKER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            for _ in range(2)
        ]
        reports: list[dict[str, Any]] = []
        inputs = ["", ""]
        for case in cases:
            inputs[case["id"] % 2] += json.dumps(case, ensure_ascii=False) + "\n"
        for worker, text in zip(workers, inputs, strict=True):
            assert worker.stdin is not None
            worker.stdin.write(text)
            worker.stdin.close()
        for worker in workers:
            assert worker.stdout is not None
            reports.extend(json.loads(line) for line in worker.stdout)
            assert worker.wait(timeout=120) == 0
            worker.stdout.close()
    assert sorted(r["id"] for r in reports) == list(range(len(cases)))
    killed = sum(1 for r in reports for code in r["exits"] if code == -9)
    assert killed >= 60, f"only {killed} kills landed"
    for report in reports:
        # Every planned kill ended its process (or the plan's point was not
        # reached), and the last process always finished cleanly.
        assert report["exits"][-1] == 0, report
        assert all(code in (0, -9) for code in report["exits"]), report
    reference = check_case(tmp_path / "case000", "run-0", cases[0]["journal"])
    for case in cases[1:]:
        assert check_case(Path(case["dir"]), case["run_id"], case["journal"]) == reference
