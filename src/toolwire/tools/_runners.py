"""Where a tool function runs: the :class:`ToolRunner` seam and the local runner.

The toolbox decides everything about a call (validation, approval, the
attempt, its deadline); a runner only calls the function somewhere and hands
back what it returned. :class:`LocalRunner` runs it in this process;
``toolwire.ray.RayExecutor`` runs it as a Ray task.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import anyio
import anyio.to_thread

from toolwire.tools._context import ToolContext

if TYPE_CHECKING:
    from toolwire.tools._tool import Tool

__all__ = ["LocalRunner", "ToolInvocation", "ToolRunner"]


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

    def __repr__(self) -> str:
        return "LocalRunner()"
