"""What the SQLite and PostgreSQL journals share: how a write applies records,
the counters a writer keeps per run, and the reads of summaries and run ids.

Theory of operation: a store (:class:`~toolwire.journal.SQLiteJournal`,
:class:`~toolwire.journal.PostgresJournal`) gives its transaction
(``_write``), the three statements a record is made of (``_start``,
``_append``, ``_end``), a read (``_read``) and its queries in its own SQL
(:class:`StoreQueries`). :class:`RunStore` turns those into the
:class:`~toolwire.journal.Journal` protocol's writes and the reads every
store answers the same way; rows become records in one place
(:mod:`toolwire.journal._records`).
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from toolwire.journal._blobs import MAX_BLOB_BYTES, Blob
from toolwire.journal._errors import BlobTooLarge
from toolwire.journal._records import JournalError, RunSummary, Step, end_step, summary_from_row

__all__ = ["RunStore", "StoreQueries", "escape_like"]

DB = TypeVar("DB")
T = TypeVar("T")


_SUMMARY = "run_id, started_at, updated_at, status, header, summary, resumes"
"""The columns of a run's summary (:func:`~toolwire.journal._records.summary_from_row`)."""
# The queries of the runs, once; a store fills in its names (never values:
# those are parameters).
_EXISTS = "SELECT {key} FROM {table} WHERE run_id = {mark}"
_LAST = "SELECT run_id FROM {table} ORDER BY {key} DESC LIMIT 1"
_PREFIX = "SELECT run_id FROM {table} WHERE run_id LIKE {mark}{escape} LIMIT 2"
_RUNS = "SELECT {summary} FROM {table} ORDER BY {key} DESC LIMIT {mark}"
_RUN = "SELECT {key}, {summary} FROM {table} WHERE run_id = {mark}"
_PAGE = "SELECT {key}, {summary} FROM {table}"
_PUT_BLOB = (
    "INSERT INTO {blobs} (sha256, media_type, size, body) VALUES ({mark}, {mark}, {mark}, {mark}) "
    "ON CONFLICT (sha256) DO NOTHING"
)
_BLOB = "SELECT body FROM {blobs} WHERE sha256 = {mark}"


class StoreQueries:
    """A store's queries of its runs: the stores' SQL differs only in the
    runs table's name, its integer key (a run's position: newer runs have
    larger keys), the placeholder, and how ``LIKE`` is told that a backslash
    escapes (SQLite needs ``ESCAPE '\\'``; it is PostgreSQL's default)."""

    __slots__ = (
        "blob",
        "exists",
        "key",
        "last",
        "mark",
        "page",
        "prefix",
        "put_blob",
        "run",
        "runs",
    )

    def __init__(self, table: str, key: str, mark: str, *, blobs: str, escape: str = "") -> None:
        names = {
            "table": table,
            "key": key,
            "mark": mark,
            "escape": escape,
            "summary": _SUMMARY,
            "blobs": blobs,
        }
        self.key = key
        self.mark = mark
        self.exists = _EXISTS.format_map(names)
        """The run's key, if the run (its id) is in the journal."""
        self.last = _LAST.format_map(names)
        """The newest run's id."""
        self.prefix = _PREFIX.format_map(names)
        """At most two run ids that match a ``LIKE`` pattern (escaped by ``\\``)."""
        self.runs = _RUNS.format_map(names)
        """The summary rows of the newest runs (a limit)."""
        self.run = _RUN.format_map(names)
        """The run's key and summary row."""
        self.page = _PAGE.format_map(names)
        """The runs' keys and summary rows, to which a page adds its conditions."""
        self.put_blob = _PUT_BLOB.format_map(names)
        """Store a part's bytes, unless they are stored already."""
        self.blob = _BLOB.format_map(names)
        """A part's bytes, by sha256."""


def escape_like(text: str) -> str:
    """``text`` matched literally by ``LIKE ... ESCAPE '\\'``."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class RunStore(ABC, Generic[DB]):
    """The writes and reads both journals implement alike (see the module)."""

    QUERIES: ClassVar[StoreQueries]
    _seq: dict[str, int]
    """The last ``seq`` of each run this object writes (it is the run's only
    writer: the lease says so)."""
    _keys: dict[str, int]
    """The integer key of each run this object writes."""
    max_blob_bytes: int = MAX_BLOB_BYTES
    """The largest content part this journal stores (see :mod:`toolwire.journal._blobs`)."""

    @property
    @abstractmethod
    def _name(self) -> str:
        """The journal, as messages name it (never a password)."""

    @abstractmethod
    def _write(self, run_id: str, work: Callable[[DB], T]) -> T:
        """Run ``work`` in one transaction, committed when it returns."""

    @abstractmethod
    def _read(self, query: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """The rows of a query (none when the journal has no tables yet)."""

    @abstractmethod
    def _start(self, db: DB, run_id: str, step: Step) -> None:
        """Insert a new run's row and its ``run_started`` record."""

    @abstractmethod
    def _append(self, db: DB, run_id: str, step: Step) -> int:
        """Insert one event (and the messages it first carries); its ``seq``."""

    @abstractmethod
    def _end(self, db: DB, run_id: str, step: Step) -> None:
        """Insert the run's last record and set its status and summary."""

    def _apply(self, db: DB, run_id: str, step: Step) -> int:
        for blob in step.blobs:
            self._execute(
                db, self.QUERIES.put_blob, (blob.sha256, blob.media_type, blob.size, blob.body)
            )
        if step.kind == "run_started":
            self._start(db, run_id, step)
            return 1
        if step.status is not None:
            self._end(db, run_id, step)
            return 0
        return self._append(db, run_id, step)

    def _execute(self, db: DB, query: str, args: tuple[Any, ...]) -> None:
        """Run one statement in a write transaction (both drivers' connections
        take ``execute``)."""
        db.execute(query, args)  # type: ignore[attr-defined]

    def _check_blob(self, blob: Blob) -> None:
        """Raises:
        BlobTooLarge: ``blob`` is past :attr:`max_blob_bytes`."""
        if blob.size > self.max_blob_bytes:
            raise BlobTooLarge(
                f"a {blob.media_type} part of {blob.size:,} bytes is larger than the journal's "
                f"blob cap ({self.max_blob_bytes:,} bytes, max_blob_bytes=): not recorded",
                size=blob.size,
                maximum=self.max_blob_bytes,
                media_type=blob.media_type,
                sha256=blob.sha256,
            )

    def load_blob(self, sha256: str) -> bytes:
        """The bytes of a content part the journal's records refer to.

        Raises:
            JournalError: no such blob, or its bytes are not the ones stored.
        """
        rows = self._read(self.QUERIES.blob, (sha256,))
        if not rows:
            raise JournalError(f"the journal {self._name} holds no blob sha256:{sha256[:16]}")
        body = bytes(rows[0][0])
        if hashlib.sha256(body).hexdigest() != sha256:
            raise JournalError(f"the journal's blob sha256:{sha256[:16]} does not match its bytes")
        return body

    def _forget(self, run_id: str) -> None:
        """The run is over for this object, or a write failed: forget its counters."""
        self._seq.pop(run_id, None)
        self._keys.pop(run_id, None)

    def record_steps(self, run_id: str, steps: Sequence[Step]) -> None:
        """Write several records of one run in one transaction (durable, all of
        them or none, when this returns): a run's start, events, its end.

        Raises:
            JournalError: a new run's id is taken, the run is unknown, or the
                journal cannot be written.
            LeaseLost: (PostgreSQL) this worker's lease of the run was taken over.
        """

        for step in steps:
            for blob in step.blobs:
                self._check_blob(blob)

        def work(db: DB) -> None:
            for step in steps:
                self._apply(db, run_id, step)

        self._write(run_id, work)
        if steps and steps[-1].status is not None:
            self._forget(run_id)

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
        step = Step(kind, data, turn, attempt, call_id, messages, first_position)
        return self._write(run_id, lambda db: self._append(db, run_id, step))

    def record_end(self, run_id: str, *, status: str, summary: str, data: str) -> None:
        """See :meth:`Journal.record_end`."""
        step = end_step(status, summary, data)
        self._write(run_id, lambda db: self._end(db, run_id, step))
        self._forget(run_id)

    @abstractmethod
    def _search(self, search: str) -> tuple[str, list[Any]]:
        """The condition (and its arguments) of :meth:`page_runs`' ``search``:
        the runs whose id starts with it, or, when none does, whose model
        holds it."""

    def _run_row(self, query: str, run_id: str) -> tuple[Any, ...]:
        """The first row ``query`` (:attr:`StoreQueries.exists` or
        :attr:`StoreQueries.run`) gives of the run.

        Raises:
            JournalError: no such run.
        """
        rows = self._read(query, (run_id,))
        if not rows:
            raise JournalError(f"no run {run_id!r} in the journal {self._name}")
        return rows[0]

    def list_runs(self, *, limit: int = 50) -> list[RunSummary]:
        """See :meth:`Journal.list_runs`."""
        rows = self._read(self.QUERIES.runs, (max(limit, 0),))
        return [summary_from_row(row) for row in rows]

    def find_run(self, ref: str) -> str:
        """See :meth:`Journal.find_run`."""
        if self._read(self.QUERIES.exists, (ref,)):
            return ref
        if ref == "last":
            rows = self._read(self.QUERIES.last, ())
            if not rows:
                raise JournalError(f"the journal {self._name} holds no run")
            return str(rows[0][0])
        if ref:
            rows = self._read(self.QUERIES.prefix, (escape_like(ref) + "%",))
            if len(rows) == 1:
                return str(rows[0][0])
            if len(rows) > 1:
                raise JournalError(f"several runs start with {ref!r}; give more of the id")
        raise JournalError(f"no run {ref!r} in the journal {self._name}")

    def page_runs(
        self,
        *,
        before: int | None = None,
        status: str | None = None,
        search: str | None = None,
        limit: int = 50,
    ) -> list[tuple[int, RunSummary]]:
        """One page of runs, newest first, each with its position (a keyset
        cursor: pass the last one as ``before`` for the next page).

        Args:
            before: only runs older than this position.
            status: only runs of this status.
            search: only the runs whose id starts with it, or, when none
                does, the runs whose model holds it.
            limit: the most runs.
        """
        queries = self.QUERIES
        where: list[str] = []
        args: list[Any] = []
        if before is not None:
            where.append(f"{queries.key} < {queries.mark}")
            args.append(before)
        if status:
            where.append(f"status = {queries.mark}")
            args.append(status)
        if search:
            condition, values = self._search(search)
            where.append(condition)
            args += values
        # Fixed fragments: the values are parameters.
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        query = f"{queries.page}{clause} ORDER BY {queries.key} DESC LIMIT {queries.mark}"
        rows = self._read(query, (*args, max(limit, 0)))
        return [(int(row[0]), summary_from_row(row[1:])) for row in rows]
