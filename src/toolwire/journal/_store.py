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

One connection serves the whole process, behind a lock, so many runs of one
process (concurrent asyncio tasks, or threads) write safely; other processes
may write to the same file, SQLite's locks serialize them (``busy_timeout``).
Each run has one writer at a time, which is what makes the per-run ``seq``
counter kept in memory correct.

Payloads cross the :class:`Journal` protocol as JSON *text*: the observer
that builds them also redacts secrets from them, and any other store would
serialize them anyway.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from toolwire.errors import ToolwireError

__all__ = [
    "Journal",
    "JournalError",
    "JournalEvent",
    "RunLog",
    "RunSummary",
    "SQLiteJournal",
]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    started_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    status TEXT NOT NULL,
    header TEXT NOT NULL,
    summary TEXT,
    resumes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started_at);
CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at REAL NOT NULL,
    kind TEXT NOT NULL,
    turn INTEGER,
    attempt INTEGER,
    call_id TEXT,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS messages (
    run_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
) WITHOUT ROWID;
"""

RUN_STATUSES = ("running", "answered", "max_turns", "failed", "cancelled")
"""``running`` (or interrupted: a crashed run stays ``running``), the two
outcomes of a finished run, and the two ways a run ends without one."""


class JournalError(ToolwireError):
    """The journal cannot be read or written (unknown run, unreadable file,
    a record that is not what toolwire wrote)."""

    type_name = "journal_error"


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSummary:
    """One run as ``toolwire runs list`` shows it."""

    run_id: str
    started_at: float
    """Unix time of the first start."""
    updated_at: float
    """Unix time of the last write to the run's row (start, resume, end)."""
    status: str
    """See :data:`RUN_STATUSES`."""
    model: str = ""
    provider: str = ""
    api: str = ""
    tools: tuple[str, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict[str, Any])
    """The recorded settings (never a key)."""
    resumes: int = 0
    """How many times the run was resumed."""
    turns: int | None = None
    """Model turns, once the run has ended."""
    tool_calls: int | None = None
    """Tool calls answered, once the run has ended."""
    usage: dict[str, Any] | None = None
    """Token usage summed over the turns, once the run has ended."""
    output: str | None = None
    """The final answer of an answered run."""
    error: dict[str, Any] | None = None
    """``{"type", "message"}`` of a failed run."""

    @property
    def finished(self) -> bool:
        """True when the run ended with an outcome (answered or turn limit)."""
        return self.status in ("answered", "max_turns")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "run_id": self.run_id,
            "started_at": self.started_at,
            "updated_at": self.updated_at,
            "status": self.status,
            "model": self.model,
            "provider": self.provider,
            "api": self.api,
            "tools": list(self.tools),
            "settings": self.settings,
            "resumes": self.resumes,
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "usage": self.usage,
            "output": self.output,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class JournalEvent:
    """One recorded step of a run."""

    seq: int
    """1, 2, 3... within the run, in the order the steps happened."""
    at: float
    """Unix time of the write."""
    kind: str
    turn: int | None = None
    attempt: int | None = None
    call_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict[str, Any])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "seq": self.seq,
            "at": self.at,
            "kind": self.kind,
            "turn": self.turn,
            "attempt": self.attempt,
            "call_id": self.call_id,
            "data": self.data,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RunLog:
    """Everything recorded about one run."""

    run: RunSummary
    events: tuple[JournalEvent, ...]
    """In ``seq`` order."""
    messages: tuple[dict[str, Any], ...]
    """The conversation as of the last model request, as ``Message.to_dict()``."""

    def problems(self) -> list[str]:
        """What is inconsistent in the log (empty for a sound one).

        Checked: ``seq`` numbers 1..n without gaps; a run start first; every
        response or failure after a request of the same turn; every tool
        outcome after an intent for the same call; nothing after the run's
        end but a resume; a finished status has its end event.
        """
        found: list[str] = []
        requested: set[tuple[int | None, int | None]] = set()
        intents: set[tuple[int | None, str | None]] = set()
        ended = False
        for number, event in enumerate(self.events, start=1):
            where = f"event {event.seq} ({event.kind})"
            if event.seq != number:
                found.append(f"{where}: expected seq {number}")
            if number == 1 and event.kind != "run_started":
                found.append(f"{where}: a run must start with run_started")
            if ended and event.kind != "run_resumed":
                found.append(f"{where}: recorded after the run ended")
            ended = event.kind in ("run_finished", "run_failed")
            if event.kind == "model_request":
                requested.add((event.turn, event.attempt))
            elif event.kind in ("model_response", "model_failed"):
                if (event.turn, event.attempt) not in requested:
                    found.append(f"{where}: no request for turn {event.turn}")
            elif event.kind == "tool_intent":
                intents.add((event.turn, event.call_id))
            elif event.kind == "tool_outcome" and (event.turn, event.call_id) not in intents:
                found.append(f"{where}: outcome of call {event.call_id} without an intent")
        if self.run.finished and not (self.events and self.events[-1].kind == "run_finished"):
            found.append(f"status {self.run.status!r} but the last event is not run_finished")
        if self.run.status == "failed" and not (
            self.events and self.events[-1].kind == "run_failed"
        ):
            found.append("status 'failed' but the last event is not run_failed")
        return found

    def records(self) -> Iterator[dict[str, Any]]:
        """The log as JSON-ready records, one per line of ``toolwire runs export``:
        the run, each message of the conversation, then each event."""
        yield {"type": "run", **self.run.to_dict()}
        for position, message in enumerate(self.messages):
            yield {"type": "message", "position": position, "message": message}
        for event in self.events:
            yield {"type": "event", **event.to_dict()}


@runtime_checkable
class Journal(Protocol):
    """A store of runs. :class:`SQLiteJournal` is the implementation toolwire
    ships; another store implements these methods.

    ``data``, ``header`` and message arguments are JSON text. Every write is
    durable when the method returns (the agent takes the next step after).
    """

    def record_run(
        self, run_id: str, *, header: str, messages: Sequence[str], resumed: bool
    ) -> int:
        """Record that a run starts (``run_started``) or resumes (``run_resumed``).

        Args:
            run_id: the run.
            header: JSON text of the run's model, provider, tools and settings.
            messages: JSON text of each message the run starts from (a new
                run); ignored for a resume.
            resumed: the run exists and continues.

        Returns:
            How many messages of the run are stored.

        Raises:
            JournalError: a new run's id is taken, or a resumed run is unknown.
        """
        ...

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
        """Append one step to a run, with the conversation messages it first
        carries (stored at ``first_position``, ``first_position + 1``...).

        Returns:
            The step's ``seq``.
        """
        ...

    def record_end(self, run_id: str, *, status: str, summary: str, data: str) -> None:
        """Record the end of a run: its status, its summary (JSON text with
        ``turns``, ``tool_calls``, ``usage``, ``output``, ``error``) and the
        ``run_finished``/``run_failed`` event with ``data``."""
        ...

    def load_run(self, run_id: str) -> RunLog:
        """Everything recorded about a run.

        Raises:
            JournalError: no such run.
        """
        ...

    def list_runs(self, *, limit: int = 50) -> list[RunSummary]:
        """The latest runs, newest first."""
        ...

    def find_run(self, ref: str) -> str:
        """The id of the run ``ref`` names: an id, a unique prefix of one, or
        ``last`` for the latest run.

        Raises:
            JournalError: no run, or several, match.
        """
        ...

    def close(self) -> None:
        """Release the store."""
        ...


def _loads(text: str | None, what: str) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise JournalError(f"the journal holds a {what} that is not JSON: {exc}") from exc


def _summary_from_row(row: tuple[Any, ...]) -> RunSummary:
    run_id, started_at, updated_at, status, header_text, summary_text, resumes = row
    header = _loads(header_text, "run header")
    summary = _loads(summary_text, "run summary") or {}
    if not isinstance(header, dict) or not isinstance(summary, dict):
        raise JournalError(f"run {run_id}: its header or summary is not a JSON object")
    tools = header.get("tools", [])
    settings = header.get("settings", {})
    return RunSummary(
        run_id=run_id,
        started_at=started_at,
        updated_at=updated_at,
        status=status,
        model=str(header.get("model", "")),
        provider=str(header.get("provider", "")),
        api=str(header.get("api", "")),
        tools=tuple(str(t) for t in tools) if isinstance(tools, list) else (),
        settings=settings if isinstance(settings, dict) else {},
        resumes=resumes,
        turns=summary.get("turns"),
        tool_calls=summary.get("tool_calls"),
        usage=summary.get("usage"),
        output=summary.get("output"),
        error=summary.get("error"),
    )


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


class SQLiteJournal:
    """The journal in a SQLite file (or in memory, for tests).

    Args:
        path: the database file, created with its directory if missing;
            ``":memory:"`` keeps everything in memory.
        timeout: seconds to wait for another process's write lock.

    Raises:
        JournalError: the file cannot be opened, or was written by a newer
            toolwire.
    """

    def __init__(self, path: str | os.PathLike[str] = ":memory:", *, timeout: float = 30.0) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        self._seq: dict[str, int] = {}
        memory = self.path == ":memory:"
        self._db: sqlite3.Connection | None = None
        # Several processes opening a new file at once (a batch of workers)
        # can get SQLITE_BUSY without SQLite's busy handler being called:
        # switching a fresh file to WAL, or a lock upgrade that would
        # deadlock. Those are transient: try again, within the timeout.
        deadline = time.monotonic() + timeout
        delay = 0.005
        while True:
            try:
                if not memory:
                    Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                self._db = self._connect(timeout, memory=memory)
                return
            except sqlite3.OperationalError as exc:
                self.close()
                if not _is_busy(exc) or time.monotonic() + delay > deadline:
                    raise JournalError(f"cannot open the journal {self.path}: {exc}") from exc
                time.sleep(delay)
                delay = min(delay * 2, 0.2)
            except (sqlite3.Error, OSError) as exc:
                self.close()
                raise JournalError(f"cannot open the journal {self.path}: {exc}") from exc
            except JournalError:
                self.close()
                raise

    def _connect(self, timeout: float, *, memory: bool) -> sqlite3.Connection:
        # Autocommit mode: transactions are opened explicitly, one per write.
        db = sqlite3.connect(
            self.path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        self._db = db  # so that close() releases it if what follows fails
        if not memory:
            db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise JournalError(
                f"the journal {self.path} was written by a newer toolwire "
                f"(schema {version}, this one reads {SCHEMA_VERSION})"
            )
        db.executescript(_SCHEMA)
        if version < SCHEMA_VERSION:
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        return db

    @classmethod
    def memory(cls) -> SQLiteJournal:
        """A journal that lives in memory (for tests)."""
        return cls(":memory:")

    def __repr__(self) -> str:
        return f"SQLiteJournal({self.path!r})"

    # -- writing ---------------------------------------------------------------

    def _write(self, work: Any) -> Any:
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
                raise JournalError(f"cannot write to the journal {self.path}: {exc}") from exc
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
        with self._lock:
            db = self._db
            if db is None:
                raise JournalError("the journal is closed")
            try:
                rows: list[tuple[Any, ...]] = db.execute(query, args).fetchall()
            except sqlite3.Error as exc:
                raise JournalError(f"cannot read the journal {self.path}: {exc}") from exc
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
        run = _summary_from_row(rows[0])
        events: list[JournalEvent] = []
        for seq, at, kind, turn, attempt, call_id, data in self._read(
            "SELECT seq, at, kind, turn, attempt, call_id, data FROM events "
            "WHERE run_id = ? ORDER BY seq",
            (run_id,),
        ):
            payload = _loads(data, f"{kind} record")
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
            message = _loads(text, "message")
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
        return [_summary_from_row(row) for row in rows]

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
