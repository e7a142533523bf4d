"""Tools in a child process: :class:`ProcessRunner`, for CPU-bound work a
timeout must really stop.

Theory of operation: each run starts ``python -m toolwire.tools._process``
and sends it, on its stdin, one pickled message: the parent's ``sys.path``
and then the function (by module and qualified name when it lives at a
module's top level, which is how a ``@tool`` function is found again: the
name then holds the :class:`~toolwire.tools.Tool`, whose function is taken),
its arguments and whether it is a coroutine function. The child calls it and
writes one pickled outcome on its stdout (the value, or the exception the tool
raised), then exits; what the tool itself prints goes to the child's stderr.
When the toolbox's deadline cancels the run, the child is killed: the work
stops, whatever it was doing, and the event loop never waited on it.

A fresh process per run costs a Python start-up and the imports of the tool's
module (a few hundred milliseconds): use it for the tools whose work is worth
that, not for quick ones. Arguments and results must pickle; the outcome is
bounded (``max_output_bytes``).
"""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import subprocess
import sys
from typing import Any

import anyio
import anyio.abc

from toolwire.errors import ToolFailed, UsageError
from toolwire.tools._call import is_transient
from toolwire.tools.redaction import scrub
from toolwire.tools.runners import ToolInvocation, call_function, plain_context

__all__ = ["ProcessRunner"]

_MODULE = "toolwire.tools._process"
_STDERR_TAIL = 2_000


class ProcessRunner:
    """Runs each tool call in a child Python process, killed at the deadline.

    ``Toolbox(tools, runner=ProcessRunner())`` keeps every toolbox behaviour
    (validation, approval, retries, fallbacks, budgets) and changes only where
    the function body runs. Tools must be importable functions (defined at the
    top level of a module other than ``__main__``) or picklable callables.

    Args:
        max_output_bytes: the largest pickled outcome read back from a child.
        python: the interpreter to start (default: this one).
    """

    def __init__(self, *, max_output_bytes: int = 64 * 1024 * 1024, python: str | None = None):
        if max_output_bytes < 1:
            raise UsageError("max_output_bytes must be >= 1")
        self.max_output_bytes = max_output_bytes
        self.python = python or sys.executable

    def __repr__(self) -> str:
        return f"ProcessRunner(max_output_bytes={self.max_output_bytes})"

    def can_stop(self, invocation: ToolInvocation) -> bool:
        """The child is killed at the deadline: the work always stops."""
        return True

    async def run(self, invocation: ToolInvocation) -> Any:
        """Run ``invocation`` in a new child process and return its value.

        Raises:
            ToolFailed: the call could not be sent, the child died without an
                outcome, or the outcome was too large or unreadable.
            Exception: whatever the tool raised, as it raised it.
        """
        name = invocation.tool.name
        message = _pack(invocation)
        process = await anyio.open_process(
            [self.python, "-m", _MODULE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_child_env(),
            start_new_session=True,  # its own process group: its children die with it
        )
        try:
            output, errors = await self._exchange(process, message)
            code = await process.wait()
        except BaseException:
            # Cancelled at the deadline, or failed: the child and everything
            # it started go (a grandchild would otherwise run on).
            _kill_group(process)
            with anyio.CancelScope(shield=True):
                await process.wait()
            raise
        finally:
            if process.returncode is None:
                _kill_group(process)
            with anyio.CancelScope(shield=True):
                await process.aclose()  # its pipes too, read to the end or not
        return _unpack(name, output, errors, code)

    async def _exchange(self, process: anyio.abc.Process, message: bytes) -> tuple[bytes, bytes]:
        output = bytearray()
        errors = bytearray()
        too_large = False

        async def send() -> None:
            assert process.stdin is not None
            async with process.stdin:
                await process.stdin.send(message)

        async def read_output() -> None:
            nonlocal too_large
            assert process.stdout is not None
            async for piece in process.stdout:
                output.extend(piece)
                if len(output) > self.max_output_bytes:
                    # Stop everything, then say why outside the task group
                    # (an error inside it would reach the model as a group).
                    too_large = True
                    output.clear()
                    tg.cancel_scope.cancel()
                    return

        async def read_errors() -> None:
            assert process.stderr is not None
            async for piece in process.stderr:
                errors.extend(piece)
                del errors[:-_STDERR_TAIL]

        async with anyio.create_task_group() as tg:
            tg.start_soon(send)
            tg.start_soon(read_errors)
            await read_output()
        if too_large:
            raise ToolFailed(
                f"the outcome of the tool is larger than {self.max_output_bytes} bytes"
            )
        return bytes(output), bytes(errors)


def _kill_group(process: anyio.abc.Process) -> None:
    """Kill the child's process group (the child leads it), or the child alone."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        if process.returncode is None:
            process.kill()


def _child_env() -> dict[str, str]:
    # The child must import this toolwire, wherever it was imported from.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def _reference(function: Any) -> tuple[str, Any]:
    module = getattr(function, "__module__", None)
    qualname = getattr(function, "__qualname__", None)
    if (
        isinstance(module, str)
        and isinstance(qualname, str)
        and module != "__main__"
        and "<" not in qualname
    ):
        return "name", (module, qualname)
    return "value", function


def _pack(invocation: ToolInvocation) -> bytes:
    payload = (
        _reference(invocation.function),
        invocation.args,
        plain_context(invocation.kwargs),
        invocation.is_async,
    )
    try:
        inner = pickle.dumps(payload)
    except Exception as exc:
        raise ToolFailed(
            f"the tool {invocation.tool.name!r} cannot be sent to a child process: its "
            "function must be importable (defined at a module's top level, not in __main__) "
            f"and its arguments picklable ({type(exc).__name__}: {scrub(str(exc), limit=160)})"
        ) from exc
    return pickle.dumps((list(sys.path), inner))


def _unpack(name: str, output: bytes, errors: bytes, code: int) -> Any:
    if not output:
        tail = scrub(errors.decode("utf-8", "replace"), limit=300)
        raise ToolFailed(
            f"the process running the tool {name!r} ended (exit code {code}) without an "
            f"outcome{': ' + tail if tail else ''}"
        )
    try:
        kind, value = pickle.loads(output)  # noqa: S301 - from our own child
    except Exception as exc:
        raise ToolFailed(
            f"the outcome of the tool {name!r} could not be read back from its process "
            f"({type(exc).__name__}: {scrub(str(exc), limit=160)})"
        ) from exc
    if kind == "ok":
        return value
    assert isinstance(value, BaseException)
    raise value


# -- the child side --------------------------------------------------------------------


def _resolve(reference: tuple[str, Any]) -> Any:
    kind, target = reference
    if kind == "value":
        return target
    module_name, qualname = target
    found: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        found = getattr(found, part)
    function = getattr(found, "function", found)  # a Tool holds the function
    if getattr(function, "__qualname__", None) != qualname:
        raise ToolFailed(f"{module_name}.{qualname} is not the tool's function in the child")
    return function


def _portable(exc: BaseException) -> BaseException:
    try:
        restored = pickle.loads(pickle.dumps(exc))  # noqa: S301 - our own bytes
    except Exception:  # many exception classes cannot be rebuilt from their args
        restored = None
    if type(restored) is type(exc):
        return exc
    failure = ToolFailed(f"{type(exc).__name__}: {scrub(str(exc), limit=1000)}")
    setattr(failure, "transient", is_transient(exc))  # noqa: B010 - an optional flag
    return failure


def _main() -> None:
    # The outcome travels on the real stdout; whatever the tool prints goes
    # to stderr instead.
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    try:
        path, inner = pickle.loads(sys.stdin.buffer.read())  # noqa: S301 - from the parent
        sys.path[:0] = [p for p in path if p not in sys.path]
        reference, args, kwargs, is_async = pickle.loads(inner)  # noqa: S301
        outcome: tuple[str, Any] = (
            "ok",
            call_function(_resolve(reference), args, kwargs, is_async),
        )
    except Exception as exc:
        outcome = ("error", _portable(exc))
    try:
        data = pickle.dumps(outcome)
    except Exception as exc:
        data = pickle.dumps(
            (
                "error",
                ToolFailed(
                    f"the tool returned a value that cannot be pickled back "
                    f"({type(exc).__name__}); return plain data"
                ),
            )
        )
    channel.write(data)
    channel.flush()


if __name__ == "__main__":
    _main()
