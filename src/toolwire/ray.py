"""Tool calls as Ray tasks: :class:`RayExecutor`, a :class:`~toolwire.tools.ToolRunner`.

Theory of operation
-------------------
A :class:`~toolwire.Toolbox` decides everything about a call: validation,
approval, de-duplication, the result budget, error categories, retries with
backoff, fallbacks and timeouts. A runner only decides *where the function
body runs*. ``Toolbox(tools, runner=RayExecutor())`` keeps all of that and
runs each attempt (and the fallback) as one Ray task:

1. The driver pickles ``(function, args, kwargs)`` with cloudpickle. If that
   fails the call fails at once with :class:`RayTaskFailed` (not retried):
   nothing was sent.
2. The task calls the function in a Ray worker (``asyncio`` for a coroutine
   function) and pickles what came of it: the return value, or the exception
   the tool raised with its traceback as text. A value or an exception that
   cannot be pickled becomes a clear :class:`RayTaskFailed` /
   :class:`RemoteToolError` instead of a crash.
3. The driver awaits the task's ``ObjectRef`` (``await ref`` on asyncio; a
   worker thread running ``ray.get`` on trio) and re-raises the tool's own
   exception, so ``ModelRetry``, retry classification (``retry_on``,
   ``status_code``, ``retry_after``) and the messages the model sees are the
   same as for a local call.
4. When the toolbox's timeout cancels the await, the task is cancelled with
   ``ray.cancel(ref, force=True)``, which kills the worker process running
   it: a timed-out tool really stops, sync or async (locally a sync tool's
   thread can only be abandoned). Ray starts a fresh worker for later tasks.

Ray's own task retries are off (``max_retries=0``): after a worker crash
Ray would run a side-effecting tool again without the toolbox knowing.
Lost workers and nodes are reported as a transient :class:`RayTaskFailed`,
so the toolbox retries them for the tools whose policy allows it.

Ray is imported on first use only: ``import toolwire.ray`` works without
it, and :class:`RayExecutor` raises :class:`~toolwire.UsageError` with the
install command when it is missing (``pip install 'toolwire[ray]'``).

Pointing it at a real cluster
-----------------------------
``RayExecutor`` joins the Ray instance the process is already connected to
(after your own ``ray.init(...)``); otherwise its first call (or
:meth:`RayExecutor.connect`) runs ``ray.init(address=address,
**init_options)``. With ``address=None`` Ray reads ``RAY_ADDRESS``, and
without that starts a local instance. For a cluster:

- ``RayExecutor(address="ray://head-node:10001")`` (Ray Client) or
  ``address="auto"`` on a node of the cluster, or set ``RAY_ADDRESS``.
- Every worker node needs toolwire and the modules your tools live in:
  install them in the cluster's image, or ship them with
  ``init_options={"runtime_env": {"pip": ["toolwire"], "py_modules": [...]}}``.
  Functions are pickled by reference when their module is importable on
  the workers, by value otherwise (closures, ``__main__``).
- Tool functions, their arguments, the :class:`~toolwire.tools.ToolContext`
  metadata and their results must be picklable with cloudpickle. Return
  plain data; an open connection or a lock cannot travel back.
- ``options`` are Ray task options for every call (``num_cpus``,
  ``resources``, ``runtime_env``, ``scheduling_strategy``...);
  ``tool_options`` override them per tool name (``{"render": {"num_gpus":
  1}}``).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import traceback
from collections.abc import Mapping
from typing import Any

import anyio
import anyio.to_thread

from toolwire.errors import (
    RayTaskFailed,
    RemoteToolError,
    UsageError,
)
from toolwire.tools import ToolInvocation, is_transient, scrub
from toolwire.tools.runners import call_function, plain_context

__all__ = ["RayExecutor", "RayTaskFailed", "RemoteToolError", "await_ref", "import_ray"]

logger = logging.getLogger("toolwire.ray")

_INSTALL_HINT = "Ray is not installed: pip install 'toolwire[ray]'"

# Ray exceptions after which the same call may well succeed on another worker.
_TRANSIENT_RAY_ERRORS = (
    "WorkerCrashedError",
    "NodeDiedError",
    "LocalRayletDiedError",
    "ObjectLostError",
    "OwnerDiedError",
    "OutOfMemoryError",
    "ObjectFetchTimedOutError",
)


class _RemoteTraceback(Exception):
    """The traceback of an exception raised in a Ray worker, as text; set as
    the ``__cause__`` of the re-raised exception so logs show where it came
    from (the way :mod:`concurrent.futures` does for process pools)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f"\n\n(in the Ray worker)\n{self.text}"


def import_ray() -> Any:
    """The ``ray`` module, imported on first use.

    Raises:
        UsageError: Ray is not installed.
    """
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise UsageError(_INSTALL_HINT) from exc


def _cloudpickle() -> Any:
    return importlib.import_module("ray.cloudpickle")


def _asyncio_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def await_ref(ref: Any, *, force_cancel: bool = True) -> Any:
    """Await a Ray ``ObjectRef`` from asyncio or trio; cancel its task if the
    awaiting is cancelled.

    Args:
        ref: the ``ObjectRef`` of a task.
        force_cancel: kill the worker running the task on cancellation
            (``ray.cancel(ref, force=True)``); ``False`` raises
            ``KeyboardInterrupt`` in the task instead, which it may catch.

    Raises:
        ray.exceptions.RayError: the task failed in Ray.
    """
    ray = import_ray()
    try:
        if _asyncio_running():
            return await ref
        # trio: no native await for ObjectRef; a worker thread waits instead,
        # abandoned on cancellation (it ends when the cancelled task does).
        return await anyio.to_thread.run_sync(ray.get, ref, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        try:
            ray.cancel(ref, force=force_cancel)
        except Exception:  # the task may be gone already; the caller is leaving anyway
            logger.debug("ray.cancel failed", exc_info=True)
        raise


# -- the worker side ---------------------------------------------------------------


def _portable_exception(exc: Exception) -> Exception:
    """``exc`` if it survives a pickle round trip, else a stand-in."""
    pickle = _cloudpickle()
    try:
        restored = pickle.loads(pickle.dumps(exc))
    except Exception:  # many exception classes cannot be rebuilt from their args
        restored = None
    if type(restored) is type(exc):
        return exc
    retry_after = getattr(exc, "retry_after", None)
    return RemoteToolError.standing_for(
        scrub(str(exc), limit=1000),
        type(exc).__name__,
        is_transient(exc),
        float(retry_after) if isinstance(retry_after, (int, float)) else None,
    )


def _execute(blob: bytes) -> bytes:
    """Run one tool call in a Ray worker; always returns a pickled outcome."""
    pickle = _cloudpickle()
    try:
        function, args, kwargs, is_async = pickle.loads(blob)
        value = call_function(function, args, kwargs, is_async)
    except Exception as exc:
        error = _portable_exception(exc)
        return bytes(pickle.dumps(("error", error, traceback.format_exc())))
    try:
        return bytes(pickle.dumps(("ok", value, None)))
    except Exception as exc:
        failure = RayTaskFailed(
            f"the tool returned a {type(value).__name__} that cannot be pickled back from "
            f"its Ray worker ({type(exc).__name__}: {scrub(str(exc), limit=160)}); tools run "
            "on Ray must return plain data"
        )
        return bytes(pickle.dumps(("error", failure, None)))


_REMOTE: dict[str, Any] = {}


def _remote_execute(ray: Any) -> Any:
    remote = _REMOTE.get("execute")
    if remote is None:
        remote = _REMOTE["execute"] = ray.remote(_execute)
    return remote


# -- the driver side -----------------------------------------------------------------


class RayExecutor:
    """Runs tool calls as Ray tasks with the toolbox's usual semantics.

    Use it as a toolbox's runner: ``Toolbox(tools, runner=RayExecutor())``
    (or ``Agent(provider, tools=Toolbox(..., runner=...))``). See the module
    docstring for what travels, what does not, and how to reach a cluster.

    Args:
        address: the cluster to join when Ray is not initialised yet
            (``"auto"``, ``"ray://host:10001"``...; ``None`` reads
            ``RAY_ADDRESS`` or starts a local instance).
        options: Ray task options for every call (``num_cpus``,
            ``resources``, ``runtime_env``...).
        tool_options: task options per tool name, over ``options``.
        init_options: more ``ray.init`` arguments, used by :meth:`connect`.
        force_cancel: on timeout, kill the worker running the call (the
            default). ``False`` interrupts it with ``KeyboardInterrupt``,
            which a tool may catch and ignore.

    Raises:
        UsageError: Ray is not installed.
    """

    def __init__(
        self,
        *,
        address: str | None = None,
        options: Mapping[str, Any] | None = None,
        tool_options: Mapping[str, Mapping[str, Any]] | None = None,
        init_options: Mapping[str, Any] | None = None,
        force_cancel: bool = True,
    ) -> None:
        self._ray = import_ray()
        self.address = address
        self.options = dict(options or {})
        self.tool_options = {name: dict(opts) for name, opts in (tool_options or {}).items()}
        self.init_options = dict(init_options or {})
        self.force_cancel = force_cancel

    def __repr__(self) -> str:
        return f"RayExecutor(address={self.address!r}, options={self.options!r})"

    def connect(self) -> RayExecutor:
        """Initialise Ray now if it is not yet (blocks while Ray starts).

        Call it at start-up: otherwise the first tool call does it, and the
        event loop waits the few seconds a local Ray instance takes to start.
        """
        if not self._ray.is_initialized():
            self._ray.init(address=self.address, **self.init_options)
        return self

    def can_stop(self, invocation: ToolInvocation) -> bool:
        """A cancelled task's worker is killed (``force_cancel``): the work stops."""
        return self.force_cancel or invocation.is_async

    def task_options(self, tool_name: str) -> dict[str, Any]:
        """The Ray task options a call of ``tool_name`` is submitted with."""
        return {
            # The toolbox owns retries (see the module docstring).
            "max_retries": 0,
            "name": f"toolwire:{tool_name}",
            **self.options,
            **self.tool_options.get(tool_name, {}),
        }

    async def run(self, invocation: ToolInvocation) -> Any:
        """Run one attempt as a Ray task and return the function's value.

        Raises:
            RayTaskFailed: the call could not be sent, run or brought back.
            Exception: whatever the tool raised, as it raised it.
        """
        self.connect()
        blob = self._pack(invocation)
        name = invocation.tool.name
        remote = _remote_execute(self._ray).options(**self.task_options(name))
        ref = remote.remote(blob)
        try:
            packed = await await_ref(ref, force_cancel=self.force_cancel)
        except self._ray.exceptions.RayError as exc:
            raise self._task_failed(name, exc) from exc
        return self._unpack(name, packed)

    def _pack(self, invocation: ToolInvocation) -> bytes:
        kwargs = plain_context(invocation.kwargs)
        payload = (invocation.function, invocation.args, kwargs, invocation.is_async)
        try:
            return bytes(_cloudpickle().dumps(payload))
        except Exception as exc:
            # The model is told; the toolbox logs the failure (see toolwire.tools.log).
            logger.debug("tool %r cannot be pickled for Ray", invocation.tool.name, exc_info=exc)
            raise RayTaskFailed(
                f"the tool {invocation.tool.name!r} cannot be sent to a Ray worker: its "
                f"function, arguments or context metadata cannot be pickled "
                f"({type(exc).__name__}: {scrub(str(exc), limit=160)})"
            ) from exc

    def _unpack(self, name: str, packed: Any) -> Any:
        try:
            kind, value, remote_traceback = _cloudpickle().loads(packed)
        except Exception as exc:
            raise RayTaskFailed(
                f"the outcome of tool {name!r} could not be read back from its Ray worker "
                f"({type(exc).__name__}: {scrub(str(exc), limit=160)})"
            ) from exc
        if kind == "ok":
            return value
        assert isinstance(value, BaseException)
        if remote_traceback:
            value.__cause__ = _RemoteTraceback(remote_traceback)
        raise value

    def _task_failed(self, name: str, exc: BaseException) -> RayTaskFailed:
        kind = type(exc).__name__
        transient = any(
            isinstance(exc, cls)
            for cls in (getattr(self._ray.exceptions, n, None) for n in _TRANSIENT_RAY_ERRORS)
            if isinstance(cls, type)
        )
        logger.debug("Ray could not run tool %r", name, exc_info=exc)
        # The first line only: a RayTaskError's text carries the worker's
        # whole traceback and sys.path.
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return RayTaskFailed(
            f"Ray could not run the tool {name!r} ({kind}: {scrub(first, limit=160)})",
            transient=transient,
        )
