"""MCP servers' tools as toolwire tools.

Theory of operation
-------------------
:func:`connect_stdio` (a server started as a subprocess) and
:func:`connect_http` (a streamable HTTP endpoint) are async context managers
around the official SDK's :class:`mcp.Client`. Everything the connection owns
(the subprocess or HTTP client, the SDK's session and its task groups) lives
inside that one ``async with`` block, in the task that entered it, and is
closed when the block ends, even when it ends by cancellation: there is no
background thread and nothing to forget to close.

:meth:`MCPConnection.tools` lists the server's tools (every page) and turns
each into an ordinary :class:`~toolwire.Tool`: the name (sanitized to what
every provider accepts, optionally prefixed), the description and the
``inputSchema`` as the tool's JSON Schema, so the toolbox validates the
model's arguments before anything is sent. The tool's function is a small
async closure that calls ``tools/call`` on the live session, so MCP tools and
Python tools mix freely in one :class:`~toolwire.Toolbox` or
:class:`~toolwire.Agent`.

Results map onto :class:`~toolwire.ToolResult` like this:

* ``structuredContent``, when present, is the result, as exact JSON (servers
  also send it serialized as text; the structured form is the one to trust);
* otherwise the content blocks are joined with newlines: text as is, embedded
  text resources by their text, and images, audio, blobs and resource links
  as a one-line ``[image: image/png, 1024 bytes]``-style description, so the
  model knows they exist (a ``ToolResult`` carries text only);
* ``isError: true`` raises :class:`MCPToolError`, which the toolbox reports as
  a ``failed`` result whose message is the server's (scrubbed) explanation.
  ``failed`` rather than :class:`~toolwire.ModelRetry`: the flag covers any
  failure of the tool (a service down, a missing record), not only bad
  arguments, and the model reads the server's message either way.

Timeouts belong to the toolbox (``Toolbox(default_timeout=...)``, or
``tools(timeout=...)`` per connection): when one expires the call's task is
cancelled, and the SDK answers a cancelled request by sending the server
``notifications/cancelled``, so the server stops the work and the session
stays usable.

OpenAI strict mode is off for MCP tools unless asked for
(``tools(strict=None)``): it would turn each optional property into a required
nullable one, and the server's schema does not accept the ``null`` the model
then sends for "left out".

MCP tool annotations are hints from the server; toolwire maps them as
follows, and each can be overridden per call of :meth:`MCPConnection.tools`:
``readOnlyHint`` -> ``read_only`` (retried on transient errors, and may start
early in an eager agent); ``idempotentHint`` -> ``idempotent``;
``destructiveHint: true`` on a tool that is not read-only ->
``requires_approval``. A tool without annotations is neither read-only nor
gated (the spec's "destructive by default" would gate every tool of most
servers; pass ``requires_approval=True`` to gate all tools of a server you do
not trust).

The SDK is an optional dependency (``pip install 'toolwire[mcp]'``). This
module imports it only when a connection is opened, so ``import toolwire``
never loads it, and a missing SDK is reported as a :class:`~toolwire.UsageError`
that says what to install.
"""

from __future__ import annotations

import hashlib
import importlib
import math
import re
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio

from toolwire import _json
from toolwire.errors import ConnectError, RemoteProtocolError, ToolFailed, UsageError
from toolwire.tools import Tool, scrub

if TYPE_CHECKING:  # pragma: no cover - the SDK is optional; imported for real in _sdk()
    import mcp_types
    from mcp import Client

__all__ = [
    "MCPConnection",
    "MCPToolError",
    "connect_http",
    "connect_stdio",
    "result_content",
    "tool_name",
]

_INSTALL_HINT = "toolwire.mcp needs the MCP SDK: pip install 'toolwire[mcp]'"

# tools/list pages followed before giving up on a server that never stops.
_MAX_PAGES = 100

_NAME_OK = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
_NAME_BAD_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def _sdk() -> None:
    """Import the SDK's modules, or raise the UsageError that says what to install."""
    try:
        importlib.import_module("mcp")
        importlib.import_module("mcp_types")
    except ImportError as exc:
        raise UsageError(_INSTALL_HINT) from exc


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


# -- pure mappings ------------------------------------------------------------------


def tool_name(mcp_name: str, *, prefix: str = "") -> str:
    """The toolwire name of an MCP tool: ``prefix + name``, made acceptable
    to every provider.

    Providers accept 1-64 letters, digits, ``_`` and ``-``, starting with a
    letter or ``_``; MCP also allows ``.`` and ``/``. Other characters become
    ``_``; a name that would still be too long keeps its first 55 characters
    and gets a short hash of the full name, so two long names stay distinct.

    Args:
        mcp_name: the tool's name on the server.
        prefix: prepended first (``"fs_"``), to keep two servers' tools apart.
    """
    wanted = prefix + mcp_name
    if _NAME_OK.fullmatch(wanted):
        return wanted
    name = _NAME_BAD_CHARS.sub("_", wanted) or "_"
    if not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        name = "_" + name
    if len(name) > 64:
        digest = hashlib.sha256(wanted.encode()).hexdigest()[:8]
        name = f"{name[:55]}_{digest}"
    return name


def _size(base64_data: str) -> int:
    """Decoded size of base64 text, without decoding it."""
    data = base64_data.strip()
    return max(len(data) * 3 // 4 - data[-2:].count("="), 0)


def _describe_block(block: Any) -> str:
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind in ("image", "audio"):
        return f"[{kind}: {block.mime_type}, {_size(block.data)} bytes]"
    if kind == "resource_link":
        mime = f", {block.mime_type}" if block.mime_type else ""
        return f"[resource link: {block.name} <{block.uri}>{mime}]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if isinstance(text, str):
            return text
        mime = f", {resource.mime_type}" if resource.mime_type else ""
        return f"[resource: <{resource.uri}>{mime}, {_size(resource.blob)} bytes]"
    # A content type newer than this code: say so rather than drop it.
    return f"[{kind or type(block).__name__} content]"


def result_content(result: mcp_types.CallToolResult) -> str:
    """The text a model gets for a successful ``tools/call`` result.

    ``structuredContent`` as JSON when the server sent it; otherwise the
    content blocks joined with newlines (non-text blocks described on one
    line each).

    Args:
        result: the SDK's ``CallToolResult``.
    """
    if result.structured_content is not None or "structured_content" in result.model_fields_set:
        return _json.dumps(result.structured_content)
    return "\n".join(_describe_block(block) for block in result.content)


def _error_message(result: mcp_types.CallToolResult) -> str:
    text = "\n".join(_describe_block(block) for block in result.content).strip()
    return text or "the server reported an error without a message"


def _first_error(exc: BaseException) -> BaseException:
    """The single cause inside nested exception groups, for a readable message."""
    # Duck-typed: BaseExceptionGroup is built in from Python 3.11 only.
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple) and len(inner) == 1 and isinstance(inner[0], BaseException):
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


# -- the connection -----------------------------------------------------------------


class MCPConnection:
    """A live connection to one MCP server.

    Get one from :func:`connect_stdio` or :func:`connect_http`; it is usable
    inside their ``async with`` block only. Tools made by :meth:`tools` call
    the server through this connection, so run them inside the block too.

    Attributes:
        client: the SDK's :class:`mcp.Client`, for what toolwire does not wrap
            (resources, prompts...).
        transport: ``"stdio"`` or ``"http"``.
    """

    def __init__(self, client: Client, *, transport: Literal["stdio", "http"], label: str) -> None:
        self.client = client
        self.transport = transport
        info = client.server_info
        self._name = label or (info.name if info is not None and info.name else "mcp-server")
        self._closed = False

    @property
    def name(self) -> str:
        """The server's name, as it introduced itself (or as given to connect)."""
        return self._name

    @property
    def instructions(self) -> str | None:
        """The server's usage instructions, if it gave any."""
        return None if self._closed else self.client.instructions

    @property
    def closed(self) -> bool:
        """True once the ``async with`` block that opened the connection ended."""
        return self._closed

    def __repr__(self) -> str:
        # No command line, URL or header: any of them may carry a credential.
        state = "closed" if self._closed else "open"
        return f"MCPConnection(name={self.name!r}, transport={self.transport!r}, {state})"

    def _check_open(self) -> None:
        if self._closed:
            raise UsageError(
                f"the connection to MCP server {self.name!r} is closed: use its tools inside "
                "the `async with toolwire.mcp.connect_...()` block"
            )

    async def list_tools(self) -> list[mcp_types.Tool]:
        """Every tool the server lists (all pages), as the SDK's ``Tool`` models.

        Raises:
            UsageError: the connection is closed.
            RemoteProtocolError: the server's listing fails or never ends.
        """
        self._check_open()
        from mcp import MCPError

        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            try:
                page = await self.client.list_tools(cursor=cursor, cache_mode="bypass")
            except MCPError as exc:
                raise RemoteProtocolError(
                    f"MCP server {self.name!r} failed to list its tools: {exc.message}"
                ) from exc
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                return tools
            if cursor in seen:
                break
            seen.add(cursor)
        raise RemoteProtocolError(
            f"MCP server {self.name!r} kept paginating tools/list (a repeated cursor or more "
            f"than {_MAX_PAGES} pages)"
        )

    async def tools(
        self,
        *,
        prefix: str = "",
        include: Collection[str] | None = None,
        exclude: Collection[str] = (),
        timeout: float | None = None,  # noqa: ASYNC109 - each later call's, not this listing's
        read_only: bool | None = None,
        requires_approval: bool | None = None,
        max_result_chars: int | None = None,
        strict: bool | None = False,
    ) -> list[Tool]:
        """The server's tools as toolwire tools, ready for a Toolbox or an Agent.

        Args:
            prefix: prepended to every name (``"fs_"``), so tools of two
                servers, or a server's and your own, cannot clash.
            include: the server's names of the tools to keep (default: all).
            exclude: the server's names of tools to leave out.
            timeout: seconds each call may take before it is cancelled
                (default: the toolbox's ``default_timeout``).
            read_only: override ``readOnlyHint`` for every tool.
            requires_approval: override the approval rule for every tool
                (default: ask only for tools the server marks destructive).
            max_result_chars: result size budget of every tool.
            strict: OpenAI strict-mode schemas. Off by default: strict mode
                makes every optional property required and nullable, so the
                model would send ``null`` for arguments the server's schema
                only allows to be left out. ``None`` sends a strict schema
                where one can be made; ``True`` requires it.

        Returns:
            One :class:`~toolwire.Tool` per listed tool, in the server's order.

        Raises:
            UsageError: a name in ``include`` is not listed, two tools end up
                with the same name, or a tool's input schema is not an object
                schema (leave it out with ``exclude``).
            RemoteProtocolError: the listing failed.
        """
        listed = await self.list_tools()
        names = [t.name for t in listed]
        if include is not None:
            missing = sorted(set(include) - set(names))
            if missing:
                raise UsageError(
                    f"MCP server {self.name!r} has no tool named {', '.join(map(repr, missing))}; "
                    f"it lists {', '.join(names) or 'no tools'}"
                )
        out: list[Tool] = []
        origin: dict[str, str] = {}
        for spec in listed:
            if (include is not None and spec.name not in include) or spec.name in exclude:
                continue
            name = tool_name(spec.name, prefix=prefix)
            if name in origin:
                raise UsageError(
                    f"MCP tools {origin[name]!r} and {spec.name!r} of server {self.name!r} both "
                    f"become {name!r}; leave one out with exclude="
                )
            origin[name] = spec.name
            out.append(
                self._make_tool(
                    spec,
                    name=name,
                    timeout=timeout,
                    read_only=read_only,
                    requires_approval=requires_approval,
                    max_result_chars=max_result_chars,
                    strict=strict,
                )
            )
        return out

    def _make_tool(
        self,
        spec: mcp_types.Tool,
        *,
        name: str,
        timeout: float | None,
        read_only: bool | None,
        requires_approval: bool | None,
        max_result_chars: int | None,
        strict: bool | None,
    ) -> Tool:
        schema = spec.input_schema
        if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
            raise UsageError(
                f"MCP tool {spec.name!r} of server {self.name!r} has an input schema that is not "
                "a JSON object schema; leave it out with exclude="
            )
        hints = spec.annotations
        is_read_only = read_only if read_only is not None else bool(hints and hints.read_only_hint)
        idempotent = is_read_only or bool(hints and hints.idempotent_hint)
        gated = (
            requires_approval
            if requires_approval is not None
            else bool(hints and hints.destructive_hint and not is_read_only)
        )
        description = (
            spec.description or spec.title or (hints.title if hints else None) or ""
        ).strip()
        mcp_name = spec.name
        connection = self

        async def call_mcp_tool(**arguments: Any) -> str:
            return await connection._call_for_model(mcp_name, arguments)

        call_mcp_tool.__name__ = name
        call_mcp_tool.__qualname__ = f"MCPConnection.tool[{mcp_name}]"
        return Tool.from_schema(
            call_mcp_tool,
            name=name,
            parameters=dict(schema),
            description=description,
            timeout=timeout,
            read_only=is_read_only,
            idempotent=idempotent,
            requires_approval=gated,
            max_result_chars=max_result_chars,
            strict=strict,
        )

    async def call(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> mcp_types.CallToolResult:
        """Call a tool by its name on the server and return the SDK's raw result.

        A result flagged ``isError`` is returned as is; protocol errors raise.

        Args:
            name: the tool's name on the server (not the prefixed one).
            arguments: the arguments, sent unvalidated.

        Raises:
            UsageError: the connection is closed.
            MCPToolError: the server answered with a protocol error, or with
                a result that does not match the protocol or the tool's
                output schema, or the connection broke.
        """
        self._check_open()
        from mcp import MCPError
        from mcp_types import CONNECTION_CLOSED
        from pydantic import ValidationError

        try:
            return await self.client.call_tool(
                name, dict(arguments) if arguments is not None else None
            )
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                message = f"the connection to MCP server {self.name!r} closed during the call"
            else:
                message = f"MCP server {self.name!r} rejected the call (error {exc.code})"
            raise MCPToolError(
                f"{message} to {name!r}: {exc.message}", tool=name, code=exc.code
            ) from exc
        except ValidationError as exc:
            raise MCPToolError(
                f"MCP server {self.name!r} sent an invalid result for {name!r}", tool=name
            ) from exc
        except (RuntimeError, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            # RuntimeError: structured content that does not match the tool's
            # output schema, or an unexpected input-required result.
            raise MCPToolError(
                f"calling {name!r} on MCP server {self.name!r} failed: "
                f"{scrub(str(exc)) or type(exc).__name__}",
                tool=name,
            ) from exc

    async def _call_for_model(self, name: str, arguments: dict[str, Any]) -> str:
        result = await self.call(name, arguments)
        if result.is_error:
            raise MCPToolError(_error_message(result), tool=name)
        return result_content(result)


# -- opening connections ------------------------------------------------------------


@asynccontextmanager
async def _open(
    make_client: Callable[[AsyncExitStack], Client],
    *,
    transport: Literal["stdio", "http"],
    label: str,
    what: str,
    connect_timeout: float | None,
) -> AsyncIterator[MCPConnection]:
    deadline = math.inf if connect_timeout is None else anyio.current_time() + connect_timeout
    connection: MCPConnection | None = None
    # The scope spans the whole connection because the SDK's task groups are
    # entered during the handshake and must be exited inside the scope they
    # were entered in; the deadline is lifted once the handshake is done.
    with anyio.CancelScope(deadline=deadline) as scope:
        async with AsyncExitStack() as stack:
            client = make_client(stack)
            try:
                await stack.enter_async_context(client)
            except Exception as exc:
                cause = _first_error(exc)
                detail = scrub(str(cause)) or type(cause).__name__
                raise ConnectError(f"could not connect to {what}: {detail}") from exc
            scope.deadline = math.inf
            connection = MCPConnection(client, transport=transport, label=label)
            try:
                yield connection
            finally:
                connection._closed = True
    if connection is None:
        # Only the handshake deadline (so a finite connect_timeout) ends the
        # block without an exception.
        raise ConnectError(f"could not connect to {what}: no answer within {connect_timeout} s")


def connect_stdio(
    command: str,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    name: str | None = None,
    connect_timeout: float | None = 30.0,
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
        lambda _stack: Client(params, cache=None),
        transport="stdio",
        label=name or "",
        what=f"MCP server {name or Path(command).name!r} (stdio)",
        connect_timeout=connect_timeout,
    )


def connect_http(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    name: str | None = None,
    connect_timeout: float | None = 30.0,
    read_timeout: float = 300.0,
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

    def make_client(stack: AsyncExitStack) -> Client:
        http_client = httpx2.AsyncClient(headers=sent_headers, timeout=timeouts)
        # Closed by the stack after the SDK's transport, entered later, is done with it.
        stack.push_async_callback(http_client.aclose)
        return Client(streamable_http_client(url, http_client=http_client), cache=None)

    host = re.sub(r"^https?://([^/?#@]*@)?([^/?#]*).*$", r"\2", url)
    return _open(
        make_client,
        transport="http",
        label=name or "",
        what=f"MCP server {name or host!r} (HTTP)",
        connect_timeout=connect_timeout,
    )
