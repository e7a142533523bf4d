"""What a journal holds, as values: runs, their steps, and their errors.

:class:`RunSummary` is one run as ``toolwire runs list`` shows it,
:class:`JournalEvent` one recorded step, :class:`RunLog` everything about one
run (with :meth:`RunLog.problems` to check it is consistent). A journal's
errors are :class:`JournalError`; :class:`RunLeased` is the one a second
process gets when it tries to run or resume a run that a live process holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from toolwire.journal._blobs import Blob
from toolwire.journal._errors import JournalError, LeaseLost, RunLeased
from toolwire.journal._kinds import Record, RunStarted, record_of
from toolwire.stream import jsonio

__all__ = [
    "MAY_HAVE_RUN",
    "RUN_STATUSES",
    "JournalError",
    "JournalEvent",
    "LeaseLost",
    "RunLeased",
    "RunLog",
    "RunSummary",
    "Step",
    "column_text",
    "end_step",
    "loads_record",
    "log_from_rows",
    "summary_from_row",
    "text_from_column",
]

RUN_STATUSES = ("running", "answered", "max_turns", "suspended", "failed", "cancelled", "limit")
"""``running`` (or interrupted: a crashed run stays ``running``, and ``runs
list`` shows it ``interrupted`` once no process holds its lease), the two
outcomes of a finished run, ``suspended`` (it waits for approvals or outside
results, and resumes), and the three ways a run ends without one (``limit``:
stopped by one of its usage limits; the error names it)."""


MAY_HAVE_RUN = "may have run: it started, its outcome was never recorded, and it was not repeated"
"""How ``runs show`` and the viewer state an interrupted call (an outcome
record with ``may_have_run``): its worker may have run it before it crashed,
or, fenced out by a takeover, may still run it; the run went on without
running it again."""


def _unstorable(text: str) -> bool:
    """Whether a text column cannot hold ``text`` as it is: a lone surrogate
    (no UTF-8 form, which SQLite and PostgreSQL store), a NUL (PostgreSQL's
    text refuses it), or a leading ``"`` (the mark of an escaped value)."""
    if text.startswith('"') or "\x00" in text:
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def column_text(text: str | None) -> str | None:
    """``text`` from a model (a call id) as a text column of either store
    holds it: as it is, or, when a column could not hold it, as a JSON string
    (ASCII, with a leading ``"``). :func:`text_from_column` gives it back, so
    a resume matches the call id the model sent, byte for byte."""
    if text is None or not _unstorable(text):
        return text
    return json.dumps(text, ensure_ascii=True)


def text_from_column(stored: str | None) -> str | None:
    """The text :func:`column_text` stored (an id written raw by an older
    toolwire, leading ``"`` and all, reads back as it is)."""
    if stored is None or not stored.startswith('"'):
        return stored
    try:
        value = json.loads(stored)
    except ValueError:
        return stored
    return value if isinstance(value, str) else stored


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
    dialect: str = ""
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
    cost: dict[str, Any] | None = None
    """What the run cost (``{"total", "input", "output"}`` in US dollars), once
    it has ended or suspended (so far, then); ``None`` when unknown (or
    recorded by an older toolwire)."""
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
            "dialect": self.dialect,
            "tools": list(self.tools),
            "settings": self.settings,
            "resumes": self.resumes,
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "usage": self.usage,
            "cost": self.cost,
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
    """The payload as stored (what ``toolwire runs export`` writes); code
    reads :attr:`record`'s fields instead."""
    record: Record = field(init=False, repr=False, compare=False)
    """The step as its typed record (:mod:`toolwire.journal._kinds`), read
    from ``kind`` and ``data``."""

    def __post_init__(self) -> None:
        """Raises:
        JournalError: a kind this toolwire does not know, or a newer version."""
        object.__setattr__(self, "record", record_of(self.kind, self.data))

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


class Step(NamedTuple):
    """One record of a run on its way to a journal: an event (``kind``,
    ``data`` and where it belongs), with the conversation messages it first
    carries; a run's start (``run_started``: ``data`` is the header,
    ``messages`` the conversation it starts from); or its end
    (``run_finished``/``run_failed``, see :func:`end_step`)."""

    kind: str
    data: str
    turn: int | None = None
    attempt: int | None = None
    call_id: str | None = None
    messages: Sequence[str] = ()
    first_position: int = 0
    status: str | None = None
    """A run's end: its final status (see :data:`RUN_STATUSES`)."""
    summary: str | None = None
    """A run's end: JSON text with ``turns``, ``tool_calls``, ``usage``,
    ``output`` and ``error``."""
    blobs: Sequence[Blob] = ()
    """The bytes of the content parts ``data`` and ``messages`` refer to
    (:mod:`toolwire.journal._blobs`), written in the same transaction."""


def end_step(status: str, summary: str, data: str) -> Step:
    """The record of a run's end with ``status``.

    Raises:
        JournalError: ``status`` is not a final status.
    """
    if status not in RUN_STATUSES or status == "running":
        raise JournalError(f"not a final run status: {status!r}")
    if status == "suspended":
        kind = "run_suspended"
    else:
        kind = "run_failed" if status in ("failed", "cancelled", "limit") else "run_finished"
    return Step(kind, data, status=status, summary=summary)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunLog:
    """Everything recorded about one run."""

    run: RunSummary
    events: tuple[JournalEvent, ...]
    """In ``seq`` order."""
    messages: tuple[dict[str, Any], ...]
    """The conversation as of the last model request, as ``Message.to_dict()``
    (its parts as references to the journal's blobs, see :meth:`read_blob`)."""
    blob_reader: Callable[[str], bytes] | None = field(default=None, repr=False, compare=False)
    """The journal's ``load_blob``, while it is open (``None``: a log read
    from elsewhere, or a store without blobs)."""

    def read_blob(self, sha256: str) -> bytes:
        """The bytes of a part the run's records refer to by ``sha256``.

        Raises:
            JournalError: the journal holds no such blob, or is closed.
        """
        if self.blob_reader is None:
            raise JournalError("this run's log was read without its journal's blobs")
        return self.blob_reader(sha256)

    def problems(self) -> list[str]:
        """What is inconsistent in the log (empty for a sound one).

        Checked: ``seq`` numbers 1..n without gaps; a run start first; every
        response or failure after a request of the same turn; every tool
        outcome after an intent for the same call; nothing after the run's
        end but a resume (or, after a suspension, the answers to it); a
        finished status has its end event.
        """
        found: list[str] = []
        requested: set[tuple[int | None, int | None]] = set()
        intents: set[tuple[int | None, str | None]] = set()
        ended = suspended = False
        for number, event in enumerate(self.events, start=1):
            where = f"event {event.seq} ({event.kind})"
            if event.seq != number:
                found.append(f"{where}: expected seq {number}")
            if number == 1 and event.kind != "run_started":
                found.append(f"{where}: a run must start with run_started")
            answer = suspended and event.kind in ("approval", "answer")
            if ended and not answer and event.kind != "run_resumed":
                found.append(f"{where}: recorded after the run ended")
            if not answer:
                ended = event.kind in ("run_finished", "run_failed", "run_suspended")
                suspended = event.kind == "run_suspended"
            if event.kind == "model_request":
                requested.add((event.turn, event.attempt))
            elif event.kind in (
                "model_response",
                "model_failed",
                "model_streaming",
                "model_attempt",
            ):
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


def loads_record(text: str | None, what: str) -> Any:
    if text is None:
        return None
    try:
        return jsonio.loads(text)
    except ValueError as exc:
        raise JournalError(f"the journal holds a {what} that is not JSON: {exc}") from exc


def summary_from_row(row: tuple[Any, ...]) -> RunSummary:
    run_id, started_at, updated_at, status, header_text, summary_text, resumes = row
    header = loads_record(header_text, "run header")
    summary = loads_record(summary_text, "run summary") or {}
    if not isinstance(header, dict) or not isinstance(summary, dict):
        raise JournalError(f"run {run_id}: its header or summary is not a JSON object")
    start = record_of("run_started", header)
    assert isinstance(start, RunStarted)
    return RunSummary(
        run_id=run_id,
        started_at=started_at,
        updated_at=updated_at,
        status=status,
        model=start.model,
        provider=start.provider,
        dialect=start.dialect,
        tools=start.tools,
        settings=start.settings,
        resumes=resumes,
        turns=summary.get("turns"),
        tool_calls=summary.get("tool_calls"),
        usage=summary.get("usage"),
        cost=summary.get("cost") if isinstance(summary.get("cost"), dict) else None,
        output=summary.get("output"),
        error=summary.get("error"),
    )


def events_from_rows(run_id: str, rows: Sequence[tuple[Any, ...]]) -> list[JournalEvent]:
    """Events from their rows (``seq, at, kind, turn, attempt, call_id, data``).

    Raises:
        JournalError: a record is not the JSON object toolwire wrote.
    """
    events: list[JournalEvent] = []
    for seq, at, kind, turn, attempt, call_id, data in rows:
        payload = loads_record(data, f"{kind} record")
        if not isinstance(payload, dict):
            raise JournalError(f"run {run_id}: event {seq} is not a JSON object")
        try:
            event = JournalEvent(
                seq=seq,
                at=at,
                kind=kind,
                turn=turn,
                attempt=attempt,
                call_id=text_from_column(call_id),
                data=payload,
            )
        except JournalError as exc:
            raise JournalError(f"run {run_id}: event {seq}: {exc.message}") from None
        events.append(event)
    return events


def log_from_rows(
    run_row: tuple[Any, ...],
    event_rows: Sequence[tuple[Any, ...]],
    message_texts: Sequence[str],
    blob_reader: Callable[[str], bytes] | None = None,
) -> RunLog:
    """A run's log from what a store read: its row as :func:`summary_from_row`
    takes it, its events as ``(seq, at, kind, turn, attempt, call_id, data)``
    in order, and its messages' JSON text in order.

    Raises:
        JournalError: a record is not the JSON object toolwire wrote.
    """
    run = summary_from_row(run_row)
    events = events_from_rows(run.run_id, event_rows)
    messages: list[dict[str, Any]] = []
    for text in message_texts:
        message = loads_record(text, "message")
        if not isinstance(message, dict):
            raise JournalError(f"run {run.run_id}: a stored message is not a JSON object")
        messages.append(message)
    return RunLog(run=run, events=tuple(events), messages=tuple(messages), blob_reader=blob_reader)
