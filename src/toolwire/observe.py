"""Observing a run: the seam for journals, traces and audit logs.

An :class:`~toolwire.Agent` calls each of its observers at the step
boundaries of a run, and *awaits* them: a journal can write an intent before
a tool runs and be sure it is on disk first (write-ahead), and an observer
that raises stops the run before the step it was told about. Observers see
normalized types only, never a provider's wire format, and never secrets
(settings carry no API key).

:class:`RunObserver` is a typed protocol: implement its methods, or subclass
it and override only what you need (every method defaults to doing nothing).
The agent calls the methods directly, through :class:`Observers`, which binds
each hook once per run to the observers that implement it: a hook nobody
overrides costs nothing on the hot path.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from toolwire.errors import ToolwireError
from toolwire.run import RunInfo, RunResult
from toolwire.types import InvalidToolCall, StreamResult, ToolCall, Usage

if TYPE_CHECKING:
    from toolwire.cost import Cost
    from toolwire.messages import Message
    from toolwire.tools import Approval, ToolResult

__all__ = ["HOOKS", "Observers", "RunInfo", "RunObserver"]


class RunObserver(Protocol):
    """Called at each step of a run; every method is a no-op by default."""

    async def run_started(self, info: RunInfo) -> None:
        """The run begins (or resumes)."""

    async def model_request(
        self, run_id: str, turn: int, attempt: int, messages: Sequence[Message]
    ) -> None:
        """A model request is about to be sent with this conversation."""

    async def model_streaming(self, run_id: str, turn: int, attempt: int, response_id: str) -> None:
        """The provider keeps the response being streamed under ``response_id``
        and can stream it again (a Responses background response): told once
        per request, as soon as the id is known, so that a run resumed after
        a crash reads the turn again instead of asking for it again."""

    async def model_usage(
        self, run_id: str, turn: int, attempt: int, usage: Usage | None, cost: Cost | None
    ) -> None:
        """What a model request used and cost (``None`` when unknown): told
        just before :meth:`model_response`, or before :meth:`model_failed` for
        a request a usage limit cut (its usage is then what the stream had
        revealed)."""

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

    async def tools_started(
        self,
        run_id: str,
        turn: int,
        calls: Sequence[tuple[ToolCall | InvalidToolCall, str]],
        *,
        eager: bool = False,
    ) -> None:
        """A batch of tool calls is about to run, each with its idempotency key:
        their intents, told before any of them runs (a journal writes them
        together). By default, reported as :meth:`tool_started` for each call,
        in order."""
        for call, idempotency_key in calls:
            await self.tool_started(run_id, turn, call, idempotency_key, eager=eager)

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


HOOKS = (
    "run_started",
    "model_request",
    "model_streaming",
    "model_usage",
    "model_response",
    "model_failed",
    "tool_started",
    "tools_started",
    "approval_decided",
    "tool_finished",
    "tool_interrupted",
    "run_finished",
    "run_failed",
)
"""The methods of :class:`RunObserver`, in the order a run may call them."""

# -- the bound hooks, typed ------------------------------------------------------------
# Each is the signature of the RunObserver method of the same name, bound to
# its observer (positional parameters only: an observer may name them as it likes).

AnyCall = ToolCall | InvalidToolCall


class RunStartedHook(Protocol):
    def __call__(self, info: RunInfo, /) -> Awaitable[None]: ...


class ModelRequestHook(Protocol):
    def __call__(
        self, run_id: str, turn: int, attempt: int, messages: Sequence[Message], /
    ) -> Awaitable[None]: ...


class ModelStreamingHook(Protocol):
    def __call__(
        self, run_id: str, turn: int, attempt: int, response_id: str, /
    ) -> Awaitable[None]: ...


class ModelUsageHook(Protocol):
    def __call__(
        self, run_id: str, turn: int, attempt: int, usage: Usage | None, cost: Cost | None, /
    ) -> Awaitable[None]: ...


class ModelResponseHook(Protocol):
    def __call__(
        self, run_id: str, turn: int, attempt: int, result: StreamResult, elapsed: float, /
    ) -> Awaitable[None]: ...


class ModelFailedHook(Protocol):
    def __call__(
        self, run_id: str, turn: int, attempt: int, error: ToolwireError, elapsed: float, /
    ) -> Awaitable[None]: ...


class ToolStartedHook(Protocol):
    def __call__(
        self, run_id: str, turn: int, call: AnyCall, idempotency_key: str, /, *, eager: bool = ...
    ) -> Awaitable[None]: ...


class ToolsStartedHook(Protocol):
    def __call__(
        self,
        run_id: str,
        turn: int,
        calls: Sequence[tuple[AnyCall, str]],
        /,
        *,
        eager: bool = ...,
    ) -> Awaitable[None]: ...


class ApprovalDecidedHook(Protocol):
    def __call__(
        self, run_id: str, turn: int | None, call_id: str, name: str, decision: Approval, /
    ) -> Awaitable[None]: ...


class ToolFinishedHook(Protocol):
    def __call__(
        self, run_id: str, turn: int, call: AnyCall, result: ToolResult, /, *, eager: bool = ...
    ) -> Awaitable[None]: ...


class ToolInterruptedHook(Protocol):
    def __call__(
        self, run_id: str, turn: int, call: AnyCall, result: ToolResult, /
    ) -> Awaitable[None]: ...


class RunFinishedHook(Protocol):
    def __call__(self, run_id: str, result: RunResult, /) -> Awaitable[None]: ...


class RunFailedHook(Protocol):
    def __call__(self, run_id: str, error: BaseException, /) -> Awaitable[None]: ...


Hook = Callable[..., Awaitable[None]]
"""Any of the above, as :func:`_bind` finds it (by name, on any object)."""


_FORWARDS = {"tool_interrupted": "tool_finished", "tools_started": "tool_started"}
"""The hooks whose default reports to another hook."""


def _implements(observer: object, hook: str) -> bool:
    """Whether ``observer`` does something in ``hook`` (not the protocol's no-op)."""
    method = getattr(type(observer), hook, None)
    if method is None:
        return False
    if method is getattr(RunObserver, hook):
        forward = _FORWARDS.get(hook)
        return forward is not None and _implements(observer, forward)
    return True


def _binds(observer: object, hook: str) -> bool:
    """Whether ``observer`` is told of ``hook``: it implements it, or it is
    ``tools_started`` and the observer (not a :class:`RunObserver`) defines
    only ``tool_started``."""
    if _implements(observer, hook):
        return True
    return (
        hook == "tools_started"
        and getattr(type(observer), hook, None) is None
        and _implements(observer, "tool_started")
    )


def _bind(observer: Any, hook: str) -> Hook:
    """``observer``'s ``hook``; for an observer that does not define
    ``tools_started`` at all, its ``tool_started`` called for each call."""
    if hook == "tools_started" and getattr(type(observer), hook, None) is None:
        started = observer.tool_started

        async def each(
            run_id: str,
            turn: int,
            calls: Sequence[tuple[ToolCall | InvalidToolCall, str]],
            *,
            eager: bool = False,
        ) -> None:
            for call, key in calls:
                await started(run_id, turn, call, key, eager=eager)

        return each
    method: Hook = getattr(observer, hook)
    return method


class Observers:
    """A run's observers, each hook bound to those that implement it, in order.

    ``observers.tool_started`` is a tuple of bound methods: the agent awaits
    each in turn, and skips the whole step (building its arguments included)
    when it is empty.
    """

    __slots__ = HOOKS

    run_started: tuple[RunStartedHook, ...]
    model_request: tuple[ModelRequestHook, ...]
    model_streaming: tuple[ModelStreamingHook, ...]
    model_usage: tuple[ModelUsageHook, ...]
    model_response: tuple[ModelResponseHook, ...]
    model_failed: tuple[ModelFailedHook, ...]
    tool_started: tuple[ToolStartedHook, ...]
    tools_started: tuple[ToolsStartedHook, ...]
    approval_decided: tuple[ApprovalDecidedHook, ...]
    tool_finished: tuple[ToolFinishedHook, ...]
    tool_interrupted: tuple[ToolInterruptedHook, ...]
    run_finished: tuple[RunFinishedHook, ...]
    run_failed: tuple[RunFailedHook, ...]

    def __init__(self, observers: Sequence[RunObserver | Any]) -> None:
        """Bind every hook to the observers that implement it."""
        for hook in HOOKS:
            bound = tuple(_bind(o, hook) for o in observers if _binds(o, hook))
            setattr(self, hook, bound)
