"""The journal's records as typed, versioned values: one frozen type per kind.

Theory of operation: every step a journal holds is one of the kinds of
:data:`Record`, a closed union; :func:`decode` turns a stored payload (the
JSON object of an ``events`` row, or of a run's header) into its type, and
:func:`encode` turns a record back into its kind, version and JSON-ready
payload. This module is the only one that reads a payload's keys: the rest
of toolwire reads a record's fields.

Versions: each kind has its own (:attr:`version`, listed in
:data:`VERSIONS`). A payload says its version under ``"v"``; a payload
without one is of version 1, so every record written before versions
existed (toolwire a87298d and earlier), and every record of a kind still at
version 1, is stored exactly as it was, and old journals need no migration.
A payload of an older version is upgraded on read (:data:`_UPGRADES`, one
step per version); one of a kind this toolwire does not know, or of a newer
version than it reads, is a :class:`~toolwire.journal.JournalError` naming
it: nothing is dropped silently.

Decoding is as lenient as the readers it replaces were: a key that is
missing, or holds a value of the wrong JSON type, reads as its field's
default. The nested values (usage, cost, error, the assistant's message, a
tool's result, a pending call) stay JSON objects here; their own readers
(:func:`~toolwire.cost.cost_from_dict`,
:meth:`~toolwire.messages.AssistantMessage.from_dict`,
:func:`~toolwire.journal.tool_result_from_dict`) check them where they are
used, as before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from toolwire.journal._errors import JournalError
from toolwire.journal._field_types import READERS as _READERS
from toolwire.journal._kinds_steer import SteerApplied
from toolwire.journal._kinds_tools import ModelSampled, ToolsChanged

__all__ = [
    "KINDS",
    "TOTALED",
    "VERSIONS",
    "AnswerGiven",
    "ApprovalGiven",
    "ModelAttempt",
    "ModelFailed",
    "ModelRequest",
    "ModelResponse",
    "ModelSampled",
    "ModelStreaming",
    "QuestionAnswered",
    "Record",
    "RunFailed",
    "RunFinished",
    "RunResumed",
    "RunStarted",
    "RunSuspended",
    "SteerApplied",
    "ToolIntent",
    "ToolOutcome",
    "ToolsChanged",
    "decode",
    "encode",
    "payload_of",
    "record_of",
]

_OMIT = {"omit": True}
"""A field left out of its payload while it holds its default."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Header:
    """What a run's header says: what ran it (never a key)."""

    model: str = ""
    provider: str = ""
    dialect: str = ""
    tools: tuple[str, ...] = ()
    settings: dict[str, Any] = field(default_factory=dict[str, Any])
    """The recorded settings (key-like entries and URL credentials removed)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted(_Header):
    """A run starts; its header (also the ``runs`` row's)."""

    kind: ClassVar[str] = "run_started"
    version: ClassVar[int] = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResumed(_Header):
    """A run resumes in a new process, with the header it resumes under."""

    kind: ClassVar[str] = "run_resumed"
    version: ClassVar[int] = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequest:
    """A model request is about to be sent."""

    kind: ClassVar[str] = "model_request"
    version: ClassVar[int] = 1
    messages: int | None = None
    """How many messages the request carries."""
    new: int | None = None
    """How many of them no earlier request carried (stored with this one)."""
    totals: dict[str, Any] | None = field(default=None, metadata=_OMIT)
    """The run's totals after this step (:mod:`toolwire.journal._totals`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelStreaming:
    """The provider keeps the response being streamed under ``response_id``."""

    kind: ClassVar[str] = "model_streaming"
    version: ClassVar[int] = 1
    response_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelAttempt:
    """One provider of a fallback chain tried for the request: the chain went
    on after its ``error``, or it is the last one tried (``error`` ``None``:
    it answered)."""

    kind: ClassVar[str] = "model_attempt"
    version: ClassVar[int] = 1
    position: int | None = None
    """Its place in the chain (0: the primary)."""
    provider: str | None = None
    dialect: str | None = None
    model: str | None = None
    elapsed: float | None = None
    error: dict[str, Any] | None = None
    """``{"type", "message", ...}`` of its failure."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelResponse:
    """What the model answered (choice 0 is the one the run follows)."""

    kind: ClassVar[str] = "model_response"
    version: ClassVar[int] = 1
    elapsed: float | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    cost: dict[str, Any] | None = None
    assistant: dict[str, Any] | None = None
    """The answer as ``AssistantMessage.to_dict()``."""
    choices: int | None = None
    model: str | None = None
    response_id: str | None = None
    totals: dict[str, Any] | None = field(default=None, metadata=_OMIT)

    @property
    def call_count(self) -> int:
        """How many tool calls the answer asks for."""
        calls = self.assistant.get("tool_calls") if self.assistant is not None else None
        return len(calls) if isinstance(calls, list) else 0


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelFailed:
    """A request or its stream failed (with what it used, when a usage limit
    cut it: then ``priced``)."""

    kind: ClassVar[str] = "model_failed"
    version: ClassVar[int] = 1
    elapsed: float | None = None
    error: dict[str, Any] | None = None
    """``{"type", "message", ...}`` of the failure."""
    priced: bool = field(default=False, metadata={"present": "usage"})
    """Whether the failure recorded its usage and cost (keys ``usage``, ``cost``)."""
    usage: dict[str, Any] | None = None
    cost: dict[str, Any] | None = None
    totals: dict[str, Any] | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolIntent:
    """A tool call is about to run (committed before its body runs)."""

    kind: ClassVar[str] = "tool_intent"
    version: ClassVar[int] = 1
    name: str | None = None
    invalid: bool = field(default=False, metadata=_OMIT)
    """The model's arguments did not parse (``raw_arguments``, ``error``)."""
    raw_arguments: str | None = field(default=None, metadata=_OMIT)
    error: str | None = field(default=None, metadata=_OMIT)
    arguments: dict[str, Any] | None = field(default=None, metadata=_OMIT)
    """The arguments, when short enough to keep whole."""
    arguments_preview: str | None = field(default=None, metadata=_OMIT)
    """Longer arguments: their JSON text's beginning, and its length."""
    arguments_chars: int | None = field(default=None, metadata=_OMIT)
    repaired: bool = field(default=False, metadata=_OMIT)
    idempotency_key: str | None = None
    eager: bool = False
    """Started while the answer streamed."""
    asynchronous: bool = field(default=False, metadata=_OMIT)
    """``ToolCall.asynchronous``: its outcome stands for every attempt of the turn."""
    totals: dict[str, Any] | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Given:
    """What an answer to a call says of itself: its call's tool, the
    decision, and, given to a suspended run, who gave it, on what, when,
    and how it is signed."""

    name: str | None = None
    decision: str | None = None
    principal: str | None = field(default=None, metadata=_OMIT)
    digest: str | None = field(default=None, metadata=_OMIT)
    given_at: float | None = field(default=None, metadata=_OMIT)
    repaired: bool | None = field(default=None, metadata=_OMIT)
    signed: bool | None = field(default=None, metadata=_OMIT)
    signature: str | None = field(default=None, metadata=_OMIT)
    """The decision's signature (:func:`~toolwire.journal.sign_decision`)."""
    signed_fields: dict[str, Any] | None = field(default=None, metadata=_OMIT)
    """What the signature covers beyond the record's own fields."""
    expires_at: float | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalGiven(_Given):
    """An approver's decision on a call (``allow``, ``edit`` or ``deny``): by
    the run's approver, or given to a suspended run (then ``principal``,
    ``digest``, ``given_at`` and ``signed`` say who, on what, when, how)."""

    kind: ClassVar[str] = "approval"
    version: ClassVar[int] = 1
    by: str | None = field(default=None, metadata=_OMIT)
    """Who decided, in journals that called it so."""
    reason: str | None = field(default=None, metadata=_OMIT)
    arguments: dict[str, Any] | None = field(default=None, metadata=_OMIT)
    """An edit's arguments, as :class:`ToolIntent` keeps them."""
    arguments_preview: str | None = field(default=None, metadata=_OMIT)
    arguments_chars: int | None = field(default=None, metadata=_OMIT)

    @property
    def who(self) -> str | None:
        """Who decided, whatever the journal called it."""
        return self.principal or self.by


@dataclass(frozen=True, slots=True, kw_only=True)
class AnswerGiven(_Given):
    """An outside tool's result, given to a suspended run."""

    kind: ClassVar[str] = "answer"
    version: ClassVar[int] = 1
    content: str | None = field(default=None, metadata=_OMIT)
    """The text the model is given."""


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionAnswered:
    """A person's answer to the question a tool asked mid-call (an MCP
    server's elicitation), given to a suspended run; reused when the call,
    made again on resume, asks the same question (the same ``digest``)."""

    kind: ClassVar[str] = "question_answer"
    version: ClassVar[int] = 1
    name: str | None = None
    """The tool's name."""
    digest: str | None = None
    """The question's digest (:attr:`toolwire.tools.Question.digest`)."""
    action: str | None = None
    """``accept``, ``decline`` or ``cancel``."""
    content: dict[str, Any] | None = field(default=None, metadata=_OMIT)
    """The answer itself, for ``accept``."""
    principal: str | None = field(default=None, metadata=_OMIT)
    given_at: float | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutcome:
    """A tool call's outcome (or, ``interrupted``, that it started, has no
    outcome recorded, and was not run again: it ``may_have_run``)."""

    kind: ClassVar[str] = "tool_outcome"
    version: ClassVar[int] = 2
    result: dict[str, Any] | None = None
    """The :class:`~toolwire.tools.ToolResult` as ``to_dict()`` (its long
    arguments as a preview). Version 2: it may hold ``parts``, the result's
    text and content parts in order (bytes as base64)."""
    eager: bool = False
    interrupted: bool = False
    may_have_run: bool = field(default=False, metadata=_OMIT)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished:
    """A run ended with an outcome (also the ``runs`` row's summary)."""

    kind: ClassVar[str] = "run_finished"
    version: ClassVar[int] = 1
    outcome: str | None = None
    output: str | None = None
    turns: int | None = None
    tool_calls: int | None = None
    usage: dict[str, Any] | None = None
    cost: dict[str, Any] | None = None
    totals: dict[str, Any] | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSuspended:
    """A run waits for approvals or outside results: the calls it waits on."""

    kind: ClassVar[str] = "run_suspended"
    version: ClassVar[int] = 1
    outcome: str | None = None
    turns: int | None = None
    pending: tuple[Any, ...] = ()
    """Each call as ``PendingCall.to_dict()``."""
    totals: dict[str, Any] | None = field(default=None, metadata=_OMIT)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFailed:
    """A run ended without an outcome: an error, a cancellation, a limit."""

    kind: ClassVar[str] = "run_failed"
    version: ClassVar[int] = 1
    error: dict[str, Any] | None = None
    cancelled: bool = False
    turns: int | None = None
    tool_calls: int | None = None
    usage: dict[str, Any] | None = None
    cost: dict[str, Any] | None = None
    totals: dict[str, Any] | None = field(default=None, metadata=_OMIT)

    @property
    def ending(self) -> str:
        """How the run ended, in the words every view of the journal uses:
        ``cancelled``, ``stopped by a usage limit`` or ``failed``."""
        if self.cancelled:
            return "cancelled"
        if (self.error or {}).get("type") == "usage_limit_exceeded":
            return "stopped by a usage limit"
        return "failed"


Record = (
    RunStarted
    | RunResumed
    | ModelRequest
    | ModelStreaming
    | ModelAttempt
    | ModelResponse
    | ModelFailed
    | ToolIntent
    | ApprovalGiven
    | AnswerGiven
    | QuestionAnswered
    | ToolOutcome
    | ToolsChanged
    | ModelSampled
    | SteerApplied
    | RunFinished
    | RunSuspended
    | RunFailed
)
"""Every kind of record a journal holds."""

KINDS: dict[str, type[Record]] = {
    cls.kind: cls
    for cls in (
        RunStarted,
        RunResumed,
        ModelRequest,
        ModelStreaming,
        ModelAttempt,
        ModelResponse,
        ModelFailed,
        ToolIntent,
        ApprovalGiven,
        AnswerGiven,
        QuestionAnswered,
        ToolOutcome,
        ToolsChanged,
        ModelSampled,
        SteerApplied,
        RunFinished,
        RunSuspended,
        RunFailed,
    )
}
"""Each kind's type, by the kind name stored with it."""

VERSIONS: dict[str, int] = {kind: cls.version for kind, cls in KINDS.items()}
"""The version of each kind this toolwire writes (and the newest it reads)."""

TOTALED = (
    ModelRequest,
    ModelResponse,
    ModelFailed,
    ToolIntent,
    ModelSampled,
    RunFinished,
    RunSuspended,
    RunFailed,
)
"""The kinds that may carry the run's totals."""

_UPGRADES: dict[tuple[str, int], Callable[[dict[str, Any]], dict[str, Any]]] = {
    # A version 1 result has no parts: it reads as version 2 unchanged.
    ("tool_outcome", 1): dict,
}
"""``(kind, n)``: the payload of version ``n`` as version ``n + 1`` says it."""


# -- decoding ----------------------------------------------------------------


_FIELDS: dict[type[Record], tuple[dataclasses.Field[Any], ...]] = {
    cls: dataclasses.fields(cls) for cls in KINDS.values()
}


def _read(cls: type[Record], payload: Mapping[str, Any]) -> Record:
    values: dict[str, Any] = {}
    for spec in _FIELDS[cls]:
        if "present" in spec.metadata:
            values[spec.name] = spec.metadata["present"] in payload
        elif spec.name in payload:
            values[spec.name] = _READERS[str(spec.type)](payload[spec.name])
    if issubclass(cls, _Header) and "dialect" not in payload and "api" in payload:
        values["dialect"] = str(payload["api"])  # "api" in older journals
    if cls is ToolOutcome and "may_have_run" not in payload:
        values["may_have_run"] = bool(payload.get("interrupted"))
    return cls(**values)


def decode(kind: str, version: int, payload: Mapping[str, Any]) -> Record:
    """The record of ``kind`` that ``payload`` of ``version`` says, upgraded
    to the version this toolwire writes.

    Raises:
        JournalError: the kind is unknown, or the version newer than this
            toolwire reads (or not a version).
    """
    cls = KINDS.get(kind)
    if cls is None:
        raise JournalError(
            f"the journal holds a record of kind {kind!r}, which this toolwire does not "
            "know (written by a newer toolwire?)"
        )
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise JournalError(f"the journal holds a record of kind {kind!r} of version {version!r}")
    if version > cls.version:
        raise JournalError(
            f"the journal holds a record of kind {kind!r} of version {version}, and this "
            f"toolwire reads {kind} records up to version {cls.version}: upgrade toolwire "
            "to read it"
        )
    data = dict(payload)
    for step in range(version, cls.version):
        data = _UPGRADES[(kind, step)](data)
    return _read(cls, data)


def record_of(kind: str, payload: Mapping[str, Any]) -> Record:
    """The record a stored payload of ``kind`` says (its version under ``"v"``,
    1 when it has none).

    Raises:
        JournalError: see :func:`decode`.
    """
    return decode(kind, payload.get("v", 1), payload)


# -- encoding ----------------------------------------------------------------


def _value(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def encode(record: Record) -> tuple[str, int, dict[str, Any]]:
    """The record's kind, version and JSON-ready payload (without ``"v"``:
    :func:`payload_of` adds it)."""
    payload: dict[str, Any] = {}
    for spec in _FIELDS[type(record)]:
        value = getattr(record, spec.name)
        if "present" in spec.metadata:
            continue
        if spec.name in ("usage", "cost") and isinstance(record, ModelFailed):
            if not record.priced:
                continue
        elif spec.metadata.get("omit") and value == spec.default:
            continue
        payload[spec.name] = _value(value)
    return record.kind, record.version, payload


def payload_of(record: Record) -> dict[str, Any]:
    """The payload a journal stores for ``record``: its fields, and its
    version under ``"v"`` when it is past 1."""
    _, version, payload = encode(record)
    return payload if version == 1 else {**payload, "v": version}
