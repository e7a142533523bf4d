"""A run's limits count the whole run, over every process that runs it: it
suspends for an approval in one process, is approved from the CLI in a second
and resumed in a third, and the third stops where the whole run crosses the
limit. A suspended run shows what it has cost so far.

Each request of the model costs $0.008 (a per-request fee), so two requests
cross a $0.01 limit, and one request is all ``model_requests=1`` allows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from toolwire.examples import PaymentLedger
from toolwire.journal import SQLiteJournal
from toolwire.testing import EmulationServer, Scenario
from toolwire.view._listing import ListQuery, list_page

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


def worker(mode: str, url: str, tmp: Path, limits: dict[str, Any]) -> dict[str, Any]:
    args = [url, str(tmp / "journal.sqlite3"), str(tmp / "ledger.sqlite3"), "run-limited"]
    proc = subprocess.run(
        [sys.executable, "-m", "tests.cost._limits_worker", mode, *args, json.dumps(limits)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    reply: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
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


def approve(tmp: Path, pending: dict[str, Any]) -> None:
    done = cli(tmp, "approve", "run-limited", pending["call_id"], "--digest", pending["digest"])
    assert done.returncode == 0, done.stderr


def payments(tmp: Path) -> list[tuple[str, int]]:
    return [(p["to"], p["amount_cents"]) for p in PaymentLedger(tmp / "ledger.sqlite3").payments()]


def test_a_cost_limit_counts_the_requests_of_every_process(tmp_path: Path) -> None:
    limits = {"cost": 0.01}
    with EmulationServer(scenario()) as server:
        url = server.url_for("openai-chat")
        first = worker("run", url, tmp_path, limits)
        assert first["outcome"] == "suspended"
        assert first["cost"] == 0.008  # what the suspended run has cost so far
        listed = json.loads(cli(tmp_path, "list", "--json").stdout)
        (run,) = listed["runs"]
        assert run["status"] == "suspended" and run["cost"]["total"] == 0.008
        assert "$0.008" in cli(tmp_path, "list").stdout
        reader = SQLiteJournal(tmp_path / "journal.sqlite3", read_only=True)
        try:
            assert "$0.0080" in list_page(reader, ListQuery())
        finally:
            reader.close()

        approve(tmp_path, first["pending"][0])
        third = worker("resume", url, tmp_path, limits)
        requests = len(server.requests)
    # The approved payment ran; the answer after it would have crossed $0.01.
    assert third["outcome"] == "limit" and third["limit"] == "cost", third
    assert third["value"] > 0.01
    assert payments(tmp_path) == [("alice", 1250)]
    assert requests == 2
    (run,) = json.loads(cli(tmp_path, "list", "--json").stdout)["runs"]
    assert run["status"] == "limit"


def test_a_request_limit_of_one_allows_one_request_in_all(tmp_path: Path) -> None:
    limits = {"model_requests": 1}
    with EmulationServer(scenario()) as server:
        url = server.url_for("openai-chat")
        first = worker("run", url, tmp_path, limits)
        assert first["outcome"] == "suspended"
        approve(tmp_path, first["pending"][0])
        third = worker("resume", url, tmp_path, limits)
        requests = len(server.requests)
    assert third["outcome"] == "limit" and third["limit"] == "model_requests", third
    assert requests == 1
    assert payments(tmp_path) == [("alice", 1250)]
