"""Answers to the questions a suspended run's tools asked mid-call (an MCP
server's elicitation), checked before they are journaled.

Theory of operation: a call that asked a question nobody in the process
could answer is listed in the run's ``run_suspended`` record with
``awaiting="answer"`` and the question (message, the answer's schema, its
digest). :func:`record_answer` judges an answer against that record, under
the run's lease (as :func:`~toolwire.journal.record_decision` does for an
approval), and journals a :class:`~toolwire.journal._kinds.QuestionAnswered`
bound to the question's digest; the resume, which makes the call again,
hands it to the tool when the server asks that very question again. Refused
with :class:`~toolwire.errors.ApprovalRefused`: a run that is not suspended,
a call that waits for no answer, an answer of the wrong shape (``accept``
without an object, or with properties the schema does not name, or without
a required one), an answer that differs from one already recorded.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, Literal

from toolwire.errors import ApprovalRefused
from toolwire.journal._approvals import pending_calls
from toolwire.journal._kinds import QuestionAnswered, RunSuspended, payload_of
from toolwire.journal._protocol import Journal
from toolwire.journal._records import RunLog
from toolwire.run import PendingCall

__all__ = ["answered_questions", "record_answer"]


def answered_questions(log: RunLog) -> dict[str, QuestionAnswered]:
    """The answers recorded since the run last suspended, by call id."""
    answers: dict[str, QuestionAnswered] = {}
    for event in reversed(log.events):
        record = event.record
        if isinstance(record, RunSuspended):
            break
        if isinstance(record, QuestionAnswered) and event.call_id is not None:
            answers.setdefault(event.call_id, record)
    return answers


def _check_content(found: PendingCall, content: Mapping[str, Any]) -> None:
    schema = (found.question or {}).get("schema") or {}
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        unknown = sorted(set(content) - set(properties))
        if unknown:
            raise ApprovalRefused(
                f"the question of call {found.call_id} asks for no {', '.join(unknown)}",
                reason="wrong_kind",
            )
    required = schema.get("required")
    missing = sorted(set(required) - set(content)) if isinstance(required, list) else []
    if missing:
        raise ApprovalRefused(
            f"the answer to call {found.call_id} needs {', '.join(missing)}", reason="wrong_kind"
        )


def check_answer(
    log: RunLog,
    call_id: str,
    action: Literal["accept", "decline", "cancel"],
    content: Mapping[str, Any] | None,
) -> tuple[PendingCall, bool]:
    """The call answered, and whether the answer is new.

    Raises:
        ApprovalRefused: see the module doc.
    """
    run_id = log.run.run_id
    if log.run.status != "suspended":
        raise ApprovalRefused(
            f"run {run_id} is {log.run.status}, not suspended: it waits for no answer",
            reason="not_suspended",
        )
    found = {p.call_id: p for p in pending_calls(log)}.get(call_id)
    if found is None:
        raise ApprovalRefused(f"run {run_id} waits for no call {call_id!r}", reason="unknown_call")
    if found.awaiting != "answer" or found.question is None:
        raise ApprovalRefused(
            f"call {call_id} waits for {found.awaiting}, not for an answer to a question",
            reason="wrong_kind",
        )
    if action == "accept":
        if not isinstance(content, Mapping):
            raise ApprovalRefused(
                f"accepting the question of call {call_id} needs the answer as a JSON object",
                reason="wrong_kind",
            )
        _check_content(found, content)
    earlier = answered_questions(log).get(call_id)
    if earlier is None:
        return found, True
    same = earlier.action == action and (earlier.content or None) == (
        dict(content) if content is not None and action == "accept" else None
    )
    if same:
        return found, False
    raise ApprovalRefused(
        f"the question of call {call_id} was already answered ({earlier.action}) differently",
        reason="conflict",
    )


def record_answer(
    journal: Journal,
    run_ref: str,
    call_id: str,
    action: Literal["accept", "decline", "cancel"],
    content: Mapping[str, Any] | None = None,
    *,
    principal: str = "",
    now: float | None = None,
) -> bool:
    """Judge and journal a person's answer to the question call ``call_id``
    of a suspended run asked (``toolwire runs answer RUN CALL --accept
    JSON``), under the run's lease.

    Returns:
        ``True`` when recorded, ``False`` when the same answer already was.

    Raises:
        ApprovalRefused: the answer cannot be applied; nothing was recorded.
        RunLeased: the run is being resumed right now.
        JournalError: no such run.
    """
    run_id = journal.find_run(run_ref)
    with journal.lease(run_id):
        log = journal.load_run(run_id)
        found, new = check_answer(log, call_id, action, content)
        if not new:
            return False
        question = found.question or {}
        record = QuestionAnswered(
            name=found.name,
            digest=str(question.get("digest", "")),
            action=action,
            content=dict(content) if action == "accept" and content is not None else None,
            principal=principal or None,
            given_at=time.time() if now is None else now,
        )
        journal.record_event(
            run_id,
            record.kind,
            json.dumps(payload_of(record), ensure_ascii=False),
            turn=found.turn,
            call_id=found.call_id,
        )
    return True
