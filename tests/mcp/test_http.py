"""MCP tools from a real server process over streamable HTTP on loopback:
headers reach the server, results and errors map like over stdio, and a
timeout cancels the server's work."""

from __future__ import annotations

import json

import pytest

from toolwire import ConnectError, Toolbox, ToolCall, UsageError
from toolwire.mcp import connect_http

from .conftest import TOKEN

pytestmark = pytest.mark.anyio

AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def test_list_and_call_over_http(http_url: str) -> None:
    async with connect_http(http_url, headers=AUTH) as server:
        assert server.transport == "http" and server.name == "toolwire-test-server"
        tools = await server.tools(prefix="remote_")
        assert "remote_get_weather" in {t.name for t in tools}
        results = await Toolbox(tools).execute(
            [
                ToolCall(id="a", name="remote_add", arguments={"a": 2, "b": 40}),
                ToolCall(id="w", name="remote_get_weather", arguments={"city": "Oslo"}),
                ToolCall(id="d", name="remote_divide", arguments={"a": 1, "b": 0}),
            ]
        )
    add, weather, divide = results
    assert add.ok and add.content == "42"
    assert json.loads(weather.content)["city"] == "Oslo"
    assert not divide.ok and divide.error == "failed"
    assert "cannot divide by zero" in divide.message
    # The token is in no repr or error.
    assert TOKEN not in repr(server)


async def test_timeout_cancels_the_call_over_http(http_url: str) -> None:
    async with connect_http(http_url, headers=AUTH) as server:
        tools = await server.tools(include=["slow", "add"], timeout=0.3)
        before = (await server.call("slow_stats", {})).structured_content
        (result,) = await Toolbox(tools).execute(
            [ToolCall(id="s", name="slow", arguments={"seconds": 30})]
        )
        assert not result.ok and result.error == "timeout"
        stats = await server.call(
            "slow_stats", {"cancelled_at_least": before["cancelled"] + 1, "wait": 5}
        )
        assert stats.structured_content["cancelled"] == before["cancelled"] + 1
        assert stats.structured_content["finished"] == before["finished"]
        (after,) = await Toolbox(tools).execute(
            [ToolCall(id="a", name="add", arguments={"a": 1, "b": 1})]
        )
        assert after.ok and after.content == "2"


async def test_closed_connection_is_a_clear_failure(http_url: str) -> None:
    async with connect_http(http_url, headers=AUTH) as server:
        tools = await server.tools(include=["add"])
        assert "open" in repr(server)
    assert server.closed and "closed" in repr(server)
    (result,) = await Toolbox(tools).execute([ToolCall(id="a", name="add", arguments={"a": 1})])
    assert not result.ok and result.error == "invalid_arguments"  # validated first
    (result,) = await Toolbox(tools).execute(
        [ToolCall(id="a", name="add", arguments={"a": 1, "b": 2})]
    )
    assert not result.ok and result.error == "failed"
    assert "is closed" in result.message
    with pytest.raises(UsageError, match="is closed"):
        await server.tools()


async def test_missing_credentials_are_a_connect_error(http_url: str) -> None:
    with pytest.raises(ConnectError, match=r"could not connect to MCP server '127\.0\.0\.1:"):
        async with connect_http(http_url, headers={"Authorization": "Bearer wrong-secret"}):
            pass


async def test_nothing_listening_is_a_connect_error() -> None:
    # Bind a port and close it again: nothing listens there.
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ConnectError) as caught:
        async with connect_http(f"http://127.0.0.1:{port}/mcp", connect_timeout=5):
            pass
    # Refused at once (in the words of the event loop's connect), not given
    # up on at the deadline.
    assert "failed" in str(caught.value)
    assert "no answer within" not in str(caught.value)


def test_url_must_be_http() -> None:
    with pytest.raises(UsageError, match="http"):
        connect_http("ftp://127.0.0.1/mcp")
