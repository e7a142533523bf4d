"""A chat thread over the journal: which run a thread is at, what it says,
what it waits on, and the answers a page sends back, as decisions.

Both adapters keep no state of their own: a thread (AG-UI's ``threadId``,
``useChat``'s chat ``id``) names its runs in the journal (the thread's id for
its first run, ``<thread>~2``, ``<thread>~3``... for the runs after it), so a
page reloaded, or a request served by another process, finds the thread where
the journal says it is: its conversation, and the calls a suspended run waits on.

An answer is bound to the arguments it answers: the id a page answers by
(:func:`answer_id`) carries the pending call's digest, and the journal refuses
an approval of any other arguments. A pending call the page does not answer,
or answers with anything but an explicit approval, is denied.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolwire.errors import UsageError
from toolwire.journal import (
    Decision,
    Journal,
    JournalError,
    pending_calls,
    plan_resume,
    recorded_answers,
)
from toolwire.messages import AssistantMessage, Message, ToolResultMessage
from toolwire.run import PendingCall

__all__ = [
    "Answer",
    "Thread",
    "answer_id",
    "cost_text",
    "decisions_for",
    "load_thread",
    "parse_answer_id",
    "require_journal",
]

_SEP = "~"
DENIED = "the call was not approved"


@dataclass(frozen=True, slots=True, kw_only=True)
class Thread:
    """Where a thread stands in the journal."""

    thread_id: str
    run_id: str | None
    """Its latest run (``None``: the thread has none yet)."""
    status: str | None = None
    """That run's status (see :data:`toolwire.journal.RUN_STATUSES`)."""
    pending: tuple[PendingCall, ...] = ()
    """What a suspended run still waits on (answered calls left out)."""
    messages: tuple[Message, ...] = ()
    """The latest run's conversation, as its journal has it."""

    @property
    def suspended(self) -> bool:
        return self.status == "suspended"

    def next_run_id(self) -> str:
        """The id of the thread's next run."""
        if self.run_id is None:
            return self.thread_id
        head, sep, number = self.run_id.rpartition(_SEP)
        if sep and head == self.thread_id and number.isdigit():
            return f"{self.thread_id}{_SEP}{int(number) + 1}"
        return f"{self.thread_id}{_SEP}2"


def require_journal(journal: Journal | None) -> Journal:
    """The agent's journal; a chat adapter needs one (threads live there)."""
    if journal is None:
        raise UsageError(
            "a chat adapter needs an agent with a journal: its threads, and the calls"
            " they wait on, live there (Agent(..., journal=...))"
        )
    return journal


def _exists(journal: Journal, run_id: str) -> bool:
    try:
        return journal.find_run(run_id) == run_id
    except JournalError:
        return False


def load_thread(journal: Journal, thread_id: str) -> Thread:
    """The thread ``thread_id`` as the journal has it.

    Raises:
        UsageError: an empty thread id.
        JournalError: the journal cannot be read.
    """
    if not thread_id:
        raise UsageError("a chat request needs a thread id")
    latest: str | None = None
    candidate = thread_id
    number = 1
    while _exists(journal, candidate):
        latest = candidate
        number += 1
        candidate = f"{thread_id}{_SEP}{number}"
    if latest is None:
        return Thread(thread_id=thread_id, run_id=None)
    log = journal.load_run(latest)
    pending: tuple[PendingCall, ...] = ()
    if log.run.status == "suspended":
        answered = recorded_answers(log)
        pending = tuple(call for call in pending_calls(log) if call.call_id not in answered)
    return Thread(
        thread_id=thread_id,
        run_id=latest,
        status=log.run.status,
        pending=pending,
        messages=conversation(journal, latest),
    )


def conversation(journal: Journal, run_id: str) -> tuple[Message, ...]:
    """The run's conversation: the messages of its last request, the answer
    to it, and the results recorded since."""
    plan = plan_resume(journal.load_run(run_id))
    messages = list(plan.messages)
    if plan.response is not None:
        assistant: AssistantMessage = plan.response.assistant
        messages.append(assistant)
        for call in assistant.tool_calls:
            outcome = plan.response.outcomes.get(call.id)
            if outcome is not None:
                result = outcome[0]
                messages.append(
                    ToolResultMessage(
                        call_id=call.id,
                        name=call.name,
                        content=result.content,
                        is_error=not result.ok,
                    )
                )
    return tuple(messages)


def answer_id(pending: PendingCall) -> str:
    """The id a page answers ``pending`` by: its digest and its call id."""
    return f"{pending.digest}/{pending.call_id}"


def parse_answer_id(text: str) -> tuple[str, str]:
    """``(digest, call_id)`` from :func:`answer_id` (a bare call id: no digest)."""
    digest, sep, call_id = text.partition("/")
    if not sep or not digest.startswith("sha256:"):
        return "", text
    return digest, call_id


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """What a page said about one pending call."""

    id: str
    """:func:`answer_id` of the call (or its bare call id)."""
    approved: bool = False
    """Only an explicit ``True`` approves."""
    reason: str | None = None
    result: Any = None
    has_result: bool = False
    """An external tool's result is given (``result``, which may be ``None``)."""
    extra: Mapping[str, Any] = field(default_factory=dict[str, Any])


def decisions_for(
    pending: Sequence[PendingCall], answers: Sequence[Answer], principal: str
) -> tuple[list[Decision], dict[str, Any]]:
    """The decisions and outside results that ``answers`` give ``pending``.

    Deny by default: a call needing approval is allowed only by an answer
    that approves it explicitly, naming its digest (the journal checks that
    the digest is the call's); any other call, answered or not, is denied.
    An external tool's call takes the answer's result; without one it
    stays unanswered (the run suspends again).
    """
    by_call: dict[str, tuple[str, Answer]] = {}
    for answer in answers:
        digest, call_id = parse_answer_id(answer.id)
        by_call[call_id] = (digest, answer)
    approvals: list[Decision] = []
    results: dict[str, Any] = {}
    for call in pending:
        digest, answer = by_call.get(call.call_id, ("", Answer(id=call.call_id)))
        if call.awaiting == "result":
            if answer.has_result:
                results[call.call_id] = answer.result
        elif call.awaiting == "approval" and answer.approved is True:
            approvals.append(
                Decision(
                    call_id=call.call_id,
                    decision="allow",
                    digest=digest or None,
                    principal=principal,
                )
            )
        else:
            approvals.append(
                Decision(
                    call_id=call.call_id,
                    decision="deny",
                    digest=call.digest,
                    reason=answer.reason or DENIED,
                    principal=principal,
                )
            )
    return approvals, results


def cost_text(cost: Any) -> dict[str, str] | None:
    """A :class:`~toolwire.cost.Cost` in dollars as exact decimal text (every
    digit, so that runs can be told apart); ``None`` when unknown."""
    if cost is None:
        return None
    return {"total": str(cost.total), "input": str(cost.input), "output": str(cost.output)}
