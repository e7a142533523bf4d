"""MCP tools from a real server process over stdio: listing and schemas,
calls through Toolbox.execute, result and error mapping, approval, timeouts
that cancel the server's work, and a closed connection."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import pytest

from toolwire import ConnectError, Image, Tool, Toolbox, ToolCall, ToolResult, UsageError
from toolwire.mcp import MCPConnection, MCPToolError, connect_stdio

from .conftest import SERVER_APP

pytestmark = pytest.mark.anyio


def call(tool: str, call_id: str = "c1", /, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=tool, arguments=arguments)


async def run_one(tools: list[Tool], tool: str, /, **arguments: Any) -> ToolResult:
    (result,) = await Toolbox(tools).execute([call(tool, **arguments)])
    return result


async def test_tools_carry_name_description_and_schema(stdio_server: MCPConnection) -> None:
    tools = {t.name: t for t in await stdio_server.tools()}
    assert set(tools) == {
        "add",
        "get_weather",
        "divide",
        "slow",
        "slow_stats",
        "delete_record",
        "notes_search",
        "chart",
        "read_env",
        "crash",
    }
    add = tools["add"]
    assert add.description.startswith("Add two integers.")
    # The server's inputSchema, in toolwire's canonical form (no titles).
    assert add.parameters == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }
    assert tools["notes_search"].parameters["properties"]["limit"] == {
        "default": 3,
        "type": "integer",
    }
    # Schemas export to every dialect like a Python tool's.
    (openai,) = Toolbox([add]).schemas("openai-chat")
    assert openai["function"]["name"] == "add"
    assert openai["function"]["parameters"]["required"] == ["a", "b"]
    # No strict mode unless asked: optional properties stay optional.
    assert openai["function"]["strict"] is False
    strict = {t.name: t for t in await stdio_server.tools(strict=None)}
    (search,) = Toolbox([strict["notes_search"]]).schemas("openai-chat")
    assert search["function"]["strict"] is True
    assert search["function"]["parameters"]["required"] == ["query", "limit"]
    assert stdio_server.name == "toolwire-test-server"
    assert stdio_server.instructions == "Tools for toolwire's tests."


async def test_annotations_map_to_tool_flags(stdio_server: MCPConnection) -> None:
    tools = {t.name: t for t in await stdio_server.tools()}
    # readOnlyHint + idempotentHint
    assert tools["add"].read_only and tools["add"].idempotent
    assert not tools["add"].requires_approval
    # readOnlyHint alone: read-only tools are safe to repeat
    assert tools["get_weather"].read_only and tools["get_weather"].idempotent
    # destructiveHint on a writing tool: ask first
    assert tools["delete_record"].requires_approval and not tools["delete_record"].read_only
    # no annotations: neither read-only nor gated, and no automatic retries
    divide = tools["divide"]
    assert not divide.read_only and not divide.requires_approval and divide.retries == 0
    # overrides
    gated = {t.name: t for t in await stdio_server.tools(requires_approval=True, read_only=False)}
    assert all(t.requires_approval and not t.read_only for t in gated.values())


async def test_prefix_include_exclude(stdio_server: MCPConnection) -> None:
    tools = await stdio_server.tools(prefix="srv_", include=["add", "notes.search"])
    assert [t.name for t in tools] == ["srv_add", "srv_notes_search"]
    # The prefixed, sanitized name is what the model calls; the server gets its own.
    result = await run_one(tools, "srv_notes_search", query="rain", limit=2)
    assert result.ok, result.content
    assert json.loads(result.content) == {"result": ["note 1 about rain", "note 2 about rain"]}

    rest = {t.name for t in await stdio_server.tools(exclude=["slow", "slow_stats", "chart"])}
    assert "slow" not in rest and "chart" not in rest and "add" in rest
    with pytest.raises(UsageError, match="no tool named 'nope'"):
        await stdio_server.tools(include=["add", "nope"])


async def test_text_result(stdio_server: MCPConnection) -> None:
    result = await run_one(await stdio_server.tools(), "add", a=20, b=22)
    assert result.ok and result.content == "42"
    assert result.arguments == {"a": 20, "b": 22} and result.attempts == 1


async def test_structured_result_is_exact_json(stdio_server: MCPConnection) -> None:
    result = await run_one(await stdio_server.tools(), "get_weather", city="杭州")
    assert result.ok
    assert json.loads(result.content) == {
        "city": "杭州",
        "condition": "light rain",
        "temperature_c": 24.5,
    }


async def test_an_image_block_is_kept_as_an_image(stdio_server: MCPConnection) -> None:
    result = await run_one(await stdio_server.tools(), "chart", title="sales")
    assert result.ok
    assert result.content == "chart: sales"
    assert result.parts == (
        "chart: sales",
        Image.from_bytes(b"\x89PNG\r\n\x1a\n", media_type="image/png"),
    )


async def test_parallel_calls_in_one_batch(stdio_server: MCPConnection) -> None:
    tools = await stdio_server.tools()
    calls = [call("add", f"c{i}", a=i, b=1000) for i in range(6)]
    results = await Toolbox(tools).execute(calls)
    assert [r.call_id for r in results] == [f"c{i}" for i in range(6)]
    assert [r.content for r in results] == [str(1000 + i) for i in range(6)]


async def test_is_error_becomes_a_failed_result_with_the_servers_message(
    stdio_server: MCPConnection,
) -> None:
    result = await run_one(await stdio_server.tools(), "divide", a=1, b=0)
    assert not result.ok and result.error == "failed" and not result.model_retry
    assert "cannot divide by zero; pass a non-zero b" in result.message
    assert json.loads(result.content)["error"] == "failed"
    # The server's ordinary answer still works.
    ok = await run_one(await stdio_server.tools(), "divide", a=1, b=4)
    assert ok.ok and json.loads(ok.content) == {"result": 0.25}


async def test_arguments_are_validated_before_the_server_is_called(
    stdio_server: MCPConnection,
) -> None:
    tools = await stdio_server.tools()
    result = await run_one(tools, "add", a=1, b="two")
    assert not result.ok and result.error == "invalid_arguments" and result.attempts == 0
    assert "b" in result.message
    missing = await run_one(tools, "add", a=1)
    assert missing.error == "invalid_arguments" and missing.attempts == 0


async def test_raw_call_and_protocol_errors(stdio_server: MCPConnection) -> None:
    raw = await stdio_server.call("divide", {"a": 1, "b": 0})
    assert raw.is_error
    with pytest.raises(MCPToolError) as info:
        await stdio_server._call_for_model("divide", {"a": 1, "b": 0})
    assert info.value.tool == "divide" and "divide by zero" in info.value.message
    assert info.value.to_dict()["type"] == "mcp_tool_error"


async def test_destructive_tool_needs_approval(stdio_server: MCPConnection) -> None:
    tools = await stdio_server.tools(include=["delete_record"])
    denied = await run_one(tools, "delete_record", record_id="r1")
    assert not denied.ok and denied.error == "denied" and denied.attempts == 0

    asked: list[dict[str, Any]] = []

    def approve(request: Any) -> bool:
        asked.append(request.arguments)
        return True

    toolbox = Toolbox(tools, approve=approve)
    (allowed,) = await toolbox.execute([call("delete_record", record_id="r1")])
    # A str return type is structured output, wrapped by the SDK's server.
    assert allowed.ok and json.loads(allowed.content) == {"result": "deleted r1"}
    assert asked == [{"record_id": "r1"}]


async def test_env_reaches_the_server(stdio_server: MCPConnection) -> None:
    result = await run_one(await stdio_server.tools(), "read_env", name="TOOLWIRE_MCP_TEST")
    assert json.loads(result.content) == {"result": "passed through env"}


async def test_timeout_cancels_the_call_on_the_server(stdio_server: MCPConnection) -> None:
    tools = await stdio_server.tools(include=["slow", "slow_stats", "add"], timeout=0.3)
    before = await stdio_server.call("slow_stats", {})
    cancelled_before = before.structured_content["cancelled"]
    result = await run_one(tools, "slow", seconds=30)
    assert not result.ok and result.error == "timeout"
    # The server saw a notifications/cancelled and stopped the work: it waits
    # (bounded) for the cancellation to land, then reports its counters.
    stats = await stdio_server.call("slow_stats", {"cancelled_at_least": cancelled_before + 1})
    assert stats.structured_content["cancelled"] == cancelled_before + 1
    assert stats.structured_content["finished"] == 0
    # ... and the session is still usable.
    after = await run_one(tools, "add", a=2, b=3)
    assert after.ok and after.content == "5"


async def test_missing_command_is_a_connect_error() -> None:
    with pytest.raises(ConnectError, match="could not connect to MCP server"):
        async with connect_stdio("/nonexistent/toolwire-mcp-server"):
            pass


async def test_server_that_exits_is_a_connect_error() -> None:
    with pytest.raises(ConnectError, match="could not connect"):
        async with connect_stdio(sys.executable, ["-c", "pass"], connect_timeout=10):
            pass


async def test_silent_server_times_out() -> None:
    # Reads its stdin and never answers the handshake.
    script = "import sys\nfor _ in sys.stdin: pass"
    with pytest.raises(ConnectError, match=r"no answer within 0\.3 s"):
        async with connect_stdio(sys.executable, ["-c", script], connect_timeout=0.3):
            pass


def test_bad_options_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="connect_timeout"):
        connect_stdio("x", connect_timeout=0)


async def test_server_crash_mid_call_is_a_failed_result() -> None:
    async with connect_stdio(sys.executable, [str(SERVER_APP)]) as server:
        tools = await server.tools(include=["crash", "add"])
        with anyio.fail_after(10):  # a dead server must not hang the call
            crashed = await run_one(tools, "crash")
            after = await run_one(tools, "add", a=1, b=2)
    assert not crashed.ok and crashed.error == "failed"
    assert "closed during the call to 'crash'" in crashed.message
    assert not after.ok and after.error == "failed"
