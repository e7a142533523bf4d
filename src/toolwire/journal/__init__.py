"""The journal: every run recorded, for audit, replay and resume after a crash.

An :class:`~toolwire.Agent` records each run by default (see
:func:`default_journal_path`): the run's model, provider and settings (never
a key), each model request with the conversation it carries, each answer
(normalized message, usage, finish reason, time), each tool call's intent
(before the tool runs) and outcome (result, attempts, time), and each
approval. ``toolwire runs list|show|export`` reads it; ``agent.resume(run_id)``
continues an interrupted run from its last recorded step without running a
side-effecting tool twice.

:class:`Journal` is the storage interface; :class:`SQLiteJournal` implements
it in a file (WAL mode, private to the user) or in memory. One process at a
time may run or resume a given run: :meth:`Journal.lease` holds it, and a
second process gets :class:`RunLeased`. :class:`PostgresJournal` keeps the
same records in PostgreSQL for workers on many machines, with leases that
expire and carry a fencing token (a stale worker gets :class:`LeaseLost`).
Both keep the bytes of the images, documents and audio a run carries once,
in a blob table keyed by sha256, which the records refer to
(:class:`BlobRef`, read back with ``load_blob``; a part past
:data:`MAX_BLOB_BYTES` is refused with :class:`BlobTooLarge`).
:class:`JournalObserver` is the run observer that writes it; :func:`plan_resume`
reads where a run stands. Each recorded step is a typed, versioned
record (:data:`Record`: :class:`RunStarted`, :class:`ModelRequest`,
:class:`ToolIntent`... see :mod:`toolwire.journal._kinds`), as
:attr:`JournalEvent.record`.
"""

from __future__ import annotations

from toolwire.journal._approvals import (
    ApprovalRefused,
    Decision,
    apply_decisions,
    check_decision,
    pending_calls,
    record_decision,
    recorded_answers,
    sign_decision,
)
from toolwire.journal._blobs import MAX_BLOB_BYTES, Blob, BlobRef, part_line, part_refs
from toolwire.journal._decisions import (
    KEY_VARIABLE,
    RecordedDecision,
    WaitingCall,
    check_signatures,
    recorded_decisions,
    resolve_approval_key,
    waiting_for,
)
from toolwire.journal._errors import BlobTooLarge
from toolwire.journal._kinds import (
    VERSIONS,
    AnswerGiven,
    ApprovalGiven,
    ModelAttempt,
    ModelFailed,
    ModelRequest,
    ModelResponse,
    ModelSampled,
    ModelStreaming,
    QuestionAnswered,
    Record,
    RunFailed,
    RunFinished,
    RunResumed,
    RunStarted,
    RunSuspended,
    SteerApplied,
    ToolIntent,
    ToolOutcome,
    ToolsChanged,
    payload_of,
)
from toolwire.journal._observer import JournalObserver
from toolwire.journal._open import (
    ENV_VAR,
    close_journals,
    default_journal,
    default_journal_path,
    open_journal,
)
from toolwire.journal._payloads import encode_record
from toolwire.journal._postgres import PostgresJournal, is_postgres_url
from toolwire.journal._protocol import Journal, JournalReader
from toolwire.journal._questions import answered_questions, record_answer
from toolwire.journal._rates import PostgresRateStore
from toolwire.journal._records import (
    MAY_HAVE_RUN,
    RUN_STATUSES,
    JournalError,
    JournalEvent,
    LeaseLost,
    RunLeased,
    RunLog,
    RunSummary,
    Step,
)
from toolwire.journal._resume import (
    RecordedCall,
    RecordedTurn,
    ResumePlan,
    plan_resume,
    tool_result_from_dict,
)
from toolwire.journal._store import SQLiteJournal

__all__ = [
    "ENV_VAR",
    "KEY_VARIABLE",
    "MAX_BLOB_BYTES",
    "MAY_HAVE_RUN",
    "RUN_STATUSES",
    "VERSIONS",
    "AnswerGiven",
    "ApprovalGiven",
    "ApprovalRefused",
    "Blob",
    "BlobRef",
    "BlobTooLarge",
    "Decision",
    "Journal",
    "JournalError",
    "JournalEvent",
    "JournalObserver",
    "JournalReader",
    "LeaseLost",
    "ModelAttempt",
    "ModelFailed",
    "ModelRequest",
    "ModelResponse",
    "ModelSampled",
    "ModelStreaming",
    "PostgresJournal",
    "PostgresRateStore",
    "QuestionAnswered",
    "Record",
    "RecordedCall",
    "RecordedDecision",
    "RecordedTurn",
    "ResumePlan",
    "RunFailed",
    "RunFinished",
    "RunLeased",
    "RunLog",
    "RunResumed",
    "RunStarted",
    "RunSummary",
    "RunSuspended",
    "SQLiteJournal",
    "SteerApplied",
    "Step",
    "ToolIntent",
    "ToolOutcome",
    "ToolsChanged",
    "WaitingCall",
    "answered_questions",
    "apply_decisions",
    "check_decision",
    "check_signatures",
    "close_journals",
    "default_journal",
    "default_journal_path",
    "encode_record",
    "is_postgres_url",
    "open_journal",
    "part_line",
    "part_refs",
    "payload_of",
    "pending_calls",
    "plan_resume",
    "record_answer",
    "record_decision",
    "recorded_answers",
    "recorded_decisions",
    "resolve_approval_key",
    "sign_decision",
    "tool_result_from_dict",
    "waiting_for",
]
