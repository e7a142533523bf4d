"""The live connection to one MCP server, and its tools as toolwire tools."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Literal

import anyio

from toolwire.errors import MCPToolError, RemoteProtocolError, UsageError
from toolwire.mcp._results import _error_message, result_content, result_parts, tool_name
from toolwire.mcp._sampling import sampling_request, sampling_result
from toolwire.tools import (
    Question,
    QuestionCallback,
    Questions,
    Sampler,
    Tool,
    ToolContext,
    asking,
    sampling,
    scrub,
)

if TYPE_CHECKING:  # pragma: no cover - the SDK is optional; imported for real on connect
    import mcp_types
    from mcp import Client

# tools/list pages followed before giving up on a server that never stops.
_MAX_PAGES = 100


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

    def __init__(
        self,
        client: Client,
        *,
        transport: Literal["stdio", "http"],
        label: str,
        elicit: QuestionCallback | None = None,
        sampling: bool = False,
    ) -> None:
        self.client = client
        self.elicit = elicit
        self.sampling = sampling
        """Whether the server may ask the run's model (sampling)."""
        self._calling: dict[str, tuple[Questions | None, Sampler | None]] = {}
        """Each tool call in flight, by its toolwire call id: who answers its
        questions and serves its completions (the agent's batch sets them)."""
        self.transport = transport
        info = client.server_info
        self._name = label or (info.name if info is not None and info.name else "mcp-server")
        self._protocol_version = client.protocol_version
        self._calls = 0
        self._unordered = transport == "http"
        """Announcements may come after the result of the call that made them:
        over streamable HTTP they travel on a stream of their own (the
        listen stream on 2026-07-28, the standalone GET stream before)."""
        self._closed = False
        self._tools_version = 0
        self._listening: Any = None
        """The ``subscriptions/listen`` stream of a 2026-07-28 connection."""

    @property
    def name(self) -> str:
        """The server's name, as it introduced itself (or as given to connect)."""
        return self._name

    @property
    def instructions(self) -> str | None:
        """The server's usage instructions, if it gave any."""
        return None if self._closed else self.client.instructions

    @property
    def protocol_version(self) -> str:
        """The protocol version agreed with the server (``"2026-07-28"``,
        ``"2025-11-25"``...); recorded with each run that uses its tools."""
        return self._protocol_version

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

    @property
    def tools_version(self) -> int:
        """Counts the server's announcements that its tool list changed,
        received so far (a change not yet taken by the listener counts).
        Over streamable HTTP, where an announcement travels on a stream of
        its own and may come after the result of the call that made it, each
        finished call counts too: the tools are listed again after it, and
        the next turn offers what the call changed."""
        if self._unordered:
            return self._tools_version + self._calls
        # The SDK queues a listen stream's events as they are read, in order
        # with the responses; the listener takes them later.
        route = getattr(self._listening, "_route", None)
        pending = getattr(route, "_pending", None) or ()
        return self._tools_version + (1 if any(_is_tools(e) for e in pending) else 0)

    def _on_message(self, message: Any) -> None:
        """The SDK's message handler: notes ``notifications/tools/list_changed``."""
        import mcp_types

        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._tools_version += 1

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
            When the server announces that its tool list changed, a toolbox
            holding them takes the new list in (:meth:`Toolbox.refresh`; an
            agent does before each turn), listed with the same options.

        Raises:
            UsageError: a name in ``include`` is not listed, two tools end up
                with the same name, or a tool's input schema is not an object
                schema (leave it out with ``exclude``).
            RemoteProtocolError: the listing failed.
        """
        options = {
            "prefix": prefix,
            "include": include,
            "exclude": exclude,
            "timeout": timeout,
            "read_only": read_only,
            "requires_approval": requires_approval,
            "max_result_chars": max_result_chars,
            "strict": strict,
        }
        return await _Listing(self, options).reload()

    async def _listed(
        self,
        source: _Listing,
        *,
        prefix: str,
        include: Collection[str] | None,
        exclude: Collection[str],
        timeout: float | None,  # noqa: ASYNC109 - each later call's
        read_only: bool | None,
        requires_approval: bool | None,
        max_result_chars: int | None,
        strict: bool | None,
    ) -> list[Tool]:
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
                    source=source,
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
        source: _Listing,
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

        async def call_mcp_tool(
            _toolwire_context: ToolContext, **arguments: Any
        ) -> str | list[Any]:
            return await connection._call_for_model(mcp_name, arguments, _toolwire_context.call_id)

        call_mcp_tool.__name__ = name
        call_mcp_tool.tool_source = source  # type: ignore[attr-defined]
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

    async def _call_for_model(
        self, name: str, arguments: dict[str, Any], call_id: str = ""
    ) -> str | list[Any]:
        """The text of the result, or its text and parts (images, audio,
        embedded files) in order when it holds any."""
        token = _CALL.set(call_id)
        self._calling[call_id] = (asking.get(), sampling.get())
        try:
            result = await self.call(name, arguments)
        finally:
            _CALL.reset(token)
            self._calling.pop(call_id, None)
            self._calls += 1
        questions = asking.get()
        if questions is not None and call_id in questions.waiting:
            raise MCPToolError(
                f"MCP tool {name!r} of server {self.name!r} waits for a person's answer",
                tool=name,
            )
        if result.is_error:
            raise MCPToolError(_error_message(result), tool=name)
        parts = result_parts(result)
        return parts if parts is not None else result_content(result)

    async def _on_elicit(
        self, _context: Any, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        """The SDK's elicitation callback: the server asks a person during a call."""
        import mcp_types

        if not isinstance(params, mcp_types.ElicitRequestFormParams):
            return mcp_types.ErrorData(
                code=mcp_types.INVALID_PARAMS, message="toolwire answers form elicitation only"
            )
        question = Question(
            message=params.message, schema=dict(params.requested_schema), source=self.name
        )
        call_id, questions, _ = self._in_flight()
        answer = None
        if call_id is not None and questions is not None:
            answer = await questions.ask(call_id, question, self.elicit)
        elif self.elicit is not None:
            answer = await self.elicit(question)
        if answer is None:
            # Nobody can answer now: the call ends, and the run waits.
            return mcp_types.ElicitResult(action="cancel")
        return mcp_types.ElicitResult(action=answer.action, content=answer.content)

    def _in_flight(self) -> tuple[str | None, Questions | None, Sampler | None]:
        """The call a server's request (a question, a sampling request) is
        part of: its id, who answers its questions, who serves its samples."""
        call_id = _CALL.get()
        if call_id is None and len(self._calling) == 1:
            # A server-to-client request (handshake-era protocols) is handled
            # outside the calling task: with one call in flight, it is that one.
            call_id = next(iter(self._calling))
        if call_id is None or call_id not in self._calling:
            return None, None, None
        return call_id, *self._calling[call_id]

    async def _on_sample(
        self, _context: Any, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult | mcp_types.ErrorData:
        """The SDK's sampling callback (declared only when the connection
        permits sampling): the server asks the run's model during a call."""
        import mcp_types

        call_id, _, sampler = self._in_flight()
        if call_id is None or sampler is None:
            return mcp_types.ErrorData(
                code=mcp_types.INVALID_REQUEST,
                message="toolwire serves sampling only to a call of an agent's run "
                "(not to an eager call, nor outside a run)",
            )
        request = sampling_request(params, self.name)
        if isinstance(request, str):
            return mcp_types.ErrorData(code=mcp_types.INVALID_PARAMS, message=request)
        sample = await sampler.sample(call_id, request)
        if sample.error is not None:
            return mcp_types.ErrorData(
                code=mcp_types.INTERNAL_ERROR, message=f"sampling refused: {scrub(sample.error)}"
            )
        return sampling_result(sample)


def _is_tools(event: Any) -> bool:
    from mcp.shared.subscriptions import ToolsListChanged

    return isinstance(event, ToolsListChanged)


class _Listing:
    """The tools one :meth:`MCPConnection.tools` call made: a
    :class:`~toolwire.tools.ToolSource` listed again, with the same options,
    when the server announces that its tool list changed."""

    def __init__(self, connection: MCPConnection, options: dict[str, Any]) -> None:
        self.connection = connection
        self.options = options
        self.seen = -1
        """The connection's ``tools_version`` when last listed."""

    @property
    def name(self) -> str:
        return self.connection.name

    @property
    def protocol(self) -> str:
        return self.connection.protocol_version

    @property
    def changed(self) -> bool:
        return not self.connection.closed and self.seen != self.connection.tools_version

    async def reload(self) -> list[Tool]:
        seen = self.connection.tools_version
        tools = await self.connection._listed(self, **self.options)
        self.seen = seen
        return tools


_CALL: ContextVar[str | None] = ContextVar("toolwire_mcp_call", default=None)
"""The toolwire call id of the MCP tool call running in this context."""
