"""Answering from anywhere, on any journal: ``toolwire runs approve`` on a
Postgres journal (``--journal URL`` and ``$TOOLWIRE_JOURNAL``), ``runs
pending`` and ``agent.pending`` listing the calls that wait, and ``approve``
without ``--digest`` confirming the arguments at a terminal, never without one."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from toolwire.journal import PostgresJournal, SQLiteJournal, WaitingCall, close_journals
from toolwire.run import argument_digest
from toolwire.testing import EmulationServer

from ._answering import PAY, ROOT, agent_for, cli, paid, resume, scenario, suspend


@pytest.fixture()
def server() -> Iterator[EmulationServer]:
    paid.clear()
    with EmulationServer(scenario()) as served:
        yield served


def _pending(server: EmulationServer, journal: str, run_id: str) -> tuple[WaitingCall, ...]:
    agent = agent_for(server, journal)
    try:
        return agent.pending(run_id)
    finally:
        anyio.run(agent.aclose)
        close_journals()


def test_approve_and_pending_on_a_postgres_journal_by_option_and_environment(
    server: EmulationServer, postgres_url: str
) -> None:
    pending = suspend(server, postgres_url, "pg-run-1")
    listed = cli("pending", "--json", journal=postgres_url)
    assert listed.returncode == 0, listed.stderr
    (call,) = json.loads(listed.stdout)["pending"]
    assert (call["run_id"], call["call_id"], call["tool"]) == (
        "pg-run-1",
        pending.call_id,
        "send_payment",
    )
    assert call["arguments"] == PAY and call["digest"] == argument_digest(PAY)
    assert call["awaiting"] == "approval" and call["age"] >= 0
    (waiting,) = _pending(server, postgres_url, "pg-run-1")
    assert waiting.digest == call["digest"] and waiting.to_dict()["call_id"] == pending.call_id

    done = cli("approve", "pg-run-1", pending.call_id, "--digest", call["digest"],
               journal=postgres_url)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "approved call" in done.stdout and "Traceback" not in done.stderr
    assert json.loads(cli("pending", "--json", journal=postgres_url).stdout)["pending"] == []
    assert resume(server, postgres_url, "pg-run-1", None) == "answered" and paid == [PAY]

    # The journal named by $TOOLWIRE_JOURNAL, a URL.
    second = suspend(server, postgres_url, "pg-run-2")
    env = {"TOOLWIRE_JOURNAL": postgres_url}
    denied = cli("deny", "pg-run-2", second.call_id, "--reason", "no", env=env)
    assert denied.returncode == 0, denied.stderr
    journal = PostgresJournal(postgres_url, read_only=True)
    try:
        kinds = [e.kind for e in journal.load_run("pg-run-2").events]
    finally:
        journal.close()
    assert kinds[-1] == "approval"


def test_pending_lists_only_calls_still_waiting(server: EmulationServer, tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    assert json.loads(cli("pending", "--json", journal=path).stdout) == {"pending": []}
    pending = suspend(server, str(path), "run-a")
    shown = cli("pending", journal=path)
    assert shown.returncode == 0, shown.stderr
    assert pending.call_id in shown.stdout and pending.digest in shown.stdout
    assert "send_payment" in shown.stdout and '"amount_cents": 1250' in shown.stdout
    one = json.loads(cli("pending", "run-a", "--json", journal=path).stdout)["pending"]
    assert [c["call_id"] for c in one] == [pending.call_id]
    cli("approve", "run-a", pending.call_id, "--digest", pending.digest, journal=path)
    assert "no call waits" in cli("pending", journal=path).stdout
    assert _pending(server, str(path), "run-a") == ()


def test_approve_without_a_digest_refuses_without_a_terminal(
    server: EmulationServer, tmp_path: Path
) -> None:
    path = tmp_path / "j.sqlite3"
    pending = suspend(server, str(path), "run-t")
    done = cli("approve", "run-t", pending.call_id, journal=path)
    assert done.returncode == 2
    assert "--digest" in done.stderr and "terminal" in done.stderr
    assert "Traceback" not in done.stderr
    journal = SQLiteJournal(path, read_only=True)
    try:
        assert journal.load_run("run-t").events[-1].kind == "run_suspended"
    finally:
        journal.close()


def _at_terminal(path: Path, run_id: str, call_id: str, answer: bytes) -> tuple[int, str]:
    """``runs approve`` without ``--digest``, its stdin a terminal that types ``answer``."""
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "TOOLWIRE_APPROVAL_KEY"}
    child = subprocess.Popen(
        [sys.executable, "-m", "toolwire", "runs", "approve", run_id, call_id,
         "--journal", str(path)],
        stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=ROOT, env=env,
    )  # fmt: skip
    os.close(follower)
    os.write(leader, answer)
    out, err = child.communicate(timeout=120)
    os.close(leader)
    return child.returncode, (out + err).decode()


@pytest.mark.parametrize(("typed", "approved"), [(b"y\n", True), (b"n\n", False), (b"\n", False)])
def test_approve_without_a_digest_shows_the_arguments_and_asks_at_a_terminal(
    server: EmulationServer, tmp_path: Path, typed: bytes, approved: bool
) -> None:
    path = tmp_path / "j.sqlite3"
    pending = suspend(server, str(path), "run-y")
    code, shown = _at_terminal(path, "run-y", pending.call_id, typed)
    assert '"amount_cents": 1250' in shown and pending.digest in shown and "[y/N]" in shown
    journal = SQLiteJournal(path, read_only=True)
    try:
        last = journal.load_run("run-y").events[-1]
    finally:
        journal.close()
    if approved:
        assert code == 0 and last.kind == "approval" and last.data["digest"] == pending.digest
    else:
        assert code == 2 and "nothing was recorded" in shown and last.kind == "run_suspended"
