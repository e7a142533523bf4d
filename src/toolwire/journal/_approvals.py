"""Answers to a suspended run: approvals, denials and outside results, checked
before they are journaled, so that none can be misapplied.

Theory of operation: a run that suspends ends its journal with a
``run_suspended`` event listing the calls it waits on (:class:`PendingCall`:
the canonical arguments and their digest). An answer is a :class:`Decision`
naming the run, the call and (for an approval) the digest of the arguments it
approves. :func:`check_decision` is the pure judge, and fails closed with
:class:`ApprovalRefused`: a run that is not suspended, an unknown call, a
digest that differs, an expired decision, a bad or missing signature when a
key is set, or a call already answered differently. :func:`record_decision`
judges and journals an answer under the run's lease, so an answer cannot land
while a resume is under way (the answerer gets
:class:`~toolwire.journal.RunLeased`). The same answer given twice is
recorded once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from toolwire.errors import ApprovalRefused
from toolwire.journal._kinds import AnswerGiven, ApprovalGiven, RunSuspended, payload_of
from toolwire.journal._protocol import Journal
from toolwire.journal._records import JournalError, RunLog
from toolwire.run import PendingCall

__all__ = [
    "ApprovalRefused",
    "Decision",
    "check_decision",
    "pending_calls",
    "record_decision",
    "recorded_answers",
    "same_text",
    "sign_decision",
]

_SIGNATURE = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """An answer to one pending call of a suspended run.

    Build it from the :class:`PendingCall` it answers (:meth:`allow`,
    :meth:`deny`, :meth:`answer`), which binds it to the call's arguments.
    """

    call_id: str
    decision: Literal["allow", "deny", "result"]
    digest: str | None = None
    """The :func:`~toolwire.run.argument_digest` of the arguments answered;
    required to allow, checked whenever given."""
    reason: str | None = None
    """Why a call is denied (the model is told)."""
    result: Any = None
    """An external tool's result: a string as is, anything else as JSON."""
    principal: str = ""
    """Who answers (free-form: a user name, a service, an email address)."""
    expires_at: float | None = None
    """Unix time after which the decision is refused."""
    signature: str | None = None
    """:func:`sign_decision` of this decision, when the journal's reader has a key."""

    @classmethod
    def allow(
        cls, pending: PendingCall, *, principal: str = "", expires_at: float | None = None
    ) -> Decision:
        """Approve ``pending`` with exactly its recorded arguments."""
        return cls._on(pending, "allow", principal=principal, expires_at=expires_at)

    @classmethod
    def deny(
        cls, pending: PendingCall, reason: str = "the call was not approved", *, principal: str = ""
    ) -> Decision:
        """Deny ``pending``: the model is told ``reason``."""
        return cls._on(pending, "deny", reason=reason, principal=principal)

    @classmethod
    def answer(cls, pending: PendingCall, result: Any, *, principal: str = "") -> Decision:
        """Give the result of an external tool's call."""
        return cls._on(pending, "result", result=result, principal=principal)

    @classmethod
    def _on(
        cls, pending: PendingCall, decision: Literal["allow", "deny", "result"], **fields: Any
    ) -> Decision:
        """A decision on ``pending``, bound to its recorded arguments."""
        return cls(call_id=pending.call_id, decision=decision, digest=pending.digest, **fields)

    def signed(self, key: bytes, run_id: str) -> Decision:
        """This decision with its :func:`sign_decision` signature."""
        return dataclasses.replace(self, signature=sign_decision(key, run_id, self))


def _signed_text(run_id: str, decision: Decision) -> bytes:
    fields = {
        "run_id": run_id,
        "call_id": decision.call_id,
        "decision": decision.decision,
        "digest": decision.digest,
        "reason": decision.reason,
        "result": decision.result,
        "principal": decision.principal,
        "expires_at": decision.expires_at,
    }
    return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()


def sign_decision(key: bytes, run_id: str, decision: Decision) -> str:
    """The HMAC-SHA256 (hex) of everything ``decision`` says about ``run_id``."""
    return hmac.new(key, _signed_text(run_id, decision), hashlib.sha256).hexdigest()


def same_text(given: str, expected: str) -> bool:
    """Whether two digests or signatures are equal, compared in constant time
    as bytes: text that is not ASCII (even a lone surrogate) is unequal,
    never a ``TypeError``."""
    return hmac.compare_digest(
        given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass")
    )


def pending_calls(log: RunLog) -> tuple[PendingCall, ...]:
    """The calls a suspended run waits on (empty unless it is suspended)."""
    if log.run.status != "suspended":
        return ()
    for event in reversed(log.events):
        if isinstance(event.record, RunSuspended):
            return tuple(_pending(item) for item in event.record.pending)
    return ()


def _pending(item: Any) -> PendingCall:
    if not isinstance(item, Mapping):
        raise JournalError("a recorded pending call is not a JSON object")
    try:
        return PendingCall(
            call_id=str(item["call_id"]),
            name=str(item["name"]),
            awaiting=_awaiting(item["awaiting"]),
            arguments=dict(item["arguments"]),
            digest=str(item["digest"]),
            turn=int(item["turn"]),
            repaired=bool(item.get("repaired", False)),
            question=dict(item["question"]) if isinstance(item.get("question"), dict) else None,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise JournalError(f"a recorded pending call is incomplete: {exc}") from exc


def _awaiting(value: Any) -> Literal["approval", "result", "answer"]:
    if value == "result" or value == "answer":
        return value  # type: ignore[no-any-return]
    return "approval"


def recorded_answers(log: RunLog) -> dict[str, ApprovalGiven | AnswerGiven]:
    """The answers recorded since the run last suspended, by call id."""
    answers: dict[str, ApprovalGiven | AnswerGiven] = {}
    for event in reversed(log.events):
        record = event.record
        if isinstance(record, RunSuspended):
            break
        if isinstance(record, (ApprovalGiven, AnswerGiven)) and event.call_id is not None:
            answers.setdefault(event.call_id, record)
    return answers


def check_decision(
    log: RunLog, decision: Decision, *, key: bytes | None = None, now: float | None = None
) -> tuple[PendingCall, bool]:
    """Judge ``decision`` against the run's journal: the call it answers, and
    whether it is new (``False``: the same answer is already recorded, with
    the same signature or none).

    Raises:
        ApprovalRefused: see the module doc; nothing may be recorded.
    """
    run_id = log.run.run_id
    if log.run.status != "suspended":
        raise ApprovalRefused(
            f"run {run_id} is {log.run.status}, not suspended: it waits for no answer",
            reason="not_suspended",
        )
    found = {p.call_id: p for p in pending_calls(log)}.get(decision.call_id)
    if found is None:
        raise ApprovalRefused(
            f"run {run_id} waits for no call {decision.call_id!r}", reason="unknown_call"
        )
    if found.awaiting == "answer":
        raise ApprovalRefused(
            f"call {found.call_id} waits for a person's answer to its question, not a "
            f"decision: answer it with `toolwire runs answer {run_id[:12]} {found.call_id} "
            "--accept JSON` (or --decline)",
            reason="wrong_kind",
        )
    wanted = "result" if found.awaiting == "result" else ("allow", "deny")
    if decision.decision not in wanted:
        what = "a result" if found.awaiting == "result" else "an approval"
        raise ApprovalRefused(
            f"call {found.call_id} waits for {what}, not {decision.decision!r}",
            reason="wrong_kind",
        )
    if (decision.digest is None and decision.decision == "allow") or (
        decision.digest is not None and not same_text(decision.digest, found.digest)
    ):
        raise ApprovalRefused(
            f"the approval names arguments {decision.digest!a} but call {found.call_id} has "
            f"{found.digest}: refused",
            reason="digest",
            call_id=found.call_id,
        )
    moment = time.time() if now is None else now
    if decision.expires_at is not None and moment > decision.expires_at:
        raise ApprovalRefused(f"the decision on call {found.call_id} expired", reason="expired")
    if decision.signature is not None and not _SIGNATURE.fullmatch(decision.signature):
        raise ApprovalRefused(
            f"the signature of the decision on call {found.call_id} is not 64 hexadecimal "
            "digits (an HMAC-SHA256)",
            reason="signature",
            call_id=found.call_id,
        )
    if key is not None:
        expected = sign_decision(key, run_id, decision)
        if decision.signature is None or not same_text(decision.signature, expected):
            raise ApprovalRefused(
                f"the decision on call {found.call_id} is not signed with the approval key",
                reason="signature",
                call_id=found.call_id,
            )
    earlier = recorded_answers(log).get(found.call_id)
    if earlier is None:
        return found, True
    if _same(earlier, decision):
        # The same answer signed anew (an unsigned one, or one signed with
        # another key, cannot be taken back: a signed one may follow it).
        resigned = decision.signature is not None and earlier.signature != decision.signature
        return found, resigned
    raise ApprovalRefused(
        f"call {found.call_id} was already answered ({earlier.decision}) differently",
        reason="conflict",
    )


def _same(earlier: ApprovalGiven | AnswerGiven, decision: Decision) -> bool:
    if earlier.decision != decision.decision:
        return False
    if isinstance(earlier, AnswerGiven):
        return earlier.content == result_content(decision.result)
    return decision.decision == "allow" or earlier.reason == decision.reason


def result_content(result: Any) -> str:
    """The text a model is given for an external tool's result."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def decision_record(
    found: PendingCall, decision: Decision, *, now: float | None = None
) -> ApprovalGiven | AnswerGiven:
    """The journal record of an accepted decision: with its signature, what
    the signature covers, so that a resume with the key can check it."""
    given_at = time.time() if now is None else now
    signed_fields: dict[str, Any] | None = None
    if decision.signature is not None:
        signed_fields = {"digest": decision.digest}
        if decision.decision == "result" and not isinstance(decision.result, str):
            signed_fields["result"] = decision.result
    given: dict[str, Any] = {
        "name": found.name,
        "decision": decision.decision,
        "principal": decision.principal,
        "digest": found.digest,
        "given_at": given_at,
        "repaired": found.repaired,
        "signed": decision.signature is not None,
        "signature": decision.signature,
        "signed_fields": signed_fields,
        "expires_at": decision.expires_at,
    }
    if decision.decision == "result":
        return AnswerGiven(**given, content=result_content(decision.result))
    return ApprovalGiven(**given, reason=decision.reason)


def apply_decisions(
    journal: Journal,
    run_id: str,
    decisions: list[Decision],
    *,
    key: bytes | None = None,
    now: float | None = None,
) -> int:
    """Judge every decision, then journal the new ones (the caller holds the
    run's lease). All are checked before any is written: one refusal records
    nothing. Returns how many were new.

    Raises:
        ApprovalRefused: a decision cannot be applied.
        JournalError: no such run.
    """
    log = journal.load_run(run_id)
    accepted: list[tuple[PendingCall, Decision]] = []
    seen: dict[str, Decision] = {}
    for decision in decisions:
        twin = seen.get(decision.call_id)
        if twin is not None and twin != decision:
            raise ApprovalRefused(
                f"call {decision.call_id} is answered twice, differently", reason="conflict"
            )
        seen[decision.call_id] = decision
        found, new = check_decision(log, decision, key=key, now=now)
        if new and twin is None:
            accepted.append((found, decision))
    for found, decision in accepted:
        record = decision_record(found, decision, now=now)
        journal.record_event(
            run_id,
            record.kind,
            json.dumps(payload_of(record), ensure_ascii=False),
            turn=found.turn,
            call_id=found.call_id,
        )
    return len(accepted)


def record_decision(
    journal: Journal,
    run_ref: str,
    decision: Decision,
    *,
    key: bytes | None = None,
    now: float | None = None,
) -> bool:
    """Judge and journal one answer to a suspended run, under its lease (the
    approvals API of a web handler, and of ``toolwire runs approve``).
    ``run_ref`` is a run id or a unique prefix of one.

    Returns:
        ``True`` when recorded, ``False`` when the same answer already was.

    Raises:
        ApprovalRefused: the decision cannot be applied; nothing was recorded.
        RunLeased: the run is being resumed right now.
        JournalError: no such run.
    """
    run_id = journal.find_run(run_ref)
    with journal.lease(run_id):
        return apply_decisions(journal, run_id, [decision], key=key, now=now) == 1
