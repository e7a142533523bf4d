"""The journal stores (SQLite and Postgres): records survive, read back
exactly, and bad input is a typed error."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from tests._postgres import other_connections
from tests.journal._opener import open_when_told
from toolwire.journal import (
    Journal,
    JournalError,
    JournalEvent,
    RunLog,
    RunSummary,
    SQLiteJournal,
    _files,
    encode_record,
)

from .conftest import OpenJournal

HEADER = json.dumps({"model": "m", "provider": "openai", "api": "openai-chat", "tools": ["t"]})


def start(journal: Journal, run_id: str = "run1") -> None:
    journal.record_run(
        run_id, header=HEADER, messages=[json.dumps({"kind": "user", "text": "hi"})], resumed=False
    )


def test_a_run_reads_back_in_order(open_journal: OpenJournal) -> None:
    journal = open_journal()
    assert isinstance(journal, Journal)
    start(journal)
    journal.record_event("run1", "model_request", '{"messages":1,"new":0}', turn=1, attempt=1)
    journal.record_event(
        "run1",
        "model_request",
        '{"messages":3,"new":2}',
        turn=2,
        attempt=1,
        messages=['{"kind":"user","text":"a"}', '{"kind":"user","text":"b"}'],
        first_position=1,
    )
    summary = '{"turns":2,"tool_calls":0,"usage":{"input_tokens":5},"output":"ok"}'
    journal.record_end("run1", status="answered", summary=summary, data=summary)
    journal.close()

    again = open_journal()
    log = again.load_run("run1")
    assert [e.kind for e in log.events] == [
        "run_started",
        "model_request",
        "model_request",
        "run_finished",
    ]
    assert [e.seq for e in log.events] == [1, 2, 3, 4]
    assert [m["text"] for m in log.messages] == ["hi", "a", "b"]
    assert log.run.status == "answered" and log.run.finished
    assert (log.run.output, log.run.turns, log.run.usage) == ("ok", 2, {"input_tokens": 5})
    assert log.problems() == []
    records = list(log.records())
    assert records[0]["type"] == "run" and records[0]["run_id"] == "run1"
    assert [r["type"] for r in records[1:4]] == ["message"] * 3


def test_the_file_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    SQLiteJournal(path).close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_taken_run_id_and_an_unknown_resume_are_typed_errors(
    open_journal: OpenJournal,
) -> None:
    journal = open_journal()
    start(journal)
    with pytest.raises(JournalError, match="already in the journal"):
        start(journal)
    with pytest.raises(JournalError, match="no run"):
        journal.record_run("other", header=HEADER, messages=[], resumed=True)
    with pytest.raises(JournalError, match="no run"):
        journal.load_run("other")
    with pytest.raises(JournalError, match="final run status"):
        journal.record_end("run1", status="running", summary="{}", data="{}")


def test_resuming_continues_the_numbering_and_counts_messages(open_journal: OpenJournal) -> None:
    journal = open_journal()
    start(journal)
    journal.record_event("run1", "model_request", "{}", turn=1, attempt=1)
    stored = journal.record_run("run1", header=HEADER, messages=[], resumed=True)
    assert stored == 1
    log = journal.load_run("run1")
    assert [(e.seq, e.kind) for e in log.events] == [
        (1, "run_started"),
        (2, "model_request"),
        (3, "run_resumed"),
    ]
    assert log.run.resumes == 1 and log.run.status == "running"


def test_find_run_by_id_prefix_and_last(open_journal: OpenJournal) -> None:
    journal = open_journal()
    for run_id in ("abc123", "abd456", "xyz789"):
        start(journal, run_id)
    assert journal.find_run("abc123") == "abc123"
    assert journal.find_run("abc") == "abc123"
    assert journal.find_run("last") == "xyz789"
    with pytest.raises(JournalError, match="several runs"):
        journal.find_run("ab")
    with pytest.raises(JournalError, match="no run"):
        journal.find_run("q")
    with pytest.raises(JournalError, match="no run"):
        journal.find_run("%")
    assert [s.run_id for s in journal.list_runs(limit=2)] == ["xyz789", "abd456"]
    assert isinstance(journal.list_runs()[0], RunSummary)


def test_an_empty_journal_has_no_last_run(open_journal: OpenJournal) -> None:
    with pytest.raises(JournalError, match="holds no run"):
        open_journal().find_run("last")


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(JournalError, match="newer toolwire"):
        SQLiteJournal(path)


def test_a_file_that_is_not_a_database_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(JournalError, match="is not a toolwire journal, or it is corrupt"):
        SQLiteJournal(path)


def test_a_closed_journal_refuses_writes_and_reads(open_journal: OpenJournal) -> None:
    journal = open_journal()
    journal.close()
    journal.close()
    with pytest.raises(JournalError, match="closed"):
        start(journal)
    with pytest.raises(JournalError, match="closed"):
        journal.list_runs()


def test_a_corrupt_record_is_a_typed_error_on_load(open_journal: OpenJournal) -> None:
    journal = open_journal()
    start(journal)
    journal.record_event("run1", "model_request", "{not json", turn=1, attempt=1)
    with pytest.raises(JournalError, match="not JSON"):
        journal.load_run("run1")
    journal.close()


def test_concurrent_runs_from_threads_all_land(open_journal: OpenJournal) -> None:
    journal = open_journal()

    def one(n: int) -> None:
        run_id = f"run{n}"
        start(journal, run_id)
        for turn in range(1, 21):
            journal.record_event(run_id, "model_request", "{}", turn=turn, attempt=1)

    threads = [threading.Thread(target=one, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for n in range(8):
        log = journal.load_run(f"run{n}")
        assert [e.seq for e in log.events] == list(range(1, 22))
        assert [e.turn for e in log.events[1:]] == list(range(1, 21))


def test_encode_record_keeps_lone_surrogates_and_redacts_secrets() -> None:
    text = encode_record({"a": "x\ud800y", "k": "Bearer sk-SECRET-123"}, ["sk-SECRET-123"])
    assert "sk-SECRET-123" not in text
    assert json.loads(text) == {"a": "x\ud800y", "k": "Bearer <redacted>"}
    text.encode("utf-8")  # storable


def _log(*events: tuple[str, int | None, str | None], status: str = "running") -> RunLog:
    run = RunSummary(run_id="r", started_at=0.0, updated_at=0.0, status=status)
    return RunLog(
        run=run,
        events=tuple(
            JournalEvent(seq=i, at=0.0, kind=kind, turn=turn, attempt=1, call_id=call)
            for i, (kind, turn, call) in enumerate(events, start=1)
        ),
        messages=(),
    )


def test_problems_finds_what_toolwire_never_writes() -> None:
    assert _log(("run_started", None, None), ("model_request", 1, None)).problems() == []
    assert (
        "no request" in _log(("run_started", None, None), ("model_response", 1, None)).problems()[0]
    )
    assert (
        "without an intent"
        in (_log(("run_started", None, None), ("tool_outcome", 1, "c")).problems()[0])
    )
    assert "must start" in _log(("model_request", 1, None)).problems()[0]
    ended = _log(
        ("run_started", None, None), ("run_finished", None, None), ("model_request", 2, None)
    )
    assert any("after the run ended" in p for p in ended.problems())
    finished = _log(("run_started", None, None), status="answered")
    assert any("not run_finished" in p for p in finished.problems())


def test_opening_retries_while_the_file_is_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[int] = []
    real = _files._open_writable

    def flaky(path: str, timeout: float) -> sqlite3.Connection:
        attempts.append(1)
        if len(attempts) < 3:
            raise sqlite3.OperationalError("database is locked")
        return real(path, timeout)

    monkeypatch.setattr(_files, "_open_writable", flaky)
    journal = SQLiteJournal(tmp_path / "j.sqlite3", timeout=5)
    journal.close()
    assert len(attempts) == 3


def test_opening_does_not_retry_other_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts: list[int] = []

    def broken(path: str, timeout: float) -> sqlite3.Connection:
        attempts.append(1)
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(_files, "_open_writable", broken)
    with pytest.raises(JournalError, match="disk I/O error"):
        SQLiteJournal(tmp_path / "j.sqlite3", timeout=5)
    assert len(attempts) == 1


def test_many_processes_open_a_new_journal_at_once(tmp_path: Path) -> None:
    """A batch's workers all open the same new file: none may fail. The
    workers start from a fresh interpreter (``forkserver``): a child forked
    from the test process could inherit a lock another thread of it holds."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["tests.journal._opener"])
    failed: list[str] = []
    for trial in range(10):
        path = str(tmp_path / f"j{trial}.sqlite3")
        start = ctx.Event()
        reports = [str(tmp_path / f"j{trial}-{n}.err") for n in range(6)]
        workers = [ctx.Process(target=open_when_told, args=(path, start, r)) for r in reports]
        for worker in workers:
            worker.start()
        start.set()
        for worker, report in zip(workers, reports, strict=True):
            worker.join(timeout=60)
            if worker.exitcode != 0:
                why = Path(report).read_text() if Path(report).exists() else "no report"
                failed.append(f"trial {trial}: exit code {worker.exitcode}: {why}")
                worker.kill()
    assert not failed, "\n".join(failed)


def test_postgres_schema_is_migrated_once_and_a_newer_one_is_refused(postgres_url: str) -> None:
    import psycopg

    from toolwire.journal import PostgresJournal
    from toolwire.journal._postgres import SCHEMA_VERSION

    reader = PostgresJournal(postgres_url, read_only=True)  # reading creates nothing
    assert reader.list_runs() == []
    with pytest.raises(JournalError, match="no run"):
        reader.load_run("run1")
    reader.close()
    with psycopg.connect(postgres_url) as db:
        assert db.execute("SELECT to_regclass('toolwire_schema')").fetchone() == (None,)
    first, second = PostgresJournal(postgres_url), PostgresJournal(postgres_url)
    first.close()
    second.close()
    with psycopg.connect(postgres_url, autocommit=True) as db:
        versions = db.execute("SELECT version FROM toolwire_schema ORDER BY version").fetchall()
        assert versions == [(n,) for n in range(1, SCHEMA_VERSION + 1)]
        db.execute("INSERT INTO toolwire_schema (version) VALUES (99)")
    with pytest.raises(JournalError, match="newer toolwire"):
        PostgresJournal(postgres_url)
    assert other_connections(postgres_url) == 0  # closed, not left to the collector


def test_postgres_setup_that_fails_once_connected_closes_the_connection(
    postgres_url: str,
) -> None:
    from toolwire.journal import PostgresJournal

    # Connected, then refused a setting: a lock timeout past PostgreSQL's
    # largest (2^31 - 1 ms). The error still holds the frames that opened the
    # connection while it is checked: only an explicit close ends it.
    with pytest.raises(JournalError, match="lock_timeout"):
        PostgresJournal(postgres_url, timeout=1e7)
    assert other_connections(postgres_url) == 0


def test_postgres_journal_never_shows_the_password(postgres_server: Any) -> None:
    from toolwire.journal import PostgresJournal

    url = postgres_server.url().replace("postgres@", "postgres:hunter2-secret@")
    journal = PostgresJournal(url)
    try:
        assert "hunter2" not in repr(journal) and "hunter2" not in journal.where
        with pytest.raises(JournalError) as caught:
            journal.load_run("nope")
        assert "hunter2" not in str(caught.value)
    finally:
        journal.close()
    with pytest.raises(JournalError) as refused:
        PostgresJournal("postgresql://u:hunter2-secret@/nodb?host=/nonexistent", timeout=2)
    assert "hunter2" not in str(refused.value)


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u:hun%zzter2@127.0.0.1:1/db",
        "postgresql://u:hun ter2@127.0.0.1:1/db",
        "postgresql://127.0.0.1:1/db?password=hun%zzter2",
    ],
)
def test_a_postgres_url_libpq_cannot_parse_is_refused_without_its_password(url: str) -> None:
    from toolwire.journal import PostgresJournal

    with pytest.raises(JournalError) as refused:
        PostgresJournal(url, timeout=1)
    assert "hun" not in str(refused.value)


def test_a_journal_file_removed_while_it_opens_is_a_journal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The file goes away between SQLite's opening and the look at its inode
    # (a reader racing a deletion): a JournalError saying so, never a bare
    # FileNotFoundError, and the connection is closed.
    import toolwire.journal._store as store

    path = tmp_path / "journal.sqlite3"
    SQLiteJournal(path).close()
    opened: list[sqlite3.Connection] = []
    real_connect = store.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        opened.append(real_connect(*args, **kwargs))
        path.unlink()
        return opened[-1]

    monkeypatch.setattr(store, "connect", connect)
    with pytest.raises(JournalError, match=r"cannot read the journal .*No such file"):
        SQLiteJournal(path, read_only=True)
    with pytest.raises(sqlite3.ProgrammingError):  # closed
        opened[0].execute("SELECT 1")
