"""A toolbox served as an MCP server, built on the official SDK's low-level ``Server``.

Theory of operation: :func:`mcp_server` answers ``tools/list`` from the
toolbox (each tool's name, description and the JSON Schema toolwire derives
from its signature, with annotations from its options) and ``tools/call``
through :meth:`~toolwire.Toolbox.execute`, so every rule of the toolbox holds
for an MCP client as for a model: strict validation (invalid arguments are an
``isError`` result that says what is wrong; the function never runs),
timeouts, retries, result budgets. A result whose text is a JSON object is
also sent as ``structuredContent``.

A ``requires_approval`` tool is asked of the client by form elicitation (a
yes/no question naming the tool and its arguments) when the client declares
the capability and ``approval="elicit"``; otherwise it is refused. On the
2026-07-28 protocol the question travels in an ``InputRequiredResult`` and
the answer comes back with the retried call, bound by ``request_state`` to
the digest of the arguments it approves; on earlier protocols it is a
standalone ``elicitation/create`` request made during the call.

With a journal, each call is one run in it (``toolwire runs list`` shows it
with ``provider`` ``mcp-serve``): the intent, the approval decision and the
outcome, written before the client gets its answer.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Literal

from toolwire.errors import UsageError
from toolwire.journal import Journal, JournalObserver
from toolwire.run import RunInfo, RunResult, argument_digest
from toolwire.stream import jsonio
from toolwire.tools import Approval, ApprovalRequest, Tool, Toolbox, ToolResult, idempotency_key
from toolwire.types import ToolCall, Usage

if TYPE_CHECKING:  # pragma: no cover - the SDK is optional
    import mcp_types
    from mcp.server import Server
    from mcp.server.context import ServerRequestContext

__all__ = ["APPROVAL_KEY", "mcp_server"]

APPROVAL_KEY = "toolwire_approval"
"""The key of the approval question in an ``InputRequiredResult``."""

_APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Run this tool call?"}},
    "required": ["approve"],
}


def _version() -> str:
    try:
        return version("toolwire")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "0"


def mcp_server(
    toolbox: Toolbox,
    *,
    name: str = "toolwire",
    instructions: str | None = None,
    journal: Journal | None = None,
    approval: Literal["elicit", "refuse"] = "elicit",
) -> Server[Any]:
    """An MCP server (the SDK's :class:`mcp.server.Server`) for ``toolbox``.

    Run it with ``await server.run(read, write, server.create_initialization_options())``
    on any SDK transport, mount ``server.streamable_http_app()``, or use
    ``toolwire mcp serve module:toolbox``.

    Args:
        toolbox: the tools to serve (``external`` tools are left out: their
            results come from outside, not from a body to run).
        name: the server's name, as it introduces itself.
        instructions: usage instructions sent to clients.
        journal: where each call is recorded (one run per call).
        approval: ``"elicit"`` asks the client about each
            ``requires_approval`` call (refused when the client cannot be
            asked); ``"refuse"`` refuses them all.

    Raises:
        UsageError: the MCP SDK is not installed, or ``approval`` is unknown.
    """
    from toolwire.mcp._connect import _sdk

    _sdk()
    if approval not in ("elicit", "refuse"):
        raise UsageError("approval must be 'elicit' or 'refuse'")
    from mcp.server import Server

    serving = _Serving(toolbox, journal=journal, approval=approval)
    return Server(
        name,
        version=_version(),
        instructions=instructions,
        on_list_tools=serving.list_tools,
        on_call_tool=serving.call_tool,
    )


def mcp_tool(t: Tool) -> mcp_types.Tool:
    """The MCP listing of one toolwire tool."""
    import mcp_types

    hints = mcp_types.ToolAnnotations(
        read_only_hint=t.read_only,
        idempotent_hint=t.idempotent or t.read_only,
        destructive_hint=t.requires_approval and not t.read_only,
    )
    return mcp_types.Tool(
        name=t.name, description=t.description or None, input_schema=dict(t.parameters),
        annotations=hints,
    )  # fmt: skip


def call_result(result: ToolResult) -> mcp_types.CallToolResult:
    """A toolbox result as an MCP ``CallToolResult``: its text, and the JSON
    object it holds as ``structuredContent``."""
    import mcp_types

    structured: dict[str, Any] | None = None
    if result.ok and result.content.startswith("{"):
        try:
            loaded = jsonio.loads(result.content)
        except ValueError:
            loaded = None
        structured = loaded if isinstance(loaded, dict) else None
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(text=result.content if result.ok else result.message)],
        structured_content=structured,
        is_error=not result.ok,
    )


class _Serving:
    """The handlers of one served toolbox."""

    def __init__(self, toolbox: Toolbox, *, journal: Journal | None, approval: str) -> None:
        # External tools are not served: their results come from outside.
        self.toolbox = Toolbox(
            [t for t in toolbox if not t.external],
            max_concurrency=toolbox.max_concurrency,
            default_timeout=toolbox.default_timeout,
            max_result_chars=toolbox.max_result_chars,
            backoff=toolbox.backoff,
            sleep=toolbox.sleep,
            random=toolbox.random,
            runner=toolbox.runner,
        )
        self.observer = JournalObserver(journal) if journal is not None else None
        self.approval = approval

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        import mcp_types

        return mcp_types.ListToolsResult(tools=[mcp_tool(t) for t in self.toolbox])

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult | mcp_types.InputRequiredResult:
        import mcp_types

        arguments = dict(params.arguments or {})
        call = ToolCall(id=f"mcp_{uuid.uuid4().hex[:16]}", name=params.name, arguments=arguments)
        t = self.toolbox.get(params.name)
        decision: Approval | None = None
        if t is not None and t.requires_approval and t.arguments.prepare(arguments)[0] is not None:
            asked = await self._ask(ctx, params, t, arguments)
            if isinstance(asked, mcp_types.InputRequiredResult):
                return asked
            decision = asked
        return call_result(await self._execute(call, decision, ctx))

    async def _execute(
        self, call: ToolCall, decision: Approval | None, ctx: ServerRequestContext[Any]
    ) -> ToolResult:
        observer = self.observer
        run_id = uuid.uuid4().hex

        async def approve(request: ApprovalRequest) -> Approval:
            given = decision or Approval.deny("the call was not approved")
            if observer is not None:
                await observer.approval_decided(run_id, 1, request.call_id, call.name, given)
            return given

        if observer is None:
            (result,) = await self.toolbox.execute([call], run_id=run_id, approve=approve)
            return result
        client = ctx.session.client_params
        who = client.client_info.name if client is not None else "client"
        await observer.run_started(
            RunInfo(run_id=run_id, model=f"mcp:{who}", provider="mcp-serve", dialect="mcp",
                    tools=self.toolbox.names)
        )  # fmt: skip
        await observer.tools_started(run_id, 1, [(call, idempotency_key(run_id, call.id))])

        async def finished(_call: Any, result: ToolResult) -> None:
            await observer.tool_finished(run_id, 1, call, result)

        try:
            (result,) = await self.toolbox.execute(
                [call], run_id=run_id, approve=approve, on_result=finished
            )
        except BaseException as exc:
            await observer.run_failed(run_id, exc)
            raise
        await observer.run_finished(run_id, _run_result(run_id, call, result))
        return result

    async def _ask(
        self,
        ctx: ServerRequestContext[Any],
        params: mcp_types.CallToolRequestParams,
        t: Tool,
        arguments: dict[str, Any],
    ) -> Approval | mcp_types.InputRequiredResult:
        """The client's decision on a call that needs approval, or the
        question to send it (2026-07-28: the call comes back with the answer)."""
        import mcp_types
        from mcp_types.version import is_version_at_least

        if self.approval == "refuse":
            return Approval.deny(f"{t.name} needs approval, and this server refuses such calls")
        capabilities = ctx.session.client_capabilities
        form = capabilities.elicitation if capabilities is not None else None
        if form is None or (form.form is None and form.url is not None):
            return Approval.deny(
                f"{t.name} needs approval, and this client cannot be asked (no form elicitation)"
            )
        digest = argument_digest(arguments)
        message = f"Allow the tool {t.name!r} to run with {jsonio.dumps(arguments)}?"
        if not is_version_at_least(ctx.protocol_version, "2026-07-28"):
            answer = await ctx.session.elicit_form(message, _APPROVAL_SCHEMA, ctx.request_id)
            return _decision(answer)
        given = (params.input_responses or {}).get(APPROVAL_KEY)
        if isinstance(given, mcp_types.ElicitResult) and params.request_state == digest:
            return _decision(given)
        request = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestFormParams(
                message=message, requested_schema=_APPROVAL_SCHEMA
            )
        )
        return mcp_types.InputRequiredResult(
            input_requests={APPROVAL_KEY: request}, request_state=digest
        )


def _decision(answer: mcp_types.ElicitResult) -> Approval:
    content: Mapping[str, Any] = answer.content or {}
    if answer.action == "accept" and content.get("approve") is True:
        return Approval.allow()
    return Approval.deny("the client did not approve the call")


def _run_result(run_id: str, call: ToolCall, result: ToolResult) -> RunResult[Any]:
    from toolwire.run import ToolCallRecord

    return RunResult(
        output=result.content,
        outcome="answered",
        messages=(),
        usage=Usage(),
        tool_calls=(ToolCallRecord(turn=1, call=call, result=result),),
        turns=1,
        run_id=run_id,
        cost=None,
    )
