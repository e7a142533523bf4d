"""Decisions as the journal recorded them, and the checks a keyed resume makes
before anything of a suspended run goes on.

Theory of operation: an answer to a suspended run (an approval, a denial, an
outside result) is journaled right after the run's ``run_suspended`` event,
before anything else happens in the run (:mod:`toolwire.journal._approvals`).
:func:`recorded_decisions` reads those answers into :class:`RecordedDecision`
records, each with the signature it was given (if any) and the fields that
signature covers. :func:`check_signatures` is what a resume with an approval
key runs before it journals or runs anything: every decision of the turn the
run resumes in must carry a valid signature over its run, call, digest,
decision, expiry and principal (and its reason or result), or the resume is
refused with :class:`~toolwire.journal.ApprovalRefused` naming the call, and
the run stays suspended. Signatures and digests are compared as bytes, so a
non-ASCII one is a refusal, never a ``TypeError``.

:func:`waiting_for` lists the calls a suspended run still waits on, as
:class:`WaitingCall` records (``toolwire runs pending``, ``agent.pending``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from toolwire.journal._approvals import (
    ApprovalRefused,
    Decision,
    pending_calls,
    recorded_answers,
    result_content,
    same_text,
    sign_decision,
)
from toolwire.journal._kinds import AnswerGiven, ApprovalGiven
from toolwire.journal._questions import answered_questions
from toolwire.journal._records import JournalEvent, RunLog

__all__ = [
    "KEY_VARIABLE",
    "RecordedDecision",
    "WaitingCall",
    "check_signatures",
    "recorded_decisions",
    "resolve_approval_key",
    "waiting_for",
]

KEY_VARIABLE = "TOOLWIRE_APPROVAL_KEY"
"""The environment variable that holds the approval key."""

_KINDS = {"approval": ("allow", "deny"), "answer": ("result",)}
_DECISIONS: dict[str, Literal["allow", "deny", "result"]] = {
    "allow": "allow",
    "deny": "deny",
    "result": "result",
}


def resolve_approval_key(given: bytes | None = None) -> bytes | None:
    """``given``, else the key in ``$TOOLWIRE_APPROVAL_KEY`` (``None``: no key)."""
    if given is not None:
        return given
    found = os.environ.get(KEY_VARIABLE)
    return found.encode("utf-8", "surrogateescape") if found else None


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedDecision:
    """An answer to a suspended run, as its journal event recorded it."""

    run_id: str
    call_id: str
    turn: int | None
    seq: int
    """The journal event's sequence number."""
    decision: Literal["allow", "deny", "result"]
    digest: str | None
    """The digest of the arguments of the call answered (what a grant names)."""
    principal: str = ""
    reason: str | None = None
    content: str | None = None
    """An outside result, as the model is given it."""
    expires_at: float | None = None
    signature: str | None = None
    signed: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """What the signature covers beside the fields above: the digest as the
    signer gave it, and an outside result as given (when not text)."""

    def claim(self) -> Decision:
        """The :class:`Decision` the signature was made over."""
        signed_digest = self.signed.get("digest", self.digest)
        result = self.signed.get("result", self.content)
        return Decision(
            call_id=self.call_id,
            decision=self.decision,
            digest=signed_digest if isinstance(signed_digest, str) else None,
            reason=self.reason,
            result=result if self.decision == "result" else None,
            principal=self.principal,
            expires_at=self.expires_at,
        )

    def valid_signature(self, key: bytes) -> bool:
        """Whether this decision carries a signature, made with ``key``, over
        what it says (its digest and result included)."""
        if self.signature is None:
            return False
        claim = self.claim()
        if self.decision == "allow" and claim.digest is None:
            return False
        if claim.digest is not None and not same_text(claim.digest, self.digest or ""):
            return False
        if self.decision == "result" and result_content(claim.result) != self.content:
            return False
        return same_text(self.signature, sign_decision(key, self.run_id, claim))


def _recorded(run_id: str, event: JournalEvent) -> RecordedDecision | None:
    record = event.record
    if not isinstance(record, (ApprovalGiven, AnswerGiven)) or event.call_id is None:
        return None
    decision = _DECISIONS.get(record.decision or "")
    if decision is None or decision not in _KINDS[record.kind]:
        return None
    return RecordedDecision(
        run_id=run_id,
        call_id=event.call_id,
        turn=event.turn,
        seq=event.seq,
        decision=decision,
        digest=record.digest,
        principal=record.principal or "",
        reason=record.reason if isinstance(record, ApprovalGiven) else None,
        content=record.content if isinstance(record, AnswerGiven) else None,
        expires_at=float(record.expires_at) if record.expires_at is not None else None,
        signature=record.signature,
        signed=dict(record.signed_fields or {}),
    )


def recorded_decisions(log: RunLog) -> tuple[RecordedDecision, ...]:
    """The answers given to the run while it was suspended, oldest first:
    the approval and answer events that follow a ``run_suspended`` event
    before anything else of the run happens."""
    found: list[RecordedDecision] = []
    answering = False
    for event in log.events:
        if event.kind == "run_suspended":
            answering = True
            continue
        if not answering or event.kind not in _KINDS:
            answering = False
            continue
        recorded = _recorded(log.run.run_id, event)
        if recorded is not None:
            found.append(recorded)
    return tuple(found)


def _current(log: RunLog) -> tuple[RecordedDecision, ...]:
    """The recorded answers that a resume would act on: those of the turn
    the run resumes in, for calls without a recorded outcome."""
    last_request = max((e.seq for e in log.events if e.kind == "model_request"), default=0)
    done = {e.call_id for e in log.events if e.kind == "tool_outcome" and e.seq > last_request}
    latest: dict[str, RecordedDecision] = {}
    for d in recorded_decisions(log):
        if d.seq > last_request and (d.decision == "result" or d.call_id not in done):
            latest[d.call_id] = d  # the same answer given again, signed, counts
    return tuple(latest.values())


def check_signatures(log: RunLog, key: bytes) -> None:
    """Refuse a resume with ``key`` unless every decision it would act on
    carries a valid signature made with ``key`` (nothing is recorded, and
    nothing runs: the run stays as it is).

    Raises:
        ApprovalRefused: ``reason="signature"``, naming the call.
    """
    for decision in _current(log):
        if decision.valid_signature(key):
            continue
        how = "is not signed" if decision.signature is None else "has a signature that is not"
        raise ApprovalRefused(
            f"the decision on call {decision.call_id} of run {log.run.run_id} ({decision.decision}"
            f" by {decision.principal or 'an unnamed principal'}) {how} made with the approval "
            "key: nothing runs; record a signed decision, or resume without the key",
            reason="signature",
            call_id=decision.call_id,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitingCall:
    """A call a suspended run waits on, not answered yet."""

    run_id: str
    call_id: str
    name: str
    """The tool."""
    awaiting: Literal["approval", "result", "answer"]
    arguments: dict[str, Any]
    digest: str
    turn: int
    suspended_at: float
    """Unix time the run suspended."""
    question: dict[str, Any] | None = None
    """For ``answer``: what the tool asks (``message``, ``schema``, ``source``, ``digest``)."""

    def age(self, now: float | None = None) -> float:
        """Seconds since the run suspended (at ``now``, default the current time)."""
        return max(0.0, (time.time() if now is None else now) - self.suspended_at)

    def to_dict(self, now: float | None = None) -> dict[str, Any]:
        """A JSON-ready dict of every field, with its ``age`` in seconds."""
        return {
            "run_id": self.run_id,
            "call_id": self.call_id,
            "tool": self.name,
            "awaiting": self.awaiting,
            "arguments": self.arguments,
            "digest": self.digest,
            "turn": self.turn,
            "suspended_at": self.suspended_at,
            "age": round(self.age(now), 3),
        } | ({} if self.question is None else {"question": self.question})


def waiting_for(log: RunLog) -> tuple[WaitingCall, ...]:
    """The calls the suspended run of ``log`` still waits on (empty when it is
    not suspended, or every call is answered).

    Raises:
        JournalError: a recorded pending call is malformed.
    """
    calls = pending_calls(log)
    if not calls:
        return ()
    since = next((e.at for e in reversed(log.events) if e.kind == "run_suspended"), 0.0)
    answered = recorded_answers(log)
    questions = answered_questions(log)
    return tuple(
        WaitingCall(
            run_id=log.run.run_id,
            call_id=call.call_id,
            name=call.name,
            awaiting=call.awaiting,
            arguments=dict(call.arguments),
            digest=call.digest,
            turn=call.turn,
            suspended_at=since,
            question=call.question,
        )
        for call in calls
        if call.call_id not in answered and call.call_id not in questions
    )
