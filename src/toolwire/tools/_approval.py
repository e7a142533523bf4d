"""Approval of dangerous calls: what an approver is asked, and what it answers.

A ``requires_approval`` tool runs only after an approval callback allowed it
(or edited its arguments). The callback is the toolbox's own, or one passed to
``Toolbox.execute(approve=...)`` for a batch; :func:`ask_approval` turns
whatever it answers into an :class:`Approval`, and denies on anything else,
so a broken approver never lets a call through.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from toolwire.errors import ApprovalFailed

if TYPE_CHECKING:
    from toolwire.tools._tool import Tool

__all__ = ["Approval", "ApprovalCallback", "ApprovalFailed", "ApprovalRequest", "ask_approval"]

logger = logging.getLogger("toolwire.tools")


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """What an approval callback is asked about."""

    call_id: str
    tool: Tool
    arguments: dict[str, Any]
    """The validated arguments the tool would run with."""
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The ``metadata`` passed to ``execute()``."""
    run_id: str | None = None
    repaired: bool = False
    """The arguments were repaired by toolwire (see ``ToolCall.repaired``):
    the model's text was not valid JSON as sent."""

    @property
    def tool_name(self) -> str:
        """The name of the tool to approve."""
        return self.tool.name


@dataclass(frozen=True, slots=True)
class Approval:
    """An approver's decision: build it with :meth:`allow`, :meth:`deny` or :meth:`edit`."""

    decision: Literal["allow", "deny", "edit"]
    reason: str | None = None
    """Why the call was denied; sent to the model."""
    arguments: dict[str, Any] | None = None
    """The replacement arguments of an edit (validated again before use)."""

    @classmethod
    def allow(cls) -> Approval:
        """Run the call as the model asked."""
        return cls("allow")

    @classmethod
    def deny(cls, reason: str = "the call was not approved") -> Approval:
        """Do not run the call; the model is told ``reason``."""
        return cls("deny", reason=reason)

    @classmethod
    def edit(cls, arguments: Mapping[str, Any]) -> Approval:
        """Run the call with these arguments instead."""
        return cls("edit", arguments=dict(arguments))


ApprovalCallback: TypeAlias = Callable[
    [ApprovalRequest], "Approval | bool | Awaitable[Approval | bool]"
]
"""Decides on a ``requires_approval`` call: sync or async, an :class:`Approval`
or a bool."""


async def ask_approval(
    approve: ApprovalCallback,
    request: ApprovalRequest,
    *,
    errors: Literal["deny", "raise"] = "deny",
) -> Approval:
    """Ask ``approve`` about ``request`` and make its answer an :class:`Approval`.

    ``True`` allows, ``False``/``None`` deny, an :class:`Approval` is kept; a
    callback that answers anything else denies the call (and is logged), so a
    broken approver never lets a call through. A callback that raises denies
    too, or with ``errors="raise"`` raises :class:`ApprovalFailed`.
    """
    try:
        decision: Any = approve(request)
        if inspect.isawaitable(decision):
            decision = await decision
    except Exception as exc:
        if errors == "raise":
            raise ApprovalFailed(
                f"the approval callback failed for tool {request.tool_name!r} call "
                f"{request.call_id}: {type(exc).__name__}"
            ) from exc
        logger.exception(
            "approval callback failed for tool %r call %s", request.tool_name, request.call_id
        )
        return Approval.deny("the approval step failed, so the call was not run")
    if decision is True:
        return Approval.allow()
    if decision is False or decision is None:
        return Approval.deny()
    if not isinstance(decision, Approval):
        logger.error(
            "approval callback returned %r, not an Approval; denying", type(decision).__name__
        )
        return Approval.deny("the approval step gave no decision, so the call was not run")
    return decision
