"""Observing a run: the seam for journals, traces and audit logs.

An :class:`~toolwire.Agent` calls each of its observers at the step
boundaries of a run, and *awaits* them: a journal can write an intent before
a tool runs and be sure it is on disk first (write-ahead), and an observer
that raises stops the run before the step it was told about. Observers see
normalized types only, never a provider's wire format, and never secrets
(settings carry no API key).

Subclass :class:`RunObserver` and override what you need; every method
defaults to doing nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolwire.errors import ToolwireError
from toolwire.types import InvalidToolCall, StreamResult, ToolCall

if TYPE_CHECKING:
    from toolwire.agent import RunResult
    from toolwire.messages import Message
    from toolwire.tools import Approval, ToolResult

__all__ = ["RunInfo", "RunObserver"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInfo:
    """What a run is: recorded when it starts."""

    run_id: str
    model: str
    provider: str
    """The provider's name (``openai``, ``anthropic``...)."""
    api: str
    """The wire dialect (``openai-chat``...)."""
    tools: tuple[str, ...]
    settings: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """max_turns, tool_choice, eager... (never a key or a header)."""
    messages: tuple[Message, ...] = ()
    """The conversation the run starts from."""
    resumed: bool = False
    """True when the run continues an interrupted one."""


class RunObserver:
    """Called at each step of a run; every method is a no-op by default."""

    async def run_started(self, info: RunInfo) -> None:
        """The run begins (or resumes)."""

    async def model_request(
        self, run_id: str, turn: int, attempt: int, messages: Sequence[Message]
    ) -> None:
        """A model request is about to be sent with this conversation."""

    async def model_response(
        self, run_id: str, turn: int, attempt: int, result: StreamResult, elapsed: float
    ) -> None:
        """The model's stream ended cleanly."""

    async def model_failed(
        self, run_id: str, turn: int, attempt: int, error: ToolwireError, elapsed: float
    ) -> None:
        """A model request or its stream failed (it may be sent again)."""

    async def tool_started(
        self,
        run_id: str,
        turn: int,
        call: ToolCall | InvalidToolCall,
        idempotency_key: str,
        *,
        eager: bool = False,
    ) -> None:
        """A tool call is about to run (the intent: written before any effect)."""

    async def approval_decided(
        self, run_id: str, turn: int | None, call_id: str, name: str, decision: Approval
    ) -> None:
        """An approver decided on a ``requires_approval`` call (before it may run)."""

    async def tool_finished(
        self,
        run_id: str,
        turn: int,
        call: ToolCall | InvalidToolCall,
        result: ToolResult,
        *,
        eager: bool = False,
    ) -> None:
        """A tool call finished (its outcome)."""

    async def tool_interrupted(
        self, run_id: str, turn: int, call: ToolCall | InvalidToolCall, result: ToolResult
    ) -> None:
        """A resumed run found this call started but without an outcome, and
        did not run it again (it is not safe to repeat): ``result`` tells the
        model so. By default, reported as :meth:`tool_finished`."""
        await self.tool_finished(run_id, turn, call, result)

    async def run_finished(self, run_id: str, result: RunResult) -> None:
        """The run ended with a result (answered, or the turn limit)."""

    async def run_failed(self, run_id: str, error: BaseException) -> None:
        """The run ended with an error, or was cancelled."""
