"""What the journal's records say: each step's payload as JSON text, with
every secret removed.

Theory of operation: a record is serialized once; when a known secret (the
provider's API key, in any of the forms it takes in text) occurs in that
text, the record is walked, its strings redacted, and serialized again
(:func:`encode_record`). Settings lose their key-like entries and the
credentials and queries of their URLs (:func:`clean_settings`); error
messages go through :func:`toolwire.tools.scrub`'s credential patterns; long
tool arguments are recorded as a preview (:data:`PREVIEW_CHARS`). When the
records are written is :mod:`toolwire.journal._observer`'s business.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from toolwire.cost import Cost
from toolwire.errors import ToolwireError, UsageLimitExceeded
from toolwire.http.credentials import MIN_SECRET_LENGTH, ascii_lower, redact, secret_forms
from toolwire.http.urls import url_where
from toolwire.journal._kinds import (
    ApprovalGiven,
    ModelResponse,
    ModelSampled,
    QuestionAnswered,
    RunFinished,
    RunSuspended,
    ToolIntent,
    ToolOutcome,
)
from toolwire.messages import AssistantMessage
from toolwire.run import RunResult, printable_output
from toolwire.stream import jsonio
from toolwire.tools import Approval, Question, QuestionAnswer, Sample, ToolResult, scrub
from toolwire.types import InvalidToolCall, StreamResult, ToolCall

__all__ = [
    "PREVIEW_CHARS",
    "RecordEncoder",
    "answered_record",
    "approval_record",
    "arguments_record",
    "clean_settings",
    "dumps_record",
    "encode_record",
    "error_record",
    "intent_record",
    "outcome_record",
    "pending_record",
    "response_record",
    "run_summary",
    "sampled_record",
]

PREVIEW_CHARS = 4_000
"""Tool arguments longer than this (as JSON) are recorded as a preview in the
intent and outcome records; the full arguments are in the model's recorded
answer, which a resume needs anyway."""

_SECRET_SETTING_WORDS = ("key", "token", "secret", "password", "authorization")


def encode_record(value: Any, secrets: Iterable[str] = ()) -> str:
    """JSON text of a record, with every secret replaced by ``<redacted>``.

    Secrets are replaced in the record's strings *before* it is serialized
    (:func:`toolwire.http.credentials.redact`), so the text is always the
    record's well-formed JSON, whatever the secret: a one-letter placeholder
    key damages nothing, a short key is replaced where it stands alone and not
    inside longer words. The common case costs one search of the text: the
    record is walked only when a secret occurs in it.

    Text that UTF-8 cannot hold (a lone surrogate from a ``\\ud800`` escape
    in a model's JSON) is written as a JSON escape, so it is recorded rather
    than failing the run.
    """
    text = dumps_record(value)
    low = ascii_lower(text)
    present = [s for s in secret_forms(secrets) if _occurs(s, low)]
    if present:
        text = dumps_record(redact(value, present))
    return text


def dumps_record(value: Any) -> str:
    try:
        return jsonio.dumps(value)
    except (TypeError, ValueError):
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str)


def _occurs(secret: str, low: str) -> bool:
    """Whether ``secret`` may occur, in any case, in a string of the record
    whose text in lower case is ``low``."""
    secret = ascii_lower(secret)
    return secret in low or json.dumps(secret)[1:-1] in low


def clean_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings as recorded: no key-like entry, URLs without credentials."""
    out: dict[str, Any] = {}
    for name, value in settings.items():
        if any(word in name.lower() for word in _SECRET_SETTING_WORDS):
            continue
        if isinstance(value, str) and "://" in value:
            value = url_where(value)
        out[name] = value
    return out


def error_record(error: BaseException) -> dict[str, Any]:
    if isinstance(error, ToolwireError):
        record: dict[str, Any] = {
            "type": error.type_name,
            "message": scrub(error.message, limit=2000, keep_paths=True),
        }
        if isinstance(error, UsageLimitExceeded):
            record.update(
                limit=error.limit, maximum=error.maximum, value=error.value, scope=error.scope
            )
        status = getattr(error, "status_code", None)
        if isinstance(status, int):
            record["status_code"] = status
        return record
    return {
        "type": type(error).__name__,
        "message": scrub(str(error), limit=2000, keep_paths=True),
    }


def arguments_record(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """How a record keeps tool arguments: whole (``arguments``), or, past
    :data:`PREVIEW_CHARS`, as a preview (``arguments_preview`` and
    ``arguments_chars``, the fields of :class:`ToolIntent` of those names)."""
    try:
        small = len(jsonio.dumps_bytes(arguments)) <= PREVIEW_CHARS  # bytes >= characters
    except (TypeError, ValueError):
        small = False
    text = "" if small else dumps_record(arguments)
    if len(text) <= PREVIEW_CHARS:
        return {"arguments": arguments}
    return {"arguments_preview": text[:PREVIEW_CHARS], "arguments_chars": len(text)}


def intent_record(
    call: ToolCall | InvalidToolCall,
    idempotency_key: str,
    eager: bool,
    *,
    totals: dict[str, Any] | None = None,
) -> ToolIntent:
    """What a tool call's intent record says (``totals``: the run's, once the
    batch's calls are counted)."""
    if isinstance(call, InvalidToolCall):
        return ToolIntent(
            name=call.name,
            invalid=True,
            raw_arguments=call.raw_arguments[:PREVIEW_CHARS],
            error=call.error,
            idempotency_key=idempotency_key,
            eager=eager,
            totals=totals,
        )
    return ToolIntent(
        name=call.name,
        **arguments_record(call.arguments),
        repaired=call.repaired,
        idempotency_key=idempotency_key,
        eager=eager,
        asynchronous=call.asynchronous,
        totals=totals,
    )


class RecordEncoder:
    """Encodes records for one set of secrets: most records contain none,
    and cost one search of their text per form a secret may take."""

    __slots__ = ("_needles", "secrets")

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = tuple(secret_forms(s for s in secrets if s))
        """The secrets and the forms they take in text (URL-encoded, base64)."""
        # What a secret looks like in JSON text, as is and escaped: found
        # by one search each, most records need no redaction.
        self._needles = tuple(
            dict.fromkeys(
                ascii_lower(form)
                for s in self.secrets
                if len(s) >= MIN_SECRET_LENGTH
                for form in (s, json.dumps(s)[1:-1])
            )
        )

    def encode(self, value: Any) -> str:
        """The JSON text of ``value``, every secret replaced (:func:`encode_record`)."""
        text = dumps_record(value)
        if self._needles:
            low = ascii_lower(text)
            for needle in self._needles:
                if needle in low:
                    return encode_record(value, self.secrets)
        return text


def response_record(
    result: StreamResult, cost: Cost | None, elapsed: float, totals: dict[str, Any] | None
) -> ModelResponse:
    """What a model's answer record says (choice 0 is the one the run follows)."""
    choice = result.choices[0] if result.choices else None
    assistant = AssistantMessage.from_choice(choice) if choice is not None else None
    return ModelResponse(
        elapsed=elapsed,
        finish_reason=choice.finish_reason if choice is not None else None,
        usage=result.usage.to_dict() if result.usage is not None else None,
        cost=cost.to_dict() if cost is not None else None,
        assistant=assistant.to_dict() if assistant is not None else None,
        choices=len(result.choices),
        model=result.model,
        response_id=result.response_id,
        totals=totals,
    )


def approval_record(name: str, decision: Approval) -> ApprovalGiven:
    """What an approver's decision record says."""
    edited = arguments_record(decision.arguments) if decision.arguments is not None else {}
    return ApprovalGiven(name=name, decision=decision.decision, reason=decision.reason, **edited)


def sampled_record(sample: Sample, totals: dict[str, Any] | None) -> ModelSampled:
    """What the record of a completion a running tool asked of the run's model says."""
    return ModelSampled(
        source=sample.source,
        model=sample.model,
        text=sample.text,
        finish_reason=sample.finish_reason,
        usage=sample.usage.to_dict() if sample.usage is not None else None,
        cost=sample.cost.to_dict() if sample.cost is not None else None,
        elapsed=sample.elapsed,
        error=sample.error,
        totals=totals,
    )


def answered_record(
    name: str, question: Question, answer: QuestionAnswer, *, principal: str
) -> QuestionAnswered:
    """What the record of an answer to a running tool's question says (bound
    to the question's digest; the content only when it was accepted)."""
    content = dict(answer.content) if answer.action == "accept" and answer.content else None
    return QuestionAnswered(
        name=name,
        digest=question.digest,
        action=answer.action,
        content=content,
        principal=principal,
    )


def outcome_record(result: ToolResult, *, eager: bool, interrupted: bool) -> ToolOutcome:
    """What a tool call's outcome record says. An interrupted call (started,
    no outcome recorded, not repeated) says it ``may_have_run``: its worker
    may have run it before a crash, or still run it after a takeover fenced
    it out."""
    payload = result.to_dict()
    if payload.get("traceback") is None:  # most results: no need to say so
        del payload["traceback"]
    arguments = payload.pop("arguments", {})
    payload.update(arguments_record(arguments if isinstance(arguments, dict) else {}))
    return ToolOutcome(
        result=payload, eager=eager, interrupted=interrupted, may_have_run=interrupted
    )


def run_summary(result: RunResult, totals: dict[str, Any] | None) -> RunFinished:
    """The summary of a run's end: its outcome and answer (the ``runs`` row's,
    and a finished run's last record)."""
    return RunFinished(
        outcome=result.outcome,
        output=printable_output(result.output),
        turns=result.turns,
        tool_calls=len(result.tool_calls),
        usage=result.usage.to_dict(),
        cost=result.cost.to_dict() if result.cost is not None else None,
        totals=totals,
    )


def pending_record(result: RunResult, totals: dict[str, Any] | None) -> RunSuspended:
    """What a suspended run waits for: the calls, their canonical arguments
    and digests (what an approval must name)."""
    return RunSuspended(
        outcome=result.outcome,
        turns=result.turns,
        pending=tuple(pending.to_dict() for pending in result.pending),
        totals=totals,
    )
