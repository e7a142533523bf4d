"""A run outlives its process: it suspends in one process, is approved from the
CLI in a second, and resumes in a third; the payment runs once, with the
approved arguments. Two resumers race: one wins, the other is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from toolwire.examples import PaymentLedger
from toolwire.run import argument_digest
from toolwire.testing import EmulationServer, Scenario

ROOT = Path(__file__).resolve().parents[2]
PAY = {"to": "alice", "amount_cents": 1250}


def scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "pay-later",
            "turns": [
                {"tool_calls": [{"name": "send_payment", "arguments": PAY}]},
                {"text": "paid {result:send_payment.to} {result:send_payment.amount_cents}"},
            ],
        }
    )


def worker(
    mode: str, url: str, tmp: Path, run_id: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    args = [url, str(tmp / "journal.sqlite3"), str(tmp / "ledger.sqlite3"), run_id]
    return subprocess.Popen(
        [sys.executable, "-m", "tests.journal._suspend_worker", mode, *args],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def finish(child: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 0, out
    reply: dict[str, Any] = json.loads(out.splitlines()[-1])
    return reply


def cli(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "toolwire",
            "runs",
            *args,
            "--journal",
            str(tmp / "journal.sqlite3"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_suspend_approve_from_the_cli_and_resume_in_three_processes(tmp_path: Path) -> None:
    with EmulationServer(scenario()) as server:
        url = server.url_for("openai-chat")
        first = finish(worker("run", url, tmp_path, "run-pay-0001"))
        assert first["outcome"] == "suspended"
        (pending,) = first["pending"]
        assert pending["arguments"] == PAY and pending["digest"] == argument_digest(PAY)

        listed = cli(tmp_path, "list")
        assert listed.returncode == 0 and "suspended" in listed.stdout
        short = "run-pay-0"  # a prefix names the run

        other = argument_digest({**PAY, "amount_cents": 999999})
        refused = cli(tmp_path, "approve", short, pending["call_id"], "--digest", other)
        assert refused.returncode != 0 and "approval_refused" in refused.stderr

        approved = cli(
            tmp_path,
            "approve",
            short,
            pending["call_id"],
            "--digest",
            pending["digest"],
            "--as",
            "ops:ann",
        )
        assert approved.returncode == 0, approved.stderr
        shown = cli(tmp_path, "show", short)
        assert "approval allow" in shown.stdout and "by ops:ann" in shown.stdout

        third = finish(worker("resume", url, tmp_path, short))
        again = finish(worker("resume", url, tmp_path, "run-pay-0001"))
    assert third == {"outcome": "answered", "output": "paid alice 1250", "pending": []}
    assert again["output"] == "paid alice 1250"
    payments = PaymentLedger(tmp_path / "ledger.sqlite3").payments()
    assert [(p["to"], p["amount_cents"]) for p in payments] == [("alice", 1250)]


def test_two_resumers_of_a_suspended_run_one_wins(tmp_path: Path) -> None:
    hold = tmp_path / "hold"
    hold.mkdir()
    with EmulationServer(scenario()) as server:
        url = server.url_for("openai-chat")
        (pending,) = finish(worker("run", url, tmp_path, "run-race"))["pending"]
        approved = cli(
            tmp_path, "approve", "run-race", pending["call_id"], "--digest", pending["digest"]
        )
        assert approved.returncode == 0, approved.stderr
        winner = worker("resume", url, tmp_path, "run-race", {"HOLD_DIR": str(hold)})
        deadline = time.monotonic() + 60
        while not (hold / "inside").exists():
            assert time.monotonic() < deadline and winner.poll() is None, "the winner never ran"
            time.sleep(0.02)
        loser = finish(worker("resume", url, tmp_path, "run-race"))
        late = cli(tmp_path, "deny", "run-race", pending["call_id"])
        (hold / "go").touch()
        won = finish(winner)
    assert loser == {"outcome": "leased"}
    assert late.returncode != 0 and "run_leased" in late.stderr
    assert won["output"] == "paid alice 1250"
    assert len(PaymentLedger(tmp_path / "ledger.sqlite3").payments()) == 1


def test_a_killed_run_lists_as_interrupted(tmp_path: Path) -> None:
    code = (
        "import os, signal, sys\n"
        "from toolwire.journal import SQLiteJournal\n"
        "j = SQLiteJournal(sys.argv[1])\n"
        "j.record_run('run-killed', header='{}', messages=[], resumed=False)\n"
        "with j.lease('run-killed'):\n"
        "    print('held', flush=True)\n"
        "    sys.stdin.readline()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path / "journal.sqlite3")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as child:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "held"
        while_held = json.loads(cli(tmp_path, "list", "--json").stdout)
        child.communicate("\n", timeout=60)
    after = json.loads(cli(tmp_path, "list", "--json").stdout)
    assert [r["status"] for r in while_held["runs"]] == ["running"]
    assert [r["status"] for r in after["runs"]] == ["interrupted"]
