"""When a run suspends: the calls of a turn that wait for someone outside the process.

A turn's calls are settled in the driver; before any of them runs,
:func:`waiting_calls` names those that cannot go on in this process:

- a ``requires_approval`` tool, when the toolbox has no approval callback and
  no approval was given to the run (before this change, such a call was
  silently denied); a remote MCP tool call the provider asks approval for
  (``asked``), likewise;
- an ``external`` tool, whose result comes from outside, when no result was
  given.

When there are any, nothing of the batch runs: the run ends ``suspended``,
its journal lists these calls (arguments and digests), and
:meth:`~toolwire.Agent.resume` continues it once they are answered.
:func:`check_grants` makes sure an approval given to the run names exactly
the arguments of the call it lets run.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from toolwire.journal import (
    ApprovalRefused,
    Decision,
    Journal,
    apply_decisions,
    pending_calls,
    resolve_approval_key,
)
from toolwire.run import PendingCall, argument_digest, canonical_arguments
from toolwire.tools import (
    Approval,
    ApprovalCallback,
    ApprovalFailed,
    ApprovalRequest,
    Toolbox,
    ask_approval,
)
from toolwire.types import InvalidToolCall, ToolCall

if TYPE_CHECKING:
    from toolwire.observe import Observers

__all__ = ["Answers", "check_grants", "run_approver", "waiting_calls"]


def waiting_calls(
    calls: Sequence[ToolCall | InvalidToolCall],
    *,
    settled: Collection[str],
    granted: Mapping[str, str],
    toolbox: Toolbox,
    turn: int,
    asked: Collection[str] = (),
) -> tuple[PendingCall, ...]:
    """The calls of ``calls`` that wait for an approval or an outside result.

    ``settled``: call ids that already have a result (recorded, answered,
    denied); ``granted``: approvals given to the run, by call id;
    ``asked``: the calls the provider asks approval for (remote MCP tools)."""
    waiting: list[PendingCall] = []
    needs_approval = toolbox.approve is None
    for call in calls:
        if isinstance(call, InvalidToolCall) or call.id in settled:
            continue
        tool = toolbox.get(call.name)
        awaiting: Literal["approval", "result"]
        if call.id in asked:
            if not needs_approval or call.id in granted:
                continue
            awaiting = "approval"
        elif tool is None:
            continue
        elif tool.external:
            awaiting = "result"
        elif tool.requires_approval and needs_approval and call.id not in granted:
            awaiting = "approval"
        else:
            continue
        waiting.append(
            PendingCall(
                call_id=call.id,
                name=call.name,
                awaiting=awaiting,
                arguments=_canonical(call),
                digest=argument_digest(call.arguments),
                turn=turn,
                repaired=call.repaired,
            )
        )
    return tuple(waiting)


def _canonical(call: ToolCall) -> dict[str, Any]:
    """The arguments as their canonical JSON reads back (what the digest covers)."""
    loaded: dict[str, Any] = json.loads(canonical_arguments(call.arguments))
    return loaded


def check_grants(calls: Sequence[ToolCall | InvalidToolCall], granted: Mapping[str, str]) -> None:
    """Fail closed when an approval given to the run names other arguments
    than its call has now.

    Raises:
        ApprovalRefused: a digest differs.
    """
    for call in calls:
        digest = granted.get(call.id)
        if digest is None or isinstance(call, InvalidToolCall):
            continue
        if digest != argument_digest(call.arguments):
            raise ApprovalRefused(
                f"the approval of call {call.id} names arguments {digest}, not the call's",
                reason="digest",
            )


def run_approver(
    inner: ApprovalCallback | None,
    granted: Mapping[str, str],
    observers: Observers,
    *,
    run_id: str,
    turn: int,
    failures: dict[str, ApprovalFailed],
) -> ApprovalCallback | None:
    """The toolbox's approval callback ``inner`` for one turn of a run, with
    each decision told to ``observers`` (the journal records it) before the
    toolbox acts on it. An approval given to a suspended run (``granted``:
    recorded, digest checked) allows its call without asking; a callback
    that raises is put in ``failures`` (the run ends with that
    :class:`ApprovalFailed`) instead of denying. ``None`` when nothing can
    approve."""
    if inner is None and not granted:
        return None

    async def approve(request: ApprovalRequest) -> Approval:
        if request.call_id in granted:
            return Approval.allow()
        if inner is None:  # pragma: no cover - such a call suspends the run first
            return Approval.deny("no approval was given")
        try:
            decision = await ask_approval(inner, request, errors="raise")
        except ApprovalFailed as failed:
            failures[request.call_id] = failed
            return Approval.deny("the approval step failed")
        for hook in observers.approval_decided:
            await hook(run_id, turn, request.call_id, request.tool_name, decision)
        return decision

    return approve


@dataclass(frozen=True, slots=True)
class Answers:
    """The answers given to :meth:`~toolwire.Agent.resume`: decisions as
    given, and results of external calls by call id (bound to the recorded
    arguments of their call), from ``principal``; with ``key``, each
    decision must be signed with it (the results are signed with it here)."""

    approvals: tuple[Decision, ...] = ()
    results: Mapping[str, Any] = field(default_factory=dict[str, Any])
    principal: str = ""
    key: bytes | None = None

    @classmethod
    def given(
        cls,
        approvals: Iterable[Decision],
        results: Mapping[str, Any] | None,
        principal: str,
        approval_key: bytes | None,
    ) -> Answers:
        """The answers of a call to :meth:`~toolwire.Agent.resume`, the
        approval key resolved (see :func:`~toolwire.journal.resolve_approval_key`)."""
        return cls(
            tuple(approvals), dict(results or {}), principal, resolve_approval_key(approval_key)
        )

    def give(self, journal: Journal, run_id: str) -> None:
        """Journal the answers (under the run's lease, held by the caller);
        all are checked before any is written.

        Raises:
            ApprovalRefused: an answer cannot be applied (nothing is recorded).
        """
        decisions = list(self.approvals)
        if self.results:
            pending = {p.call_id: p for p in pending_calls(journal.load_run(run_id))}
            for call_id, result in self.results.items():
                found = pending.get(call_id)
                if found is None:
                    raise ApprovalRefused(
                        f"run {run_id} waits for no result of call {call_id!r}",
                        reason="unknown_call",
                    )
                answer = Decision.answer(found, result, principal=self.principal)
                # The process holds the key: the results it gives are its own.
                decisions.append(answer if self.key is None else answer.signed(self.key, run_id))
        if decisions:
            apply_decisions(journal, run_id, decisions, key=self.key)
