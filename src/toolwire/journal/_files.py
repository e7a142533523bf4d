"""Opening a journal file: private from the first byte, read-only for readers,
and a clear error for a file that is not a journal.

Theory of operation: a journal holds whole conversations, tool arguments and
results, so nobody but its user may read it. The directories toolwire creates
on the way to it are made 0700 and the database file is created 0600 *before*
SQLite opens it (``O_CREAT | O_EXCL``); SQLite gives its ``-wal`` and ``-shm``
files the database file's mode, so they are never readable by others either,
not even for a moment, and nothing is ``chmod``-ed afterwards. An existing
file or directory keeps the mode its owner gave it.

Read-only opening (``mode=ro`` in SQLite's URI) never changes the file. When
no writer has the file open (no ``-wal`` file), it is also opened
``immutable``, so that reading creates no ``-wal`` or ``-shm`` file either.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path
from urllib.parse import quote

from toolwire.journal._records import JournalError

__all__ = ["SCHEMA_VERSION", "SEQ_BITS", "connect", "create_private", "keyed_by_text", "unreadable"]

SCHEMA_VERSION = 3
"""3: the ``blobs`` table (the content parts' bytes, once each, by sha256).
2: a run has an integer ``id``, and its events and messages are keyed by
it (1 keyed them by the run's text id; a file of schema 1 is upgraded when a
writer opens it, and read as it is by a reader). A writer brings an older
file up to date when it opens it; a reader reads it as it is."""

SEQ_BITS = 32
"""An event's ``key`` is its run's ``id`` shifted left by this many bits,
plus its ``seq`` (a message's: plus its position)."""

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL UNIQUE,
    started_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    status TEXT NOT NULL,
    header TEXT NOT NULL,
    summary TEXT,
    resumes INTEGER NOT NULL DEFAULT 0
)""",
    """CREATE TABLE IF NOT EXISTS events (
    key INTEGER PRIMARY KEY,
    run INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    turn INTEGER,
    attempt INTEGER,
    call_id TEXT,
    data TEXT NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS messages (
    key INTEGER PRIMARY KEY,
    run INTEGER NOT NULL,
    position INTEGER NOT NULL,
    data TEXT NOT NULL
)""",
    """CREATE TABLE IF NOT EXISTS blobs (
    sha256 TEXT PRIMARY KEY,
    media_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    body BLOB NOT NULL
) WITHOUT ROWID""",
)
"""Every table is SQLite's plain rowid tree, with an integer key that grows
as runs are written: ``runs.id`` in the order runs start; an event's
``key`` (see :data:`SEQ_BITS`) puts a run's events in one range of the
table, in order, with no second index to keep. A write appends to the end
of the tree (or near it, for concurrent runs), and a commit rewrites one
page per table it touches. ``run_id`` stays unique and indexed, for
lookups by id. ``blobs`` is keyed by the sha256 of its bytes
(:mod:`toolwire.journal._blobs`)."""

_UPGRADE_FROM_1 = (
    "ALTER TABLE runs RENAME TO runs_v1",
    "DROP INDEX IF EXISTS runs_by_start",
    _SCHEMA[0],
    "INSERT INTO runs (id, run_id, started_at, updated_at, status, header, summary, resumes) "
    "SELECT rowid, run_id, started_at, updated_at, status, header, summary, resumes "
    "FROM runs_v1 ORDER BY rowid",
    "ALTER TABLE events RENAME TO events_v1",
    _SCHEMA[1],
    "INSERT INTO events SELECT (runs.id << 32) + e.seq, runs.id, e.seq, e.at, e.kind, "
    "e.turn, e.attempt, e.call_id, e.data FROM events_v1 AS e JOIN runs USING (run_id)",
    "ALTER TABLE messages RENAME TO messages_v1",
    _SCHEMA[2],
    "INSERT INTO messages SELECT (runs.id << 32) + m.position, runs.id, m.position, "
    "m.data FROM messages_v1 AS m JOIN runs USING (run_id)",
    "DROP TABLE events_v1",
    "DROP TABLE messages_v1",
    "DROP TABLE runs_v1",
)
"""Schema 1 to 2, in one transaction (32: :data:`SEQ_BITS`): the same rows, events and messages
keyed by their run's ``id`` (its old rowid, so the order of runs is kept)."""


# SQLite's result codes (stable; the sqlite3 module names them from 3.11 on).
_SQLITE_BUSY = 5
_SQLITE_LOCKED = 6


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    """The database was locked by another connection (transient)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in (_SQLITE_BUSY, _SQLITE_LOCKED)
    text = str(exc).lower()
    return "locked" in text or "busy" in text


_OFF_HINT = (
    "set TOOLWIRE_JOURNAL to another file, or TOOLWIRE_JOURNAL=off (Agent(journal=False)) "
    "to run without a journal"
)


def unreadable(path: str, exc: BaseException, *, writing: bool = False) -> JournalError:
    """The error for a journal SQLite cannot use, with what to do about it."""
    text = str(exc)
    if isinstance(exc, sqlite3.DatabaseError) and (
        "not a database" in text or "malformed" in text or "corrupt" in text
    ):
        return JournalError(
            f"the journal {path} is not a toolwire journal, or it is corrupt ({text}): "
            f"move it aside, or {_OFF_HINT}"
        )
    verb = "write to" if writing else "read"
    return JournalError(f"cannot {verb} the journal {path}: {text}")


def create_private(path: str) -> None:
    """Create the missing directories of ``path`` (0700) and the file (0600).

    Raises:
        OSError: a directory or the file cannot be created.
    """
    target = Path(path)
    missing: list[Path] = []
    parent = target.parent
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:  # another process made it meanwhile
            pass
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    os.close(fd)


def connect(path: str, *, timeout: float, read_only: bool) -> sqlite3.Connection:
    """A connection to the journal at ``path`` (``":memory:"`` for none).

    Several processes opening a new file at once (a batch of workers) can get
    SQLITE_BUSY without SQLite's busy handler being called (switching a fresh
    file to WAL, or a lock upgrade that would deadlock): those are retried
    within ``timeout``.

    Raises:
        JournalError: the file cannot be opened, is not a journal, or was
            written by a newer toolwire.
    """
    if path != ":memory:":
        _regular(path)
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            if read_only:
                return _open_read_only(path, timeout)
            if path != ":memory:":
                create_private(path)
            return _open_writable(path, timeout)
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() + delay > deadline:
                raise _cannot_open(path, exc) from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
        except (sqlite3.Error, OSError) as exc:
            raise _cannot_open(path, exc) from exc


def _regular(path: str) -> None:
    """A journal is a regular file: SQLite would wait forever on a FIFO."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # missing (created next), or unreadable (SQLite says why)
    if not stat.S_ISREG(mode):
        raise JournalError(
            f"the journal {path} is not a regular file (a FIFO, a device or a directory); "
            f"{_OFF_HINT}"
        )


def _cannot_open(path: str, exc: BaseException) -> JournalError:
    error = unreadable(path, exc)
    if error.message.startswith("cannot read"):
        return JournalError(f"cannot open the journal {path}: {exc}; {_OFF_HINT}")
    return error


def _open_writable(path: str, timeout: float) -> sqlite3.Connection:
    # Autocommit mode: transactions are opened explicitly, one per write.
    db = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
    try:
        if path != ":memory:":
            db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        if _version(db, path) < SCHEMA_VERSION:
            _create_or_upgrade(db, path)
    except BaseException:
        db.close()
        raise
    return db


def _create_or_upgrade(db: sqlite3.Connection, path: str) -> None:
    """Create the tables of a new journal, or upgrade one of schema 1, in one
    transaction (the version is read again under the write lock: another
    process may have done it meanwhile)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if _version(db, path) < SCHEMA_VERSION:
            upgrade = _UPGRADE_FROM_1 if keyed_by_text(db) else ()
            for statement in (*upgrade, *_SCHEMA):
                db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def keyed_by_text(db: sqlite3.Connection) -> bool:
    """Whether the journal's events are keyed by the run's text id (schema 1)."""
    return any(row[1] == "run_id" for row in db.execute("PRAGMA table_info(events)"))


def _open_read_only(path: str, timeout: float) -> sqlite3.Connection:
    if not os.path.exists(path):
        raise JournalError(f"there is no journal at {path}")
    immutable = "" if os.path.exists(path + "-wal") else "&immutable=1"
    uri = f"file:{quote(os.path.abspath(path))}?mode=ro{immutable}"
    db = sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False)
    try:
        _version(db, path)
    except BaseException:
        db.close()
        raise
    return db


def _version(db: sqlite3.Connection, path: str) -> int:
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise JournalError(
            f"the journal {path} was written by a newer toolwire "
            f"(schema {version}, this one reads {SCHEMA_VERSION})"
        )
    return version
