"""Calls the provider asks the application to answer, not to run as tools.

A provider may ask for an approval before it runs a tool on a remote MCP
server, or ask the application to act on a computer or a shell (OpenAI's
Responses API does both). The decoder turns each into a tool call, marked
in the assistant message's provider state as ``asked`` for an ``approval``
or an ``action``; this module answers them:

- an MCP approval goes to the toolbox's approval callback, exactly as a
  ``requires_approval`` tool would; with no callback (and no approval given
  to the run) it is left unanswered, and the run suspends for it as it
  does for such a tool (:func:`~toolwire.agent._suspend.waiting_calls`);
- a computer, shell or client tool-search call runs the application's tool
  of that name (``computer``, ``local_shell``, ``shell``, ``apply_patch``,
  ``tool_search``: the tool-search hook, returning the tools it found) when the
  toolbox has one; otherwise it is refused, and the refusal is sent back to
  the model in the call's own output shape, never left unanswered;
- an action of a toolset (Anthropic's ``computer``, ``browser``) goes to the
  toolset's handler (``@toolwire.toolset``), as a call of ``action`` and
  ``input`` (:func:`routed_calls`); with no handler it is refused, in words
  the model reads.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from toolwire.messages import AssistantMessage
from toolwire.observe import Observers
from toolwire.stream import jsonio
from toolwire.tools import (
    ApprovalCallback,
    ApprovalRequest,
    Tool,
    Toolbox,
    ToolResult,
    ask_approval,
    idempotency_key,
    toolset_tool_name,
)
from toolwire.types import InvalidToolCall, ToolCall

__all__ = [
    "answer_asked_calls",
    "asked_approvals",
    "asked_kinds",
    "record_answers",
    "routed_calls",
]

_ASKED = ("approval", "action", "toolset")


def asked_kinds(message: AssistantMessage) -> dict[str, dict[str, Any]]:
    """The provider-state mark of each call of ``message`` that the provider
    asked about (``asked``: ``"approval"``, ``"action"`` or ``"toolset"``), by call id."""
    return {
        str(item.get("call_id")): item
        for item in message.provider_state
        if item.get("type") == "call_item" and item.get("asked") in _ASKED
    }


def routed_calls(
    calls: Sequence[ToolCall | InvalidToolCall], message: AssistantMessage, toolbox: Toolbox
) -> tuple[ToolCall | InvalidToolCall, ...]:
    """``calls``, each action of a toolset that has a handler made a call of
    the handler (same id and place; ``action`` and ``input`` its arguments)."""
    marks = asked_kinds(message)
    out: list[ToolCall | InvalidToolCall] = []
    for call in calls:
        toolset = marks.get(call.id, {}).get("toolset")
        handler = toolset_tool_name(str(toolset)) if toolset else None
        if handler is not None and isinstance(call, ToolCall) and toolbox.get(handler):
            arguments = {"action": call.name, "input": dict(call.arguments)}
            call = ToolCall(id=call.id, name=handler, arguments=arguments, index=call.index,
                            raw_arguments=call.raw_arguments, minted_id=call.minted_id)  # fmt: skip
        out.append(call)
    return tuple(out)


def asked_approvals(message: AssistantMessage) -> frozenset[str]:
    """The ids of the calls of ``message`` the provider asks approval for."""
    return frozenset(k for k, mark in asked_kinds(message).items() if mark["asked"] == "approval")


async def answer_asked_calls(
    calls: Sequence[ToolCall | InvalidToolCall],
    message: AssistantMessage,
    toolbox: Toolbox,
    *,
    approve: ApprovalCallback | None,
    granted: Collection[str],
    run_id: str,
    metadata: Mapping[str, Any],
) -> dict[str, ToolResult]:
    """Answers by call id for the calls the toolbox must not run itself: MCP
    approvals (those that can be decided here: the toolbox has an approval
    callback, or the call was approved in ``granted``), and computer or
    shell calls no tool of the toolbox handles."""
    marks = asked_kinds(message)
    out: dict[str, ToolResult] = {}
    for call in calls:
        mark = marks.get(call.id, {})
        if mark.get("asked") == "approval" and isinstance(call, ToolCall):
            if approve is None or (toolbox.approve is None and call.id not in granted):
                continue  # the run waits for an approval from outside
            server = str(mark.get("server") or "?")
            out[call.id] = await _mcp_approval(call, server, approve, run_id, metadata)
        elif mark.get("asked") == "action" and toolbox.get(call.name) is None:
            out[call.id] = _refused(call)
        elif mark.get("asked") == "toolset":
            toolset = str(mark.get("toolset"))
            if toolbox.get(toolset_tool_name(toolset)) is None:
                out[call.id] = _refused_toolset(call, toolset)
    return out


async def _mcp_approval(
    call: ToolCall,
    server: str,
    approve: ApprovalCallback,
    run_id: str,
    metadata: Mapping[str, Any],
) -> ToolResult:
    stand_in = Tool.from_schema(
        _never_run,
        name=call.name,
        parameters={"type": "object"},
        description=f"the tool {call.name!r} of the remote MCP server {server!r}",
        requires_approval=True,
    )
    request = ApprovalRequest(
        call_id=call.id,
        tool=stand_in,
        arguments=dict(call.arguments),
        metadata={**metadata, "mcp_server": server},
        run_id=run_id,
    )
    decision = await ask_approval(approve, request)
    allowed = decision.decision == "allow"
    reason = decision.reason or "the call was not approved"
    if decision.decision == "edit":
        reason = "the arguments of a remote MCP call cannot be edited here: denied"
    return ToolResult(
        call_id=call.id,
        name=call.name,
        ok=allowed,
        content="approved" if allowed else reason,
        error=None if allowed else "denied",
        arguments=dict(call.arguments),
    )


async def record_answers(
    observe: Observers,
    run_id: str,
    turn: int,
    calls: Sequence[ToolCall | InvalidToolCall],
    answers: Mapping[str, ToolResult],
) -> None:
    """Tell the observers each answer as a call's intent and outcome (the
    journal records them), so that a resumed run reuses the answer instead
    of asking again."""
    if not calls or not (observe.tools_started or observe.tool_finished):
        return
    intents = [(call, idempotency_key(run_id, call.id)) for call in calls]
    for started in observe.tools_started:
        await started(run_id, turn, intents, eager=False)
    for call in calls:
        for finished in observe.tool_finished:
            await finished(run_id, turn, call, answers[call.id], eager=False)


def _refused(call: ToolCall | InvalidToolCall) -> ToolResult:
    text = (
        f"This application does not carry out {call.name!r} requests: the call was refused "
        "and nothing was done. Do not ask again; answer with what you have."
    )
    return ToolResult(
        call_id=call.id,
        name=call.name,
        ok=False,
        content=jsonio.dumps({"error": "refused", "message": text}),
        error="denied",
        arguments=dict(call.arguments) if isinstance(call, ToolCall) else {},
    )


def _refused_toolset(call: ToolCall | InvalidToolCall, toolset: str) -> ToolResult:
    text = (
        f"This application has no handler for the {toolset!r} toolset: the {call.name!r} "
        "action was refused and nothing was done. Do not ask again; answer with what you have."
    )
    return ToolResult(
        call_id=call.id,
        name=call.name,
        ok=False,
        content=jsonio.dumps({"error": "refused", "message": text}),
        error="denied",
        arguments=dict(call.arguments) if isinstance(call, ToolCall) else {},
    )


def _never_run(**_: Any) -> None:  # pragma: no cover - only ever approved, never run
    raise RuntimeError("a remote MCP tool runs on its server, not here")
