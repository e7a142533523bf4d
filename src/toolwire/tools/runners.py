"""Where a tool function runs: the :class:`ToolRunner` seam and the local runner.

The toolbox decides everything about a call (validation, approval, the
attempt, its deadline); a runner only calls the function somewhere and hands
back what it returned. :class:`LocalRunner` runs it in this process;
:class:`~toolwire.tools.ProcessRunner` in a child process it can kill;
``toolwire.ray.RayExecutor`` as a Ray task.

What a timeout can stop depends on the runner. An async function is
cancelled at its next ``await``. A sync function in a thread cannot be
stopped (CPython has no way to kill a thread): the toolbox reports the call as
timed out at the deadline and does not retry it, but the thread runs on, and
a function that holds the GIL (a long computation in C) slows the whole
process until it ends. A process can be killed: CPU-bound tools belong in a
:class:`~toolwire.tools.ProcessRunner`. A runner says which it is with an
optional ``can_stop(invocation)`` method (see :func:`can_stop`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio
import anyio.to_thread

from toolwire.tools._context import ToolContext

if TYPE_CHECKING:
    from toolwire.tools._tool import Tool

__all__ = [
    "LocalRunner",
    "ToolInvocation",
    "ToolRunner",
    "call_function",
    "can_stop",
    "plain_context",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInvocation:
    """One run of a tool function (an attempt, or the fallback), ready to go.

    The toolbox has already validated the arguments, asked for approval and
    chosen the attempt; a :class:`ToolRunner` only has to call
    ``function(*args, **kwargs)`` somewhere and hand back what it returned.
    """

    tool: Tool
    """The tool being called (for its name and options; not sent anywhere)."""
    function: Callable[..., Any]
    """The tool's function, or its fallback."""
    args: tuple[Any, ...]
    """Validated positional-only arguments."""
    kwargs: dict[str, Any]
    """Validated keyword arguments, the :class:`ToolContext` included when the
    function declares one."""
    is_async: bool
    """Whether ``function`` is a coroutine function."""
    context: ToolContext
    """The call's context (also in ``kwargs`` if the function takes it)."""
    fallback: bool = False
    """True when ``function`` is the tool's fallback."""


@runtime_checkable
class ToolRunner(Protocol):
    """Where tool functions run: the one seam between a :class:`Toolbox` and
    the place the work happens.

    ``run`` is awaited inside the toolbox's timeout: when the deadline passes
    it is cancelled, and a runner must stop (or abandon) the work it started.
    Whatever it raises is what the tool raised, and is classified, retried
    and reported by the toolbox as for a local call.
    """

    async def run(self, invocation: ToolInvocation) -> Any:
        """Run ``invocation`` and return the function's return value."""
        ...


class LocalRunner:
    """Runs tools in this process: async functions are awaited on the event
    loop, sync functions run in a worker thread so the loop keeps serving the
    other calls. On timeout a sync function's thread is abandoned (a thread
    cannot be killed); its late result is never used."""

    async def run(self, invocation: ToolInvocation) -> Any:
        """Call the function here; see the class docstring."""
        function, args, kwargs = invocation.function, invocation.args, invocation.kwargs
        if invocation.is_async:
            value = await function(*args, **kwargs)
        else:
            value = await anyio.to_thread.run_sync(
                functools.partial(function, *args, **kwargs), abandon_on_cancel=True
            )
        if inspect.isawaitable(value):  # a sync callable that returned a coroutine
            value = await value
        return value

    def can_stop(self, invocation: ToolInvocation) -> bool:
        """An async function is cancelled; a sync function's thread is not."""
        return invocation.is_async

    def __repr__(self) -> str:
        return "LocalRunner()"


def can_stop(runner: ToolRunner, invocation: ToolInvocation) -> bool:
    """Whether cancelling ``runner.run(invocation)`` stops the function's work.

    A runner answers through an optional ``can_stop(invocation)`` method;
    without one, an async function is taken to stop and a sync one not.
    """
    method = getattr(runner, "can_stop", None)
    if callable(method):
        try:
            return bool(method(invocation))
        except Exception:
            return False
    return invocation.is_async


def call_function(
    function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], is_async: bool
) -> Any:
    """Call a tool function where no event loop runs (a worker process):
    a coroutine function, or a sync one that returns an awaitable, is run to
    its end on a loop of its own."""
    if is_async:
        return anyio.run(functools.partial(function, *args, **kwargs))
    value = function(*args, **kwargs)
    if inspect.isawaitable(value):

        async def wait() -> Any:
            return await value

        return anyio.run(wait)
    return value


def plain_context(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with any :class:`ToolContext`'s metadata as a plain dict (the
    toolbox hands a read-only mapping proxy, which cannot be pickled)."""
    return {
        key: replace(value, metadata=dict(value.metadata))
        if isinstance(value, ToolContext)
        else value
        for key, value in kwargs.items()
    }
