"""Opening connections to MCP servers: a subprocess over stdio, or streamable HTTP."""

from __future__ import annotations

import importlib
import math
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.abc

from toolwire.errors import ConnectError, UsageError
from toolwire.http.urls import split_url
from toolwire.mcp._connection import MCPConnection
from toolwire.mcp._results import _first_error
from toolwire.tools import QuestionCallback, scrub

if TYPE_CHECKING:  # pragma: no cover - the SDK is optional; imported for real in _sdk()
    from mcp import Client

MCPProtocol = Literal["auto", "handshake", "2026-07-28"]
"""How a connection agrees on the protocol version (see :func:`connect_stdio`)."""

_MODES = {"auto": "auto", "handshake": "legacy", "2026-07-28": "2026-07-28"}
"""Each :data:`MCPProtocol` as the SDK's ``Client(mode=...)``."""

_INSTALL_HINT = "toolwire.mcp needs the MCP SDK: pip install 'toolwire[mcp]'"


def _sdk() -> None:
    """Import the SDK's modules, or raise the UsageError that says what to install."""
    try:
        importlib.import_module("mcp")
        importlib.import_module("mcp_types")
    except ImportError as exc:
        raise UsageError(_INSTALL_HINT) from exc


def _protocol(protocol: str) -> str:
    if protocol not in _MODES:
        raise UsageError(
            f"protocol must be one of {', '.join(map(repr, _MODES))}, not {protocol!r}"
        )
    return protocol


@asynccontextmanager
async def _open(
    make_client: Callable[[AsyncExitStack, dict[str, Any]], Client],
    *,
    transport: Literal["stdio", "http"],
    label: str,
    what: str,
    connect_timeout: float | None,
    elicit: QuestionCallback | None,
    sampling: bool,
    protocol: str,
) -> AsyncIterator[MCPConnection]:
    opened: list[MCPConnection] = []

    async def on_elicit(context: Any, params: Any) -> Any:
        if not opened:  # pragma: no cover - a server asks before the handshake ended
            import mcp_types

            return mcp_types.ElicitResult(action="decline")
        return await opened[0]._on_elicit(context, params)

    async def on_sample(context: Any, params: Any) -> Any:
        if not opened:  # pragma: no cover - a server asks before the handshake ended
            import mcp_types

            return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message="not connected")
        return await opened[0]._on_sample(context, params)

    async def on_message(message: Any) -> None:
        if opened:
            opened[0]._on_message(message)
        await anyio.lowlevel.checkpoint()

    deadline = math.inf if connect_timeout is None else anyio.current_time() + connect_timeout
    connection: MCPConnection | None = None
    # The scope spans the whole connection because the SDK's task groups are
    # entered during the handshake and must be exited inside the scope they
    # were entered in; the deadline is lifted once the handshake is done.
    with anyio.CancelScope(deadline=deadline) as scope:
        async with AsyncExitStack() as stack:
            callbacks = {
                "elicitation_callback": on_elicit,
                "message_handler": on_message,
                # Declared only when permitted: else the server is told the
                # client cannot sample, and refuses its own request.
                "sampling_callback": on_sample if sampling else None,
                "mode": _MODES[protocol],
            }
            client = make_client(stack, callbacks)
            try:
                await stack.enter_async_context(client)
            except Exception as exc:
                cause = _first_error(exc)
                detail = scrub(str(cause)) or type(cause).__name__
                raise ConnectError(f"could not connect to {what}: {detail}") from exc
            scope.deadline = math.inf
            connection = MCPConnection(
                client, transport=transport, label=label, elicit=elicit, sampling=sampling
            )
            opened.append(connection)
            listening = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(listening.cancel_scope.cancel)  # runs first: stops the listener
            await listening.start(_listen_for_tools, connection)
            try:
                yield connection
            finally:
                connection._closed = True
    if connection is None:
        # Only the handshake deadline (so a finite connect_timeout) ends the
        # block without an exception.
        raise ConnectError(f"could not connect to {what}: no answer within {connect_timeout} s")


async def _listen_for_tools(
    connection: MCPConnection, *, task_status: anyio.abc.TaskStatus[None]
) -> None:
    """Note the server's tool list changes on a 2026-07-28 connection, which
    announces them on a ``subscriptions/listen`` stream (earlier versions send
    ``notifications/tools/list_changed``, noted by the message handler)."""
    from mcp import MCPError
    from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost

    started = False
    try:
        async with connection.client.listen(tools_list_changed=True) as events:
            connection._listening = events
            started = True
            task_status.started()
            async for _ in events:
                connection._tools_version += 1
    except (ListenNotSupportedError, MCPError, SubscriptionLost, TimeoutError):
        pass  # not offered, or lost: the tools stay as listed
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass  # the connection broke: its calls say so
    finally:
        connection._listening = None
        if not started:
            task_status.started()


def connect_stdio(
    command: str,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    name: str | None = None,
    connect_timeout: float | None = 30.0,
    elicit: QuestionCallback | None = None,
    sampling: bool = False,
    protocol: MCPProtocol = "auto",
) -> AbstractAsyncContextManager[MCPConnection]:
    """Start an MCP server as a subprocess and talk to it over stdio.

    Usage::

        async with toolwire.mcp.connect_stdio("npx", ["-y", "some-mcp-server"]) as server:
            agent = Agent(provider, model=..., tools=[*await server.tools(), my_tool])
            result = await agent.run("...")

    The process is stopped when the block ends (stdin closed, then
    terminated if it lingers).

    Args:
        command: the executable.
        args: its arguments.
        env: variables for the server, on top of a minimal safe set (``PATH``,
            ``HOME``...): the rest of this process's environment is not passed.
        cwd: the server's working directory.
        name: how errors and reprs name the server (default: the name the
            server gives itself).
        connect_timeout: seconds for the process to start and complete the
            handshake.
        elicit: answers the server's questions (form elicitation) in
            process; without it, a question asked during an agent's run
            suspends the run until ``toolwire runs answer`` answers it.
        sampling: let the server ask the model (``sampling/createMessage``):
            during an agent's run, its request is served by the run's own
            provider and model, under the run's limits, counted in its
            usage and journaled. Off by default: the client declares no
            sampling capability, and the server's request is refused.
        protocol: how the protocol version is agreed: ``"auto"`` (probe
            ``server/discover`` and take the 2026-07-28 stateless protocol
            when the server speaks it, else the ``initialize`` handshake),
            ``"handshake"`` (the handshake only: 2024-11-05 to 2025-11-25,
            as the server counter-offers) or ``"2026-07-28"`` (that version,
            without a probe). :attr:`MCPConnection.protocol_version` says
            which was agreed.

    Returns:
        An async context manager that yields an :class:`MCPConnection`.

    Raises:
        UsageError: the MCP SDK is not installed.
        ConnectError: (on entering) the server could not be started or did
            not complete the handshake in time.
    """
    _sdk()
    from mcp import Client, StdioServerParameters

    if connect_timeout is not None and not connect_timeout > 0:
        raise UsageError("connect_timeout must be a positive number of seconds or None")
    params = StdioServerParameters(
        command=command, args=list(args), env=dict(env) if env is not None else None, cwd=cwd
    )
    return _open(
        lambda _stack, callbacks: Client(params, cache=None, **callbacks),
        transport="stdio",
        label=name or "",
        what=f"MCP server {name or Path(command).name!r} (stdio)",
        connect_timeout=connect_timeout,
        elicit=elicit,
        sampling=sampling,
        protocol=_protocol(protocol),
    )


def connect_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    name: str | None = None,
    connect_timeout: float | None = 30.0,
    read_timeout: float = 300.0,
    elicit: QuestionCallback | None = None,
    sampling: bool = False,
    protocol: MCPProtocol = "auto",
) -> AbstractAsyncContextManager[MCPConnection]:
    """Connect to an MCP server over streamable HTTP.

    Usage::

        headers = {"Authorization": f"Bearer {token}"}
        async with toolwire.mcp.connect_http("https://example.com/mcp", headers=headers) as s:
            tools = await s.tools(prefix="docs_")

    Args:
        url: the server's MCP endpoint (often ending in ``/mcp``).
        headers: sent with every request (authentication...); never logged
            and never part of an error message or repr.
        name: how errors and reprs name the server (default: the name the
            server gives itself).
        connect_timeout: seconds for the handshake.
        read_timeout: seconds the server may stay silent on a response
            stream (tool calls are limited by the toolbox's timeouts).
        elicit: answers the server's questions in process (see
            :func:`connect_stdio`).
        sampling: let the server ask the run's model (see :func:`connect_stdio`).
        protocol: how the protocol version is agreed (see :func:`connect_stdio`).

    Returns:
        An async context manager that yields an :class:`MCPConnection`.

    Raises:
        UsageError: the MCP SDK is not installed, or an option is invalid.
        ConnectError: (on entering) the server could not be reached, refused
            the client, or did not complete the handshake in time.
    """
    _sdk()
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    if not url.startswith(("http://", "https://")):
        raise UsageError("connect_http() needs an http:// or https:// URL")
    if connect_timeout is not None and not connect_timeout > 0:
        raise UsageError("connect_timeout must be a positive number of seconds or None")
    sent_headers = dict(headers or {})
    timeouts = httpx2.Timeout(connect_timeout or 30.0, read=read_timeout)

    def make_client(stack: AsyncExitStack, callbacks: dict[str, Any]) -> Client:
        http_client = httpx2.AsyncClient(headers=sent_headers, timeout=timeouts)
        # Closed by the stack after the SDK's transport, entered later, is done with it.
        stack.push_async_callback(http_client.aclose)
        transport = streamable_http_client(url, http_client=http_client)
        return Client(transport, cache=None, **callbacks)

    host = split_url(url).address().partition("://")[2]  # never the userinfo
    return _open(
        make_client,
        transport="http",
        label=name or "",
        what=f"MCP server {name or host!r} (HTTP)",
        connect_timeout=connect_timeout,
        elicit=elicit,
        sampling=sampling,
        protocol=_protocol(protocol),
    )
