"""Errors of the tool layer, and :class:`ModelRetry`, which tools raise."""

from __future__ import annotations

from typing import Any

from toolwire.errors._base import ToolwireError

__all__ = [
    "ApprovalFailed",
    "MCPToolError",
    "ModelRetry",
    "RayTaskFailed",
    "RemoteToolError",
    "ToolArgumentsInvalid",
    "ToolError",
    "ToolFailed",
    "ToolTimeout",
    "UnknownTool",
]


class ToolError(ToolwireError):
    """A tool could not be run as asked."""

    type_name = "tool_error"


class UnknownTool(ToolError):
    """The model called a tool that is not registered."""

    type_name = "unknown_tool"


class ToolArgumentsInvalid(ToolError):
    """The arguments did not validate against the tool's schema."""

    type_name = "invalid_arguments"


class ToolTimeout(ToolError):
    """The tool did not finish within its timeout.

    Attributes:
        stopped: whether its work was stopped at the deadline. A synchronous
            function in a thread cannot be stopped, only abandoned: such a
            timeout is not worth a retry (``transient`` is false), since the
            first attempt may still be running.
    """

    type_name = "timeout"

    def __init__(self, message: str, *, stopped: bool = True) -> None:
        super().__init__(message)
        self.stopped = stopped
        self.transient = stopped


class ToolFailed(ToolError):
    """The tool raised, and retries and fallbacks did not save it."""

    type_name = "failed"


class MCPToolError(ToolFailed):
    """An MCP tool call failed: the server flagged its result ``isError``, or
    answered ``tools/call`` with a protocol error.

    Raised by the functions of MCP tools (and by :meth:`MCPConnection.call`
    for protocol errors); the toolbox turns it into a ``failed``
    :class:`~toolwire.ToolResult` with this message.

    Attributes:
        tool: the tool's name on the server.
        code: the JSON-RPC error code of a protocol error; ``None`` when the
            server answered with an ``isError`` result.
    """

    type_name = "mcp_tool_error"

    def __init__(self, message: str, *, tool: str, code: int | None = None) -> None:
        super().__init__(message)
        self.tool = tool
        self.code = code

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["tool"] = self.tool
        if self.code is not None:
            d["code"] = self.code
        return d


class RayTaskFailed(ToolFailed):
    """Ray could not run a tool call, or its result could not come back.

    ``transient`` is true when the worker or node was lost (the toolbox may
    retry the call, per the tool's policy) and false when trying again
    cannot help (the function or its result cannot be pickled, toolwire is
    not importable on the workers, the task was cancelled elsewhere).
    """

    type_name = "ray_task_failed"

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient

    def __reduce__(self) -> Any:
        return (_rebuild_task_failed, (self.message, self.transient))


def _rebuild_task_failed(message: str, transient: bool) -> RayTaskFailed:
    return RayTaskFailed(message, transient=transient)


class RemoteToolError(ToolFailed):
    """Stands for an exception a tool raised in a Ray worker that could not be
    pickled back: its message, transience and ``retry_after`` are kept, and
    the instance's class is a subclass named like the original (``Picky``),
    so the model reads the same error text as for a local call."""

    type_name = "remote_tool_error"

    def __init__(
        self,
        message: str,
        *,
        remote_type: str = "",
        transient: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.remote_type = remote_type
        self.transient = transient
        self.retry_after = retry_after

    def __reduce__(self) -> Any:
        return (
            _rebuild_remote_error,
            (self.message, self.remote_type, self.transient, self.retry_after),
        )

    @classmethod
    def standing_for(
        cls, message: str, remote_type: str, transient: bool, retry_after: float | None
    ) -> RemoteToolError:
        """The stand-in for an exception of type ``remote_type`` (a subclass of
        this class of that name, made once per name)."""
        return _rebuild_remote_error(message, remote_type, transient, retry_after)


_STAND_INS: dict[str, type[RemoteToolError]] = {}


def _rebuild_remote_error(
    message: str, remote_type: str, transient: bool, retry_after: float | None
) -> RemoteToolError:
    cls = RemoteToolError
    if remote_type.isidentifier():
        cls = _STAND_INS.get(remote_type) or _STAND_INS.setdefault(
            remote_type,
            type(remote_type, (RemoteToolError,), {"__module__": "toolwire.errors"}),
        )
    return cls(message, remote_type=remote_type, transient=transient, retry_after=retry_after)


class ApprovalFailed(ToolwireError):
    """The approval callback raised: an agent's run ends with this error (the
    call did not run, and no denial is recorded, so a resume asks again)."""

    type_name = "approval_failed"


class ModelRetry(Exception):
    """Raised by a tool to send its message back to the model as the result.

    The model sees the message and may call the tool again with better
    arguments. It is not an error of the program, so it is not a ToolwireError.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
