"""The journal in PostgreSQL: one journal shared by workers on many machines.

Theory of operation
-------------------
:class:`PostgresJournal` keeps the records :class:`~toolwire.journal.SQLiteJournal`
keeps, in the same shape (a ``toolwire_runs`` row per run, its steps in
``toolwire_events`` numbered ``seq`` 1, 2, 3..., the conversation in
``toolwire_messages``, one row per position, written once), with the same
payloads: JSON text built and redacted by
:class:`~toolwire.journal.JournalObserver`, decoded by the same functions
(:func:`~toolwire.journal._records.log_from_rows`). What both journals do
alike (applying records, finding and listing runs) is theirs in common
(:class:`~toolwire.journal._base.RunStore`).

Each write is one transaction, committed before the agent takes the step it
records; :meth:`PostgresJournal.record_steps` commits several records of a
run at once, as SQLite's does. Each transaction first checks the run's lease
(:mod:`toolwire.journal._fencing`): a worker whose lease was taken over
cannot write.

The schema is versioned in ``toolwire_schema``: opening a journal for writing
applies the migrations it lacks, under a transaction-scoped advisory lock so
that workers starting together migrate once; a database written by a newer
toolwire is refused. Opening read-only changes nothing.

One connection serves a journal object, behind a lock (several runs of one
process write through it); its waits for locks and statements are bounded by
``timeout``. A worker frozen inside a write transaction (``SIGSTOP``, a long
pause) would hold that transaction's locks, the share lock of its run's lease
row among them, for as long as it stays frozen, and block every takeover of
the run: the server ends a transaction left idle longer than the lease's life
(``idle_in_transaction_session_timeout``: the lease's life, at least
:data:`MIN_IDLE` seconds, at most ``timeout``), so the frozen worker's locks
are gone by the time its lease expires (or soon after, for a lease shorter
than :data:`MIN_IDLE`), and a takeover that still meets a lock waits at most
``timeout`` and gets :class:`~toolwire.journal.RunLeased`. The connection URL may hold a password:
the journal shows only its host and database.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from toolwire.http.urls import url_secrets
from toolwire.http.urls import url_where as where
from toolwire.journal._base import RunStore, StoreQueries, escape_like
from toolwire.journal._blobs import MAX_BLOB_BYTES
from toolwire.journal._fencing import Renewer, acquire, check_fence, release
from toolwire.journal._records import (
    JournalError,
    JournalEvent,
    RunLog,
    Step,
    column_text,
    events_from_rows,
    log_from_rows,
)

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "MIN_IDLE",
    "SCHEMA_VERSION",
    "PostgresJournal",
    "connect",
    "is_postgres_url",
    "migrate",
    "url_scrubbed",
    "url_where",
]

T = TypeVar("T")

_MIGRATIONS: tuple[str, ...] = (
    # 1: runs, their events and messages, and the leases of runs.
    "CREATE TABLE toolwire_runs (id bigserial PRIMARY KEY, run_id text NOT NULL UNIQUE, "
    "started_at double precision NOT NULL, updated_at double precision NOT NULL, "
    "status text NOT NULL, header text NOT NULL, summary text, "
    "resumes integer NOT NULL DEFAULT 0);"
    "CREATE TABLE toolwire_events (run bigint NOT NULL REFERENCES toolwire_runs (id), "
    "seq integer NOT NULL, at double precision NOT NULL, kind text NOT NULL, turn integer, "
    "attempt integer, call_id text, data text NOT NULL, PRIMARY KEY (run, seq));"
    "CREATE TABLE toolwire_messages (run bigint NOT NULL REFERENCES toolwire_runs (id), "
    "position integer NOT NULL, data text NOT NULL, PRIMARY KEY (run, position));"
    "CREATE TABLE toolwire_leases (run_id text PRIMARY KEY, token bigint NOT NULL, "
    "owner text NOT NULL, expires_at timestamptz NOT NULL);"
    "CREATE SEQUENCE toolwire_lease_tokens;",
    # 2: the rate limits' budgets (toolwire.journal._rates): the requests of
    # the last minute per provider host and model, and the holds of 429s.
    "CREATE TABLE toolwire_rate_requests (host text NOT NULL, model text NOT NULL, "
    "at double precision NOT NULL, tokens integer NOT NULL);"
    "CREATE INDEX toolwire_rate_requests_key ON toolwire_rate_requests (host, model, at);"
    "CREATE TABLE toolwire_rate_blocks (host text NOT NULL, model text NOT NULL, "
    "until double precision NOT NULL, PRIMARY KEY (host, model));",
    # 3: the content parts' bytes, once each, by sha256 (toolwire.journal._blobs).
    "CREATE TABLE toolwire_blobs (sha256 text PRIMARY KEY, media_type text NOT NULL, "
    "size bigint NOT NULL, body bytea NOT NULL);",
)
SCHEMA_VERSION = len(_MIGRATIONS)
"""The schema this toolwire writes (migration ``n`` brings a database to ``n``)."""
_MIGRATION_LOCK = 0x746F6F6C77697265  # "toolwire": the advisory lock of migrations
MIN_IDLE = 2.0
"""Seconds a write transaction may idle before the server ends it, at least
(whatever the lease's life): a process a busy machine leaves unscheduled
that long is not taken for a frozen one."""


def is_postgres_url(value: object) -> bool:
    """True for a ``postgresql://`` (or ``postgres://``) connection URL, the
    scheme in any case (RFC 3986 section 3.1)."""
    return isinstance(value, str) and value[:13].lower().startswith(
        ("postgresql://", "postgres://")
    )


class PostgresJournal(RunStore["psycopg.Connection[Any]"]):
    """The journal in a PostgreSQL database (``pip install 'toolwire[postgres]'``).

    Args:
        url: a ``postgresql://`` connection URL.
        lease_ttl: seconds a lease lives unless renewed (renewed every third
            of that while held); a worker that stops longer loses its runs.
        timeout: seconds to wait to connect, for a lock, or for a statement.
        read_only: read without changing anything (no migration either).
        max_blob_bytes: the largest content part it stores (see
            :class:`~toolwire.journal.SQLiteJournal`).

    Raises:
        JournalError: psycopg is missing, the database cannot be reached, or
            it was written by a newer toolwire.
    """

    QUERIES = StoreQueries("toolwire_runs", "id", "%s", blobs="toolwire_blobs")

    def __init__(
        self,
        url: str,
        *,
        lease_ttl: float = 30.0,
        timeout: float = 30.0,
        read_only: bool = False,
        max_blob_bytes: int = MAX_BLOB_BYTES,
    ) -> None:
        try:
            import psycopg
        except ImportError:
            raise JournalError(
                "a postgresql:// journal needs psycopg: pip install 'toolwire[postgres]'"
            ) from None
        if lease_ttl <= 0 or timeout <= 0:
            raise JournalError("lease_ttl and timeout must be positive")
        self._psycopg = psycopg
        self._url = url
        self.where = url_where(url)
        self.read_only = read_only
        self.max_blob_bytes = max_blob_bytes
        self.lease_ttl = lease_ttl
        self.timeout = timeout
        self.owner = f"{socket.gethostname()}:{os.getpid()}"
        self._lock = threading.Lock()
        self._seq: dict[str, int] = {}
        self._keys: dict[str, int] = {}
        self._tokens: dict[str, int] = {}
        """The fencing token of each run this object holds the lease of."""
        self._db: psycopg.Connection[Any] | None = self._connect()
        try:
            self._tables = self._exists() if read_only else self._migrate()
        except BaseException:
            self.close()  # the connection, opened: never left to the collector
            raise
        self._renewer = Renewer(self._connect, lease_ttl)

    @property
    def _name(self) -> str:
        return self.where

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"PostgresJournal({self.where!r}{mode})"

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            idle = min(max(self.lease_ttl, MIN_IDLE), self.timeout)
            return connect(self._url, self.timeout, idle=idle)
        except self._psycopg.Error as exc:
            raise self._error(exc) from None

    def _error(self, exc: Exception, *, writing: bool = False) -> JournalError:
        doing = "write" if writing else "read"
        # libpq quotes the part of a URL it cannot parse: the password, maybe.
        said = url_scrubbed(self._url, str(exc))
        return JournalError(f"cannot {doing} the journal {self.where}: {said}".strip())

    def _exists(self) -> bool:
        row = self._query("SELECT to_regclass('toolwire_runs') IS NOT NULL", ())
        return bool(row[0][0])

    def _migrate(self) -> bool:
        """Bring the tables to this toolwire's schema; they are there."""
        try:
            migrate(self._live(), self.where)
        except self._psycopg.Error as exc:
            raise self._error(exc, writing=True) from None
        return True

    # -- leases ----------------------------------------------------------------

    def lease(self, run_id: str) -> AbstractContextManager[None]:
        """See :meth:`Journal.lease`: a lease row with an expiry and a fencing
        token (see :mod:`toolwire.journal._fencing`), renewed while held."""
        return self._hold(run_id)

    @contextmanager
    def _hold(self, run_id: str) -> Iterator[None]:
        with self._lock:
            db = self._live()
            try:
                token = acquire(db, run_id, self.owner, self.lease_ttl)
            except self._psycopg.Error as exc:
                raise self._error(exc, writing=True) from None
            self._tokens[run_id] = token
        self._renewer.add(run_id, token)
        try:
            yield
        finally:
            self._renewer.discard(run_id)
            with self._lock:
                if self._tokens.get(run_id) == token:
                    del self._tokens[run_id]
                if self._db is not None:
                    try:
                        release(self._db, run_id, token)
                    except self._psycopg.Error:
                        pass  # the lease expires by itself

    def token(self, run_id: str) -> int | None:
        """The fencing token of the run's lease this journal holds, if any."""
        return self._tokens.get(run_id)

    # -- writing ---------------------------------------------------------------

    def _live(self) -> psycopg.Connection[Any]:
        if self._db is None:
            raise JournalError("the journal is closed")
        return self._db

    def _write(self, run_id: str, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        """Run ``work`` in one transaction, after the lease check, committed
        when it returns; nothing of it lands if it raises."""
        if self.read_only:
            raise JournalError(f"the journal {self.where} is open read-only")
        with self._lock:
            db = self._live()
            try:
                with db.transaction():
                    check_fence(db, run_id, self._tokens.get(run_id))
                    return work(db)
            except BaseException as exc:
                self._forget(run_id)  # what the transaction counted is undone
                if isinstance(exc, self._psycopg.Error):
                    raise self._error(exc, writing=True) from None
                raise

    def _key(self, db: psycopg.Connection[Any], run_id: str) -> int:
        key = self._keys.get(run_id)
        if key is None:
            row = db.execute("SELECT id FROM toolwire_runs WHERE run_id = %s", (run_id,)).fetchone()
            if row is None:
                raise JournalError(f"no run {run_id!r} in the journal {self.where}")
            key = self._keys[run_id] = int(row[0])
        return key

    def _append(self, db: psycopg.Connection[Any], run_id: str, step: Step) -> int:
        key = self._key(db, run_id)
        seq = self._seq.get(run_id)
        if seq is None:  # the first write of this run by this object
            row = db.execute(
                "SELECT coalesce(max(seq), 0) FROM toolwire_events WHERE run = %s", (key,)
            ).fetchone()
            seq = int(row[0]) if row else 0
        seq += 1
        self._seq[run_id] = seq
        if step.messages:
            first = step.first_position
            with db.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO toolwire_messages VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                    [(key, first + i, text) for i, text in enumerate(step.messages)],
                )
        db.execute(
            "INSERT INTO toolwire_events VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (
                key,
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

    def _start(self, db: psycopg.Connection[Any], run_id: str, step: Step) -> None:
        now = time.time()
        row = db.execute(
            "INSERT INTO toolwire_runs (run_id, started_at, updated_at, status, header) "
            "VALUES (%s, %s, %s, 'running', %s) ON CONFLICT (run_id) DO NOTHING RETURNING id",
            (run_id, now, now, step.data),
        ).fetchone()
        if row is None:
            raise JournalError(
                f"the run id {run_id!r} is already in the journal; resume it, or "
                "start a new run with another id"
            )
        self._keys[run_id] = int(row[0])
        self._seq[run_id] = 0
        self._append(db, run_id, step)

    def _end(self, db: psycopg.Connection[Any], run_id: str, step: Step) -> None:
        self._append(db, run_id, step)
        db.execute(
            "UPDATE toolwire_runs SET status = %s, summary = %s, updated_at = %s WHERE id = %s",
            (step.status, step.summary, time.time(), self._keys[run_id]),
        )

    def record_run(
        self, run_id: str, *, header: str, messages: Sequence[str], resumed: bool
    ) -> int:
        """See :meth:`Journal.record_run`."""
        if not resumed:
            start = Step("run_started", header, messages=messages)
            self._write(run_id, lambda db: self._start(db, run_id, start))
            return len(messages)

        def resume(db: psycopg.Connection[Any]) -> int:
            self._forget(run_id)  # another worker may have written since
            key = self._key(db, run_id)
            db.execute(
                "UPDATE toolwire_runs SET status = 'running', updated_at = %s, summary = NULL, "
                "resumes = resumes + 1 WHERE id = %s",
                (time.time(), key),
            )
            self._append(db, run_id, Step("run_resumed", header))
            row = db.execute(
                "SELECT count(*) FROM toolwire_messages WHERE run = %s", (key,)
            ).fetchone()
            return int(row[0]) if row else 0

        return self._write(run_id, resume)

    # -- reading ---------------------------------------------------------------

    def _query(self, query: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        with self._lock:
            db = self._live()
            try:
                return list(db.execute(query, args).fetchall())
            except self._psycopg.Error as exc:
                raise self._error(exc) from None

    def _read(self, query: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        return self._query(query, args) if self._tables else []

    def load_run(self, run_id: str) -> RunLog:
        """See :meth:`Journal.load_run`."""
        row = self._run_row(self.QUERIES.run, run_id)
        key = (row[0],)
        events = self._read(
            "SELECT seq, at, kind, turn, attempt, call_id, data FROM toolwire_events "
            "WHERE run = %s ORDER BY seq",
            key,
        )
        messages = self._read(
            "SELECT data FROM toolwire_messages WHERE run = %s ORDER BY position", key
        )
        return log_from_rows(row[1:], events, [text for (text,) in messages], self.load_blob)

    def _search(self, search: str) -> tuple[str, list[Any]]:
        like = escape_like(search)
        if self._read("SELECT 1 FROM toolwire_runs WHERE run_id LIKE %s LIMIT 1", (like + "%",)):
            return "run_id LIKE %s", [like + "%"]
        return "(header::jsonb ->> 'model') ILIKE %s", ["%" + like + "%"]

    def events_after(self, run_id: str, seq: int, *, limit: int = 500) -> list[JournalEvent]:
        """See :meth:`SQLiteJournal.events_after`.

        Raises:
            JournalError: no such run, or the journal cannot be read.
        """
        (key,) = self._run_row(self.QUERIES.exists, run_id)
        events = self._read(
            "SELECT seq, at, kind, turn, attempt, call_id, data FROM toolwire_events "
            "WHERE run = %s AND seq > %s ORDER BY seq LIMIT %s",
            (key, seq, max(limit, 0)),
        )
        return events_from_rows(run_id, events)

    def close(self) -> None:
        """Stop renewing leases and close the connection (idempotent)."""
        renewer = getattr(self, "_renewer", None)
        if renewer is not None:
            renewer.close()
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()


def connect(
    url: str,
    timeout: float,
    setup: Callable[[psycopg.Connection[Any]], None] | None = None,
    *,
    idle: float | None = None,
) -> psycopg.Connection[Any]:
    """A connection to ``url`` whose connecting, locks and statements wait at
    most ``timeout`` seconds, after ``setup`` ran on it (a migration). If
    anything fails once it is open, it is closed before the error goes on.
    A transaction of it left idle longer than ``idle`` seconds (its process
    frozen) is ended by the server, its locks released (``timeout`` when not
    given).

    Raises:
        psycopg.Error: the database cannot be reached, or refused.
    """
    import psycopg

    scheme, sep, rest = url.partition("://")
    url = scheme.lower() + sep + rest  # libpq knows the scheme in lower case only
    db = psycopg.connect(url, autocommit=True, connect_timeout=max(1, round(timeout)))
    try:
        millis = str(round(timeout * 1000))
        db.execute("SELECT set_config('lock_timeout', %s, false)", (millis,))
        db.execute("SELECT set_config('statement_timeout', %s, false)", (millis,))
        idle_millis = str(max(1, round((timeout if idle is None else idle) * 1000)))
        db.execute(
            "SELECT set_config('idle_in_transaction_session_timeout', %s, false)", (idle_millis,)
        )
        if setup is not None:
            setup(db)
    except BaseException:
        db.close()
        raise
    return db


def migrate(db: psycopg.Connection[Any], where: str) -> None:
    """Bring the database's toolwire tables to :data:`SCHEMA_VERSION`.

    Raises:
        JournalError: the database was written by a newer toolwire.
        psycopg.Error: the database refused.
    """
    with db.transaction():
        db.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        db.execute(
            "CREATE TABLE IF NOT EXISTS toolwire_schema (version integer PRIMARY KEY, "
            "applied_at timestamptz NOT NULL DEFAULT now())"
        )
        row = db.execute("SELECT coalesce(max(version), 0) FROM toolwire_schema").fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise JournalError(
                f"the journal {where} is of schema {version}, written by a newer "
                f"toolwire (this one writes {SCHEMA_VERSION}); upgrade toolwire"
            )
        for number in range(version + 1, SCHEMA_VERSION + 1):
            db.execute(_MIGRATIONS[number - 1])
            db.execute("INSERT INTO toolwire_schema (version) VALUES (%s)", (number,))


def url_where(url: str) -> str:
    """The URL without its user, password or parameters: ``postgresql://host/db``."""
    return where(url)


def url_scrubbed(url: str, message: str) -> str:
    """``message`` without the password of ``url`` (in its user info or a
    ``password=`` parameter), as written or decoded: libpq's messages quote
    the part of a URL it cannot parse (``invalid percent-encoded token``).
    Every length counts here, the shortest password too."""
    for secret in sorted(url_secrets(url, bare_user=False), key=len, reverse=True):
        message = message.replace(secret, "***")
    return message
