"""Where a journal keeps its records: the :class:`Journal` protocol and SQLite.

Theory of operation
-------------------
A journal is an append-only log per run plus one summary row per run. Four
tables hold it:

* ``runs``: one row per run (model, provider, settings, status, final usage
  and output), updated when the run starts, resumes and ends, with an
  integer ``id`` that keys the run's rows in the other two tables;
* ``events``: the steps of every run, numbered ``seq`` 1, 2, 3... within the
  run (``run_started``, ``model_request``, ``model_response``,
  ``model_failed``, ``tool_intent``, ``approval``, ``tool_outcome``,
  ``run_resumed``, ``run_finished``, ``run_failed``), each with a JSON
  payload;
* ``messages``: the normalized conversation, one row per message position,
  written once when a model request first carries it (so a long run does not
  store its history again at every turn);
* ``blobs``: the bytes of the images, documents and audio the runs carry,
  once each, keyed by their sha256 (the records refer to them, see
  :mod:`toolwire.journal._blobs`).

Each write is one short transaction, committed before the agent takes the
step it records: the intent of a tool call is on disk before the tool runs.
:meth:`SQLiteJournal.record_steps` writes several records of a run in one
transaction (what :class:`~toolwire.journal.JournalObserver` uses to commit
a record that describes what already happened with the next one that must
be on disk first). The file is in WAL mode with ``synchronous=NORMAL``: a commit is a write to
the WAL, not an fsync, which keeps journaling cheap; a killed process (even
``kill -9``) loses nothing committed, since the data is in the operating
system's cache; only a power cut may lose the last commits.

A journal holds whole conversations, tool arguments and results: the
directories toolwire creates for it are 0700 and its files (the database,
``-wal``, ``-shm``, and ``-lock`` where leases need a lock file) 0600, created
that way (see
:mod:`toolwire.journal._files`). Reading commands open it read-only.

One connection serves the whole process, behind a lock, so many runs of one
process (concurrent asyncio tasks, or threads) write safely; other processes
may write to the same file, SQLite's locks serialize them (``busy_timeout``).
Each run has one writer at a time, which is what makes the per-run ``seq``
counter and key kept in memory correct (a transaction that fails forgets
them, and the next one reads them again): the run's lease (:meth:`SQLiteJournal.lease`)
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
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from toolwire.journal._base import RunStore, StoreQueries, escape_like
from toolwire.journal._blobs import MAX_BLOB_BYTES
from toolwire.journal._files import SEQ_BITS, connect, keyed_by_text, unreadable
from toolwire.journal._lease import file_identity, hold_lease, lease_held
from toolwire.journal._records import (
    JournalError,
    JournalEvent,
    RunLog,
    Step,
    column_text,
    events_from_rows,
    log_from_rows,
)

__all__ = ["SQLiteJournal"]

T = TypeVar("T")

_ID_PREFIX = "SELECT 1 FROM runs WHERE run_id >= ? AND run_id < ?"
_TOP = chr(0x10FFFF)
"""After every text that starts with a given prefix (SQLite compares UTF-8 bytes)."""
_LAST = (1 << SEQ_BITS) - 1
"""The largest ``seq`` (and message position) of a run."""
# A run's events and messages: a range of keys, or (schema 1) its text id.
_EVENTS = {
    False: "SELECT seq, at, kind, turn, attempt, call_id, data FROM events "
    "WHERE key BETWEEN ? AND ? ORDER BY key",
    True: "SELECT seq, at, kind, turn, attempt, call_id, data FROM events "
    "WHERE run_id = ? ORDER BY seq",
}
_MESSAGES = {
    False: "SELECT data FROM messages WHERE key BETWEEN ? AND ? ORDER BY key",
    True: "SELECT data FROM messages WHERE run_id = ? ORDER BY position",
}


class SQLiteJournal(RunStore[sqlite3.Connection]):
    """The journal in a SQLite file (or in memory, for tests).

    Args:
        path: the database file, created with its directory if missing
            (private to the user: directories 0700, files 0600);
            ``":memory:"`` keeps everything in memory.
        timeout: seconds to wait for another process's write lock.
        read_only: read an existing journal without changing it (what the
            ``toolwire runs`` commands do); writes raise.
        max_blob_bytes: the largest content part (image, document, audio)
            it stores (:data:`~toolwire.journal.MAX_BLOB_BYTES` by default);
            a larger one is refused with :class:`~toolwire.errors.BlobTooLarge`.

    Raises:
        JournalError: the file cannot be opened, is not a journal (or is
            corrupt), or was written by a newer toolwire.
    """

    QUERIES = StoreQueries("runs", "rowid", "?", blobs="blobs", escape=" ESCAPE '\\'")

    def __init__(
        self,
        path: str | os.PathLike[str] = ":memory:",
        *,
        timeout: float = 30.0,
        read_only: bool = False,
        max_blob_bytes: int = MAX_BLOB_BYTES,
    ) -> None:
        self.path = os.fspath(path)
        self.max_blob_bytes = max_blob_bytes
        self.read_only = read_only
        self._lock = threading.Lock()
        self._seq: dict[str, int] = {}
        """The last ``seq`` of each run this process writes (it is the run's
        only writer: the lease says so)."""
        self._keys: dict[str, int] = {}
        """The integer key (``runs.id``) of each run this process writes."""
        self._db: sqlite3.Connection | None = connect(
            self.path, timeout=timeout, read_only=read_only
        )
        try:
            identity = None if self.path == ":memory:" else file_identity(self.path)
        except OSError as exc:  # removed between its opening and this look
            self.close()
            raise unreadable(self.path, exc, writing=not read_only) from exc
        self._identity = identity
        """The journal file's device and inode, read once: its leases' key."""
        self._tables = True
        self._by_text = False
        if read_only:
            self._tables, self._by_text = self._layout()

    def _layout(self) -> tuple[bool, bool]:
        """Whether a file opened read-only holds the journal's tables (an empty
        file is a journal with no run yet), and whether they are of schema 1
        (keyed by the run's text id), which a reader reads as they are."""
        assert self._db is not None
        try:
            row = self._db.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'"
            ).fetchone()
            return bool(row[0]), bool(row[0]) and keyed_by_text(self._db)
        except sqlite3.DatabaseError as exc:
            self.close()
            raise unreadable(self.path, exc) from exc

    @property
    def _name(self) -> str:
        return self.path

    @classmethod
    def memory(cls) -> SQLiteJournal:
        """A journal that lives in memory (for tests)."""
        return cls(":memory:")

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"SQLiteJournal({self.path!r}{mode})"

    def lease(self, run_id: str) -> AbstractContextManager[None]:
        """See :meth:`Journal.lease`: keyed by the file's identity, so every
        spelling of its path (links included) meets the same lease."""
        if self._identity is None:
            return hold_lease(f":memory:{id(self)}", run_id)
        return hold_lease(self.path, run_id, identity=self._identity)

    def leased(self, run_id: str) -> bool:
        """Whether a live process holds the run's lease (takes nothing):
        a ``running`` run nobody holds was interrupted."""
        if self._identity is None:
            return lease_held(f":memory:{id(self)}", run_id)
        return lease_held(self.path, run_id, identity=self._identity)

    # -- writing ---------------------------------------------------------------

    def _write(self, run_id: str, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in one transaction, committed when it returns."""
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
                    self._forget(run_id)  # what the transaction counted is undone
                    raise
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise unreadable(self.path, exc, writing=True) from exc
            return value

    def _key(self, db: sqlite3.Connection, run_id: str) -> int:
        """The run's integer key (``runs.id``), remembered once read."""
        key = self._keys.get(run_id)
        if key is None:
            row = db.execute("SELECT id FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None:
                raise JournalError(f"no run {run_id!r} in the journal {self.path}")
            key = self._keys[run_id] = int(row[0])
        return key

    def _append(self, db: sqlite3.Connection, run_id: str, step: Step) -> int:
        """Insert one event (and the messages it first carries); its ``seq``."""
        base = self._key(db, run_id) << SEQ_BITS
        seq = self._seq.get(run_id)
        if seq is None:  # the first write of this run by this process
            row = db.execute(
                "SELECT max(key) FROM events WHERE key BETWEEN ? AND ?", (base, base + _LAST)
            ).fetchone()
            seq = 0 if row[0] is None else row[0] - base
        seq += 1
        if seq > _LAST or step.first_position + len(step.messages) > _LAST:
            raise JournalError(f"run {run_id!r} has more records than a journal holds")
        self._seq[run_id] = seq
        if step.messages:
            # OR IGNORE: a message already stored (a request sent again
            # after a resume) keeps its first record.
            run, first = base >> SEQ_BITS, step.first_position
            db.executemany(
                "INSERT OR IGNORE INTO messages VALUES (?, ?, ?, ?)",
                [(base + first + i, run, first + i, text) for i, text in enumerate(step.messages)],
            )
        db.execute(
            "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                base + seq,
                base >> SEQ_BITS,
                seq,
                time.time(),
                step.kind,
                step.turn,
                step.attempt,
                column_text(step.call_id),
                step.data,
            ),
        )
        return seq

    def _start(self, db: sqlite3.Connection, run_id: str, step: Step) -> None:
        now = time.time()
        try:
            cursor = db.execute(
                "INSERT INTO runs (run_id, started_at, updated_at, status, header) "
                "VALUES (?, ?, ?, 'running', ?)",
                (run_id, now, now, step.data),
            )
        except sqlite3.IntegrityError:
            raise JournalError(
                f"the run id {run_id!r} is already in the journal; resume it, or "
                "start a new run with another id"
            ) from None
        assert cursor.lastrowid is not None
        self._keys[run_id] = cursor.lastrowid
        self._seq[run_id] = 0
        self._append(db, run_id, step)

    def _end(self, db: sqlite3.Connection, run_id: str, step: Step) -> None:
        self._append(db, run_id, step)
        db.execute(
            "UPDATE runs SET status = ?, summary = ?, updated_at = ? WHERE id = ?",
            (step.status, step.summary, time.time(), self._keys[run_id]),
        )

    def record_run(
        self, run_id: str, *, header: str, messages: Sequence[str], resumed: bool
    ) -> int:
        """See :meth:`Journal.record_run`."""
        if not resumed:
            self._write(
                run_id,
                lambda db: self._start(db, run_id, Step("run_started", header, messages=messages)),
            )
            return len(messages)

        def resume(db: sqlite3.Connection) -> int:
            self._seq.pop(run_id, None)  # another process may have written since
            key = self._key(db, run_id)
            db.execute(
                "UPDATE runs SET status = 'running', updated_at = ?, summary = NULL, "
                "resumes = resumes + 1 WHERE id = ?",
                (time.time(), key),
            )
            self._append(db, run_id, Step("run_resumed", header))
            base = key << SEQ_BITS
            row = db.execute(
                "SELECT count(*) FROM messages WHERE key BETWEEN ? AND ?", (base, base + _LAST)
            ).fetchone()
            return int(row[0])

        return self._write(run_id, resume)

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
        row = self._run_row(self.QUERIES.run, run_id)
        base = row[0] << SEQ_BITS
        key: tuple[Any, ...] = (run_id,) if self._by_text else (base, base + _LAST)
        events = self._read(_EVENTS[self._by_text], key)
        messages = [text for (text,) in self._read(_MESSAGES[self._by_text], key)]
        return log_from_rows(row[1:], events, messages, self.load_blob)

    def _search(self, search: str) -> tuple[str, list[Any]]:
        if self._read(_ID_PREFIX + " LIMIT 1", (search, search + _TOP)):
            # The run id index, a range.
            return "run_id >= ? AND run_id < ?", [search, search + _TOP]
        like = escape_like(search)
        return "json_extract(header, '$.model') LIKE ? ESCAPE '\\'", ["%" + like + "%"]

    def events_after(self, run_id: str, seq: int, *, limit: int = 500) -> list[JournalEvent]:
        """The run's events numbered after ``seq``, in order (at most ``limit``):
        what a reader following a run in progress has not seen yet.

        Raises:
            JournalError: no such run, or the journal cannot be read.
        """
        (key,) = self._run_row(self.QUERIES.exists, run_id)
        if self._by_text:
            query = _EVENTS[True].replace("ORDER BY", "AND seq > ? ORDER BY") + " LIMIT ?"
            bounds: tuple[Any, ...] = (run_id, seq, limit)
        else:
            base = key << SEQ_BITS
            query = _EVENTS[False] + " LIMIT ?"
            bounds = (base + max(seq, 0) + 1, base + _LAST, limit)
        return events_from_rows(run_id, self._read(query, bounds))

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()
