"""One process at a time per run. The lease is taken before a run's journal is
read and held to its end; a second process (or task) is refused with
``RunLeased``; a process that died holds nothing, so its successor resumes.
Two real processes racing to resume the same runs never run a non-idempotent
tool twice."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolwire import Agent
from toolwire.journal import Journal, PostgresJournal, RunLeased, SQLiteJournal
from toolwire.providers import OpenAIChat
from toolwire.testing import EmulationServer, Scenario

from ._holder import LEASE_TTL, open_store
from ._support import CrashAt, crashing_agent, expect_crash
from .conftest import OpenJournal

pytestmark = pytest.mark.anyio

ROUNDS = 50
ROOT = Path(__file__).resolve().parents[2]
HEADER = json.dumps({"model": "m", "provider": "openai", "tools": []})


def test_a_second_lease_in_the_same_process_is_refused(open_journal: OpenJournal) -> None:
    journal = open_journal()
    other = open_journal()  # another object on the same store
    with journal.lease("run-1"), journal.lease("run-2"):
        with pytest.raises(RunLeased, match="run-1"):
            with other.lease("run-1"):
                pass
    with other.lease("run-1"):  # released at the end of the block
        pass
    other.close()  # closing one journal keeps the other's leases
    with journal.lease("run-1"):
        pass


def _holder(store: str, run_id: str) -> subprocess.Popen[str]:
    code = (
        "import sys\n"
        "from tests.journal._holder import open_store\n"
        f"journal = open_store({store!r})\n"
        f"with journal.lease({run_id!r}):\n"
        "    print('held', flush=True)\n"
        "    sys.stdin.read()\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "held"
    return child


def _take_within(journal: Journal, run_id: str, seconds: float) -> None:
    """Take and release the run's lease, retrying until ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with journal.lease(run_id):
                return
        except RunLeased:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_a_live_process_holds_the_lease_and_a_killed_one_does_not(
    store: str, open_journal: OpenJournal
) -> None:
    journal = open_journal()
    child = _holder(store, "run-1")
    try:
        with pytest.raises(RunLeased, match="run-1"):
            with journal.lease("run-1"):
                pass
        with journal.lease("run-2"):  # other runs are free
            pass
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.communicate()
    # The successor of a killed process takes over: at once from a file's
    # lock, once the lease expires (a second, in tests) from Postgres.
    _take_within(journal, "run-1", 0.0 if store.endswith(".sqlite3") else 10.0)


def spellings(tmp_path: Path) -> list[Path]:
    """One journal under four names: its path, another spelling of it, a
    symbolic link and a hard link."""
    path = tmp_path / "j.sqlite3"
    SQLiteJournal(path).close()
    (tmp_path / "sub").mkdir()
    other = tmp_path / "sub" / ".." / "j.sqlite3"
    link = tmp_path / "link.sqlite3"
    link.symlink_to(path)
    hard = tmp_path / "sub" / "hard.sqlite3"
    os.link(path, hard)
    return [path, other, link, hard]


def test_every_name_of_a_journal_meets_the_same_lease_in_a_process(tmp_path: Path) -> None:
    names = spellings(tmp_path)
    journals = [SQLiteJournal(name) for name in names]
    for holder in journals:
        with holder.lease("run-1"):
            for other in journals:
                with pytest.raises(RunLeased, match="already running in this process"):
                    with other.lease("run-1"):
                        pass
    for journal in journals:
        journal.close()


@pytest.mark.parametrize(("held_by", "asked_by"), [(2, 3), (3, 0), (0, 2), (1, 3)])
def test_every_name_of_a_journal_meets_the_same_lease_across_processes(
    tmp_path: Path, held_by: int, asked_by: int
) -> None:
    names = spellings(tmp_path)
    child = _holder(str(names[held_by]), "run-1")
    journal = SQLiteJournal(names[asked_by])
    try:
        with pytest.raises(RunLeased, match="running in another process"):
            with journal.lease("run-1"):
                pass
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.communicate()
    with journal.lease("run-1"):
        pass
    journal.close()


def race_scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "race",
            "turns": [
                {"tool_calls": [{"name": "notify", "arguments": {"text": "hello"}}]},
                {"text": "done: {result:notify}"},
            ],
        }
    )


async def interrupted_runs(
    server: EmulationServer, journal: Journal, scratch: Path, count: int
) -> list[str]:
    """Runs that died with a notify call decided but not yet started."""
    from ._race_worker import make_notify

    run_ids = [f"race-{n:03d}" for n in range(count)]
    notify: Any = make_notify(str(scratch / "unused.sqlite3"))
    for run_id in run_ids:
        crash = CrashAt("tool_started", name="notify")
        agent = crashing_agent(server, [notify], journal, crash, before_journal=True)
        try:
            await expect_crash(agent.run("notify", run_id=run_id))
        finally:
            await agent.aclose()
    journal.close()
    return run_ids


def _worker(url: str, store: str, ledger: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.journal._race_worker", url, store, str(ledger)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert child.stdout is not None
    assert "ready" in json.loads(child.stdout.readline())
    return child


async def test_two_processes_racing_to_resume_never_run_a_tool_twice(
    tmp_path: Path, store: str, open_journal: OpenJournal
) -> None:
    ledger = tmp_path / "ledger.sqlite3"
    with sqlite3.connect(ledger) as db:
        db.execute("CREATE TABLE notes (run_id TEXT, pid INTEGER)")
    with EmulationServer(race_scenario()) as server:
        rounds = ROUNDS if store.endswith(".sqlite3") else ROUNDS // 2  # a server round trip each
        run_ids = await interrupted_runs(server, open_journal(), tmp_path, rounds)
        url = server.url_for("openai-chat")
        workers = [_worker(url, store, ledger) for _ in range(2)]
        outcomes: list[list[str]] = []
        try:
            for run_id in run_ids:
                for worker in workers:  # both start the same resume at once
                    assert worker.stdin is not None
                    worker.stdin.write(run_id + "\n")
                    worker.stdin.flush()
                replies = [json.loads(w.stdout.readline()) for w in workers]  # type: ignore[union-attr]
                assert all(r["run_id"] == run_id for r in replies)
                outcomes.append(sorted(r["outcome"] for r in replies))
        finally:
            for worker in workers:
                worker.communicate(timeout=60)

    with sqlite3.connect(ledger) as db:
        notes = db.execute("SELECT run_id, count(*) FROM notes GROUP BY run_id").fetchall()
    assert dict(notes) == dict.fromkeys(run_ids, 1), "every run notified exactly once"
    for outcome in outcomes:
        # One resumed the run; the other was refused while it ran, or found
        # it finished (a finished run resumes to its recorded result).
        assert outcome in (["leased", "ran"], ["ran", "ran"]), outcome
    journal = open_store(store, read_only=True)
    try:
        for run_id in run_ids:
            log = journal.load_run(run_id)
            assert log.problems() == [], (run_id, log.problems())
            assert log.run.status == "answered"
            assert [e.kind for e in log.events].count("tool_intent") == 1
    finally:
        journal.close()
    print(f"rounds where the second resumer was refused: {sum('leased' in o for o in outcomes)}")


def _stale_worker(store: str, run_id: str) -> tuple[subprocess.Popen[str], int]:
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.journal._holder", store, run_id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert child.stdout is not None
    return child, json.loads(child.stdout.readline())["held"]


def _say(child: subprocess.Popen[str], line: str) -> dict[str, Any]:
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(line + "\n")
    child.stdin.flush()
    reply: dict[str, Any] = json.loads(child.stdout.readline())
    return reply


def test_a_stopped_worker_past_its_lease_is_refused_by_its_fencing_token(
    postgres_url: str,
) -> None:
    journal = open_store(postgres_url)
    assert isinstance(journal, PostgresJournal)
    journal.record_run("run-1", header=HEADER, messages=[], resumed=False)
    child, stale_token = _stale_worker(postgres_url, "run-1")
    try:
        assert _say(child, '{"from":"first","n":1}') == {"wrote": 2}
        os.kill(child.pid, signal.SIGSTOP)  # it stops renewing its lease
        try:
            with pytest.raises(RunLeased, match="leased by"):
                with journal.lease("run-1"):
                    pass
            deadline = time.monotonic() + 10.0
            while True:  # the lease expires: another worker takes the run over
                try:
                    with journal.lease("run-1"):
                        token = journal.token("run-1")
                        assert token is not None and token > stale_token
                        journal.record_run("run-1", header=HEADER, messages=[], resumed=True)
                        seq = journal.record_event("run-1", "model_request", '{"from":"new"}')
                        assert seq == 4
                        # The stale worker wakes up while the new owner holds the run.
                        os.kill(child.pid, signal.SIGCONT)
                        assert _say(child, '{"from":"first","n":2}') == {"refused": "lease_lost"}
                    break
                except RunLeased:
                    assert time.monotonic() < deadline, "the stopped worker's lease never expired"
                    time.sleep(0.05)
        finally:
            os.kill(child.pid, signal.SIGCONT)
        # After the new owner released it, the stale token is still refused.
        assert _say(child, '{"from":"first","n":3}') == {"refused": "lease_lost"}
    finally:
        child.communicate(timeout=10)
    log = journal.load_run("run-1")
    assert [(e.seq, e.kind, e.data.get("from")) for e in log.events] == [
        (1, "run_started", None),
        (2, "model_request", "first"),
        (3, "run_resumed", None),
        (4, "model_request", "new"),
    ]
    assert log.problems() == []


def test_a_held_lease_is_renewed_past_its_life(postgres_url: str) -> None:
    holder = open_store(postgres_url)
    other = open_store(postgres_url)
    try:
        with holder.lease("run-1"):
            time.sleep(LEASE_TTL * 2)
            with pytest.raises(RunLeased):
                with other.lease("run-1"):
                    pass
        with other.lease("run-1"):  # given up at the end of the block
            pass
    finally:
        holder.close()
        other.close()


@pytest.mark.parametrize(
    ("lease_ttl", "timeout", "idle"), [(0.5, 10.0, "2s"), (5.0, 10.0, "5s"), (30.0, 1.0, "1s")]
)
def test_a_write_left_idle_is_ended_after_the_leases_life_within_bounds(
    postgres_url: str, lease_ttl: float, timeout: float, idle: str
) -> None:
    # At least MIN_IDLE: a short lease does not have the server end the
    # transaction of a live worker a busy machine paused for half a second.
    journal = PostgresJournal(postgres_url, lease_ttl=lease_ttl, timeout=timeout)
    db = journal._connect()
    try:
        row = db.execute("SHOW idle_in_transaction_session_timeout").fetchone()
        assert row is not None and row[0] == idle
    finally:
        db.close()
        journal.close()


def test_a_worker_frozen_inside_a_write_does_not_block_the_takeover(postgres_url: str) -> None:
    journal = open_store(postgres_url)  # its lock timeout: 10 s
    assert isinstance(journal, PostgresJournal)
    journal.record_run("run-1", header=HEADER, messages=[], resumed=False)
    child, stale_token = _stale_worker(postgres_url, "run-1")
    try:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write("freeze\n")
        child.stdin.flush()
        assert "freezing" in json.loads(child.stdout.readline())
        # Frozen with its write transaction open, the lease row share-locked.
        started = time.monotonic()
        while True:
            try:
                with journal.lease("run-1"):
                    token = journal.token("run-1")
                    assert token is not None and token > stale_token
                    journal.record_run("run-1", header=HEADER, messages=[], resumed=True)
                break
            except RunLeased:  # a live lease, or a lock that outlived the lock timeout
                assert time.monotonic() - started < journal.timeout, "the takeover never came"
                time.sleep(0.05)
        # Taken over within the lock timeout: the frozen transaction was ended
        # once idle for the lease's life, not left to block the run forever.
        elapsed = time.monotonic() - started
        assert elapsed < journal.timeout
        print(f"taken over {elapsed:.2f} s after the worker froze inside its write")
        os.kill(child.pid, signal.SIGCONT)
        assert _say(child, '{"from":"first","n":2}')["refused"] in ("journal_error", "lease_lost")
    finally:
        os.kill(child.pid, signal.SIGCONT)
        child.communicate(timeout=10)
    log = journal.load_run("run-1")
    assert [e.kind for e in log.events] == ["run_started", "run_resumed"]  # nothing frozen landed
    journal.close()


def test_a_lease_row_locked_past_the_lock_timeout_is_run_leased(postgres_url: str) -> None:
    import psycopg

    journal = PostgresJournal(postgres_url, lease_ttl=LEASE_TTL, timeout=1.0)
    other = PostgresJournal(postgres_url, lease_ttl=LEASE_TTL, timeout=1.0)
    try:
        with journal.lease("run-1"):
            # Another session holds the lease row in an open write transaction
            # (as a frozen worker does), with no idle timeout of its own.
            with psycopg.connect(postgres_url) as frozen:
                frozen.execute("SELECT * FROM toolwire_leases WHERE run_id = 'run-1' FOR SHARE")
                started = time.monotonic()
                with pytest.raises(RunLeased, match="lock timeout"):
                    with other.lease("run-1"):
                        pass
                assert time.monotonic() - started < 5.0
                frozen.rollback()
    finally:
        journal.close()
        other.close()


def _fenced_worker(url: str, store: str, ledger: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.journal._fenced_worker", url, store, str(ledger)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def _runs_show(store: str, run_id: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolwire", "runs", "show", run_id, "--journal", store],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


async def test_a_fenced_out_workers_call_is_recorded_as_may_have_run(
    tmp_path: Path, postgres_url: str
) -> None:
    from ._fenced_worker import make_pay

    ledger = tmp_path / "ledger.txt"
    ledger.touch()
    scenario = Scenario.from_dict(
        {
            "turns": [
                {"tool_calls": [{"name": "pay", "arguments": {"cents": 1250}}]},
                {"text": "done"},
            ]
        }
    )
    with EmulationServer(scenario) as server:
        url = server.url_for("openai-chat")
        child = _fenced_worker(url, postgres_url, ledger)
        try:
            assert child.stdout is not None
            assert "paying" in json.loads(child.stdout.readline())  # and stopped, lease lapsing
            journal = PostgresJournal(postgres_url, lease_ttl=LEASE_TTL, timeout=10.0)
            agent = Agent(
                OpenAIChat(base_url=url, api_key="test-key"),
                model="fenced",
                tools=[make_pay(str(ledger), stop=False)],
                journal=journal,
            )
            try:
                deadline = time.monotonic() + 10.0
                while True:  # the takeover, once the stopped worker's lease expires
                    try:
                        result = await agent.resume("fenced")
                        break
                    except RunLeased:
                        assert time.monotonic() < deadline, "the lease never expired"
                        await anyio.sleep(0.05)
            finally:
                await agent.aclose()
            assert result.output == "done"
            os.kill(child.pid, signal.SIGCONT)  # the fenced-out worker pays after all
            out, _ = child.communicate(timeout=30)
        finally:
            if child.poll() is None:
                os.kill(child.pid, signal.SIGKILL)
                child.communicate()
    assert json.loads(out.splitlines()[-1]) == {"outcome": "lease_lost"}
    assert len(ledger.read_text().splitlines()) == 1  # the call ran once: the paused worker's
    log = journal.load_run("fenced")
    outcomes = [e.data for e in log.events if e.kind == "tool_outcome"]
    assert len(outcomes) == 1  # the fenced-out worker's own outcome was refused
    assert outcomes[0]["interrupted"] is True and outcomes[0]["may_have_run"] is True
    assert "may have run" in json.loads(outcomes[0]["result"]["content"])["message"]
    journal.close()
    shown = _runs_show(postgres_url, "fenced")
    assert shown.returncode == 0, shown.stderr
    assert "pay may have run" in shown.stdout and "not run again" not in shown.stdout
