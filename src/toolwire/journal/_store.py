"""Where a journal keeps its records: the :class:`Journal` protocol and SQLite.

Theory of operation
-------------------
A journal is an append-only log per run plus one summary row per run. Three
tables hold it:

* ``runs``: one row per run (model, provider, settings, status, final usage
  and output), updated when the run starts, resumes and ends;
* ``events``: the steps of every run, numbered ``seq`` 1, 2, 3... within the
  run (``run_started``, ``model_request``, ``model_response``,
  ``model_failed``, ``tool_intent``, ``approval``, ``tool_outcome``,
  ``run_resumed``, ``run_finished``, ``run_failed``), each with a JSON
  payload;
* ``messages``: the normalized conversation, one row per message position,
  written once when a model request first carries it (so a long run does not
  store its history again at every turn).

Each write is one short transaction, committed before the agent takes the
step it records: the intent of a tool call is on disk before the tool runs.
The file is in WAL mode with ``synchronous=NORMAL``: a commit is a write to
the WAL, not an fsync, which keeps journaling cheap; a killed process (even
``kill -9``) loses nothing committed, since the data is in the operating
system's cache; only a power cut may lose the last commits.

A journal holds whole conversations, tool arguments and results: the
directories toolwire creates for it are 0700 and its files (the database,
``-wal``, ``-shm`` and ``-lock``) 0600, created that way (see
:mod:`toolwire.journal._files`). Reading commands open it read-only.

One connection serves the whole process, behind a lock, so many runs of one
process (concurrent asyncio tasks, or threads) write safely; other processes
may write to the same file, SQLite's locks serialize them (``busy_timeout``).
Each run has one writer at a time, which is what makes the per-run ``seq``
counter kept in memory correct: the run's lease (:meth:`SQLiteJournal.lease`)
enforces it across processes.

Payloads cross the :class:`Journal` protocol as JSON *text*: the observer
that builds them also redacts secrets from them, and any other store would
serialize them anyway.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from toolwire.journal._files import connect, unreadable
from toolwire.journal._lease import hold_lease
from toolwire.journal._records import (
    RUN_STATUSES,
    JournalError,
    JournalEvent,
    RunLog,
    RunSummary,
    loads_record,
    summary_from_row,
)

__all__ = ["SQLiteJournal"]


class SQLiteJournal:
    """The journal in a SQLite file (or in memory, for tests).

    Args:
        path: the database file, created with its directory if missing
            (private to the user: directories 0700, files 0600);
            ``":memory:"`` keeps everything in memory.
        timeout: seconds to wait for another process's write lock.
        read_only: read an existing journal without changing it (what the
            ``toolwire runs`` commands do); writes raise.

    Raises:
        JournalError: the file cannot be opened, is not a journal (or is
            corrupt), or was written by a newer toolwire.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        timeout: float = 30.0,
        read_only: bool = False,
    ) -> None:
        self.path = os.fspath(path)
        self.read_only = read_only
        self._lock = threading.Lock()
        self._seq: dict[str, int] = {}
        self._db: sqlite3.Connection | None = connect(
            self.path, timeout=timeout, read_only=read_only
        )
        self._tables = not read_only or self._has_tables()

    def _has_tables(self) -> bool:
        """Whether a file opened read-only holds the journal's tables (an empty
        file is a journal with no run yet)."""
        assert self._db is not None
        try:
            row = self._db.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'"
            ).fetchone()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise unreadable(self.path, exc) from exc
        return bool(row[0])

    @classmethod
    def memory(cls) -> SQLiteJournal:
        """A journal that lives in memory (for tests)."""
        return cls(":memory:")

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"SQLiteJournal({self.path!r}{mode})"

    def lease(self, run_id: str) -> AbstractContextManager[None]:
        """See :meth:`Journal.lease`."""
        key = self.path if self.path != ":memory:" else f":memory:{id(self)}"
        return hold_lease(key, run_id)

    # -- writing ---------------------------------------------------------------

    def _write(self, work: Any) -> Any:
        if self.read_only:
            raise JournalError(f"the journal {self.path} is open read-only")
        with self._lock:
            db = self._db
            if db is None:
                raise JournalError("the journal is closed")
            try:
                db.execute("BEGIN IMMEDIATE")
                try:
                    value = work(db)
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise unreadable(self.path, exc, writing=True) from exc
            return value

    def _next_seq(self, db: sqlite3.Connection, run_id: str) -> int:
        seq = self._seq.get(run_id)
        if seq is None:
            row = db.execute("SELECT max(seq) FROM events WHERE run_id = ?", (run_id,)).fetchone()
            seq = row[0] or 0
        seq += 1
        self._seq[run_id] = seq
        return seq

    def _append(
        self,
        db: sqlite3.Connection,
        run_id: str,
        kind: str,
        data: str,
        turn: int | None = None,
        attempt: int | None = None,
        call_id: str | None = None,
    ) -> int:
        seq = self._next_seq(db, run_id)
        db.execute(
            "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, seq, time.time(), kind, turn, attempt, call_id, data),
        )
        return seq

    def record_run(
        self, run_id: str, *, header: str, messages: Sequence[str], resumed: bool
    ) -> int:
        """See :meth:`Journal.record_run`."""

        def work(db: sqlite3.Connection) -> int:
            now = time.time()
            if resumed:
                updated = db.execute(
                    "UPDATE runs SET status = 'running', updated_at = ?, summary = NULL, "
                    "resumes = resumes + 1 WHERE run_id = ?",
                    (now, run_id),
                ).rowcount
                if updated != 1:
                    raise JournalError(f"no run {run_id!r} in the journal {self.path}")
                self._seq.pop(run_id, None)
                self._append(db, run_id, "run_resumed", header)
                row = db.execute(
                    "SELECT count(*) FROM messages WHERE run_id = ?", (run_id,)
                ).fetchone()
                return int(row[0])
            try:
                db.execute(
                    "INSERT INTO runs (run_id, started_at, updated_at, status, header) "
                    "VALUES (?, ?, ?, 'running', ?)",
                    (run_id, now, now, header),
                )
            except sqlite3.IntegrityError:
                raise JournalError(
                    f"the run id {run_id!r} is already in the journal; resume it, or "
                    "start a new run with another id"
                ) from None
            self._seq[run_id] = 0
            self._append(db, run_id, "run_started", header)
            db.executemany(
                "INSERT INTO messages VALUES (?, ?, ?)",
                [(run_id, i, text) for i, text in enumerate(messages)],
            )
            return len(messages)

        count: int = self._write(work)
        return count

    def record_event(
        self,
        run_id: str,
        kind: str,
        data: str,
        *,
        turn: int | None = None,
        attempt: int | None = None,
        call_id: str | None = None,
        messages: Sequence[str] = (),
        first_position: int = 0,
    ) -> int:
        """See :meth:`Journal.record_event`."""

        def work(db: sqlite3.Connection) -> int:
            if messages:
                # OR IGNORE: a message already stored (a request sent again
                # after a resume) keeps its first record.
                db.executemany(
                    "INSERT OR IGNORE INTO messages VALUES (?, ?, ?)",
                    [(run_id, first_position + i, text) for i, text in enumerate(messages)],
                )
            return self._append(db, run_id, kind, data, turn, attempt, call_id)

        seq: int = self._write(work)
        return seq

    def record_end(self, run_id: str, *, status: str, summary: str, data: str) -> None:
        """See :meth:`Journal.record_end`."""
        if status not in RUN_STATUSES or status == "running":
            raise JournalError(f"not a final run status: {status!r}")
        kind = "run_failed" if status in ("failed", "cancelled") else "run_finished"

        def work(db: sqlite3.Connection) -> None:
            self._append(db, run_id, kind, data)
            db.execute(
                "UPDATE runs SET status = ?, summary = ?, updated_at = ? WHERE run_id = ?",
                (status, summary, time.time(), run_id),
            )

        self._write(work)
        # The run is over for this process: forget its counters.
        self._seq.pop(run_id, None)

    # -- reading ---------------------------------------------------------------

    def _read(self, query: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        if not self._tables:
            return []  # a file with no journal in it yet: no run
        with self._lock:
            db = self._db
            if db is None:
                raise JournalError("the journal is closed")
            try:
                rows: list[tuple[Any, ...]] = db.execute(query, args).fetchall()
            except sqlite3.Error as exc:
                raise unreadable(self.path, exc) from exc
        return rows

    def load_run(self, run_id: str) -> RunLog:
        """See :meth:`Journal.load_run`."""
        rows = self._read(
            "SELECT run_id, started_at, updated_at, status, header, summary, resumes "
            "FROM runs WHERE run_id = ?",
            (run_id,),
        )
        if not rows:
            raise JournalError(f"no run {run_id!r} in the journal {self.path}")
        run = summary_from_row(rows[0])
        events: list[JournalEvent] = []
        for seq, at, kind, turn, attempt, call_id, data in self._read(
            "SELECT seq, at, kind, turn, attempt, call_id, data FROM events "
            "WHERE run_id = ? ORDER BY seq",
            (run_id,),
        ):
            payload = loads_record(data, f"{kind} record")
            if not isinstance(payload, dict):
                raise JournalError(f"run {run_id}: event {seq} is not a JSON object")
            events.append(
                JournalEvent(
                    seq=seq,
                    at=at,
                    kind=kind,
                    turn=turn,
                    attempt=attempt,
                    call_id=call_id,
                    data=payload,
                )
            )
        messages: list[dict[str, Any]] = []
        for (text,) in self._read(
            "SELECT data FROM messages WHERE run_id = ? ORDER BY position", (run_id,)
        ):
            message = loads_record(text, "message")
            if not isinstance(message, dict):
                raise JournalError(f"run {run_id}: a stored message is not a JSON object")
            messages.append(message)
        return RunLog(run=run, events=tuple(events), messages=tuple(messages))

    def list_runs(self, *, limit: int = 50) -> list[RunSummary]:
        """See :meth:`Journal.list_runs`."""
        rows = self._read(
            "SELECT run_id, started_at, updated_at, status, header, summary, resumes "
            "FROM runs ORDER BY started_at DESC, rowid DESC LIMIT ?",
            (max(limit, 0),),
        )
        return [summary_from_row(row) for row in rows]

    def find_run(self, ref: str) -> str:
        """See :meth:`Journal.find_run`."""
        if self._read("SELECT 1 FROM runs WHERE run_id = ?", (ref,)):
            return ref
        if ref == "last":
            rows = self._read(
                "SELECT run_id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 1", ()
            )
            if not rows:
                raise JournalError(f"the journal {self.path} holds no run")
            return str(rows[0][0])
        if ref:
            escaped = ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            rows = self._read(
                "SELECT run_id FROM runs WHERE run_id LIKE ? ESCAPE '\\' LIMIT 2",
                (escaped + "%",),
            )
            if len(rows) == 1:
                return str(rows[0][0])
            if len(rows) > 1:
                raise JournalError(f"several runs start with {ref!r}; give more of the id")
        raise JournalError(f"no run {ref!r} in the journal {self.path}")

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()
