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

Hooks are bound by name, so an observer is checked against
:class:`RunObserver`, the one declaration of the hooks, when it is given to
an agent (:func:`check_observers`, as pluggy checks a plugin when it is
registered): a public method that looks like a hook but is none
(``tool_strated``, ``on_tool_start``) is a
:class:`~toolwire.errors.RegistrationError` naming the closest hook, and so
is a hook that is not ``async`` or cannot take the arguments it is called with.
"""

from __future__ import annotations

import difflib
import inspect
import weakref
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from toolwire.errors import RegistrationError, ToolwireError
from toolwire.run import RunInfo, RunResult, TurnSteered
from toolwire.types import InvalidToolCall, StreamResult, ToolCall, Usage

if TYPE_CHECKING:
    from typing import Concatenate, Generic, ParamSpec

    from toolwire.cost import Cost
    from toolwire.messages import Message
    from toolwire.providers import ProviderAttempt
    from toolwire.tools import (
        Approval,
        Question,
        QuestionAnswer,
        Sample,
        ToolResult,
        ToolsChange,
    )

__all__ = ["HOOKS", "Observers", "RunInfo", "RunObserver", "check_observers"]


class RunObserver(Protocol):
    """Called at each step of a run; every method is a no-op by default."""

    async def run_started(self, info: RunInfo) -> None:
        """The run begins (or resumes)."""

    async def tools_changed(self, run_id: str, turn: int, change: ToolsChange) -> None:
        """A source of the run's tools (an MCP server) changed its tool list,
        and the toolbox took it in before this turn's request."""

    async def turn_steered(self, run_id: str, turn: int, steered: TurnSteered) -> None:
        """Steering input took effect: the turn's response ended ``steered``,
        and a successor request continues the turn (told before it is sent)."""

    async def model_request(
        self, run_id: str, turn: int, attempt: int, messages: Sequence[Message]
    ) -> None:
        """A model request is about to be sent with this conversation."""

    async def model_streaming(self, run_id: str, turn: int, attempt: int, response_id: str) -> None:
        """The provider keeps the response being streamed under ``response_id``
        and can stream it again (a Responses background response): told once
        per request, as soon as the id is known, so that a run resumed after
        a crash reads the turn again instead of asking for it again."""

    async def model_attempt(
        self, run_id: str, turn: int, attempt: int, tried: ProviderAttempt
    ) -> None:
        """A provider of a fallback chain (:class:`~toolwire.providers.Fallback`)
        was tried for this request: one that failed (``tried.error``) and the
        chain went on, or the last one tried (``error`` ``None``: it
        answered). Told for each, in order, once the request's stream ended,
        before :meth:`model_response` or :meth:`model_failed`."""

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

    async def model_sampled(self, run_id: str, turn: int, call_id: str, sample: Sample) -> None:
        """A running tool (an MCP server's, by sampling) asked the run's model
        for a completion: served and counted in the run's usage, or refused
        (``sample.error``). Told once it is answered, before the tool goes on."""

    async def question_answered(
        self,
        run_id: str,
        turn: int,
        call_id: str,
        name: str,
        question: Question,
        answer: QuestionAnswer,
    ) -> None:
        """A running tool's question (an MCP server's elicitation) was
        answered in process (the connection's callback): the answer, so that
        the call made again on resume gets it without asking again."""

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


HOOKS: tuple[str, ...] = tuple(
    name for name, value in vars(RunObserver).items() if inspect.iscoroutinefunction(value)
)
"""The hooks: the ``async`` methods of :class:`RunObserver`, in the order a
run may call them. :class:`RunObserver` is the one declaration of each hook's
name, signature and meaning; the binding, the checks and the docs read it."""

Hook = Callable[..., Awaitable[None]]
"""A bound hook, as :func:`_bind` finds it (by name, on any object)."""

if TYPE_CHECKING:
    _P = ParamSpec("_P")

    class _Bound(Generic[_P]):
        """For type checkers: a slot of :class:`Observers`, the bound hooks of
        the :class:`RunObserver` method it is made with (its signature less ``self``)."""

        def __init__(self, spec: Callable[Concatenate[Any, _P], Awaitable[None]]) -> None: ...

        def __get__(
            self, obj: object, owner: object = None
        ) -> tuple[Callable[_P, Awaitable[None]], ...]: ...


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


# -- checking an observer against the hooks ---------------------------------------------

_CHECKED: weakref.WeakSet[type] = weakref.WeakSet()
"""The observer classes found sound (hooks are bound from the class)."""


def check_observers(observers: Sequence[object]) -> None:
    """Check each observer against :class:`RunObserver`, the hooks' one declaration.

    Raises:
        RegistrationError: an observer has a public method that looks like a
            hook but is none (its name is close to a hook's, or starts with
            ``on_``), or a hook that is not ``async`` or cannot take the
            arguments a run calls it with; the message names the observer,
            the method and the closest hook.
    """
    for observer in observers:
        cls = type(observer)
        if cls in _CHECKED:
            continue
        problems = list(_problems(observer))
        if problems:
            raise RegistrationError(
                f"observer {cls.__qualname__} cannot be used: " + "; ".join(problems)
            )
        _CHECKED.add(cls)


def _problems(observer: object) -> Iterator[str]:
    cls = type(observer)
    for name in dir(cls):
        if name.startswith("_") or not callable(inspect.getattr_static(cls, name)):
            continue
        if name in HOOKS:
            if getattr(cls, name) is not getattr(RunObserver, name):
                yield from _signature_problems(name, getattr(observer, name))
            continue
        close = difflib.get_close_matches(name.removeprefix("on_"), HOOKS, n=1, cutoff=0.8)
        if close:
            yield f"{name} is not a hook: did you mean {close[0]}?"
        elif name.startswith("on_"):
            yield f"{name} is not a hook (the hooks: {', '.join(HOOKS)})"


def _signature_problems(name: str, method: Any) -> Iterator[str]:
    spec = inspect.signature(getattr(RunObserver, name))
    params = list(spec.parameters.values())[1:]
    positional = [p for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    keywords = {p.name: None for p in params if p.kind is p.KEYWORD_ONLY}
    called = f"{name}{_shape(params)}"
    if not (
        inspect.iscoroutinefunction(method)
        or inspect.iscoroutinefunction(getattr(method, "__call__", None))  # noqa: B004
    ):
        yield f"{name} must be async (async def {called})"
        return
    try:
        signature = inspect.signature(method)
    except (TypeError, ValueError):
        return  # nothing to read: it is called as it is
    args = [None] * len(positional)
    for shape in ({}, keywords):
        try:
            signature.bind(*args, **shape)
        except TypeError:
            takes = _shape(list(signature.parameters.values()))
            yield f"{name}{takes} cannot be called as {called}"
            return


def _shape(params: Sequence[inspect.Parameter]) -> str:
    """``(a, b, *, c=...)``: parameters by name, without their types."""
    shown, star = [], False
    for p in params:
        if p.kind is p.KEYWORD_ONLY and not star:
            shown.append("*")
            star = True
        prefix = "*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else ""
        star = star or p.kind is p.VAR_POSITIONAL
        default = "=..." if p.default is not p.empty else ""
        shown.append(f"{prefix}{p.name}{default}")
    return f"({', '.join(shown)})"


class Observers:
    """A run's observers, each hook bound to those that implement it, in order.

    ``observers.tool_started`` is a tuple of bound methods: the agent awaits
    each in turn, and skips the whole step (building its arguments included)
    when it is empty.
    """

    __slots__ = HOOKS

    if TYPE_CHECKING:  # each typed from the RunObserver method of its name
        run_started = _Bound(RunObserver.run_started)
        tools_changed = _Bound(RunObserver.tools_changed)
        turn_steered = _Bound(RunObserver.turn_steered)
        model_request = _Bound(RunObserver.model_request)
        model_streaming = _Bound(RunObserver.model_streaming)
        model_attempt = _Bound(RunObserver.model_attempt)
        model_usage = _Bound(RunObserver.model_usage)
        model_response = _Bound(RunObserver.model_response)
        model_failed = _Bound(RunObserver.model_failed)
        tool_started = _Bound(RunObserver.tool_started)
        tools_started = _Bound(RunObserver.tools_started)
        approval_decided = _Bound(RunObserver.approval_decided)
        model_sampled = _Bound(RunObserver.model_sampled)
        question_answered = _Bound(RunObserver.question_answered)
        tool_finished = _Bound(RunObserver.tool_finished)
        tool_interrupted = _Bound(RunObserver.tool_interrupted)
        run_finished = _Bound(RunObserver.run_finished)
        run_failed = _Bound(RunObserver.run_failed)

    def __init__(self, observers: Sequence[RunObserver | Any]) -> None:
        """Bind every hook to the observers that implement it (each checked
        first: :func:`check_observers`)."""
        check_observers(observers)
        for hook in HOOKS:
            bound = tuple(_bind(o, hook) for o in observers if _binds(o, hook))
            setattr(self, hook, bound)
