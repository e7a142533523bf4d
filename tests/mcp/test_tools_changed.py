"""A real MCP server process (tests/mcp/changing_server.py) that adds a tool
mid-run and announces it: the agent's next request offers it, and the
change is journaled."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, Tool, Toolbox, UsageError, tool
from toolwire.cli.demo import make_provider
from toolwire.journal import SQLiteJournal, ToolsChanged
from toolwire.mcp import MCPConnection, MCPProtocol, connect_http, connect_stdio
from toolwire.testing import EmulationServer, Scenario
from toolwire.tools import ToolsChange

from .conftest import serve_http

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).parent / "changing_server.py"


def scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "tools-change",
            "turns": [
                {"tool_calls": [{"name": "s_unlock", "arguments": {}}]},
                {"tool_calls": [{"name": "s_vault", "arguments": {"code": "1234"}}]},
                {"text": "{result:s_vault.result}"},
            ],
        }
    )


def _offered(body: dict[str, object]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools", [])}  # type: ignore[attr-defined, index]


def connect(transport: str, protocol: MCPProtocol) -> AbstractAsyncContextManager[MCPConnection]:
    """A connection to a new changing_server.py process (its tools as at start)."""
    if transport == "stdio":
        return connect_stdio(sys.executable, [str(SERVER)], protocol=protocol)

    @asynccontextmanager
    async def over_http() -> AsyncIterator[MCPConnection]:
        with serve_http(SERVER) as url:
            async with connect_http(url, protocol=protocol) as server:
                yield server

    return over_http()


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("protocol", ["auto", "handshake"])
async def test_a_tool_added_mid_run_is_offered_next_turn(
    tmp_path: Path, transport: str, protocol: MCPProtocol
) -> None:
    journal = SQLiteJournal(tmp_path / "runs.db")
    async with connect(transport, protocol) as server:
        # auto: 2026-07-28, told on the listen stream; else a notification.
        assert (server.protocol_version == "2026-07-28") == (protocol == "auto")
        tools = await server.tools(prefix="s_")
        with EmulationServer(scenario()) as emulation:
            provider = make_provider(
                "openai-chat", base_url=emulation.url_for("openai-chat"), api_key="test-key"
            )
            agent = Agent(provider, model="gpt-test", tools=tools, journal=journal)
            try:
                result = await agent.run("open the vault")
            finally:
                await agent.aclose()
            requests = list(emulation.requests)
    assert result.ok, result
    assert result.output == "vault opened with 1234"
    assert _offered(requests[0]) == {"s_unlock"}
    assert _offered(requests[1]) == {"s_unlock", "s_vault"}
    records = [e.record for e in journal.load_run(result.run_id).events]
    changes = [r for r in records if isinstance(r, ToolsChanged)]
    assert changes == [ToolsChanged(source="changing-server", added=("s_vault",), removed=())]
    assert json.dumps(requests[1]).count("s_vault") >= 1


class _Source:
    """A tool source whose next list is set by the test."""

    name = "fake-server"
    protocol = None

    def __init__(self) -> None:
        self.changed = False
        self.next: list[Tool] = []

    async def reload(self) -> list[Tool]:
        self.changed = False
        return self.next

    def make(self, fn: Any, name: str | None = None) -> Tool:
        fn.tool_source = self
        return tool(fn, name=name)


async def test_refresh_swaps_a_sources_tools_and_refuses_a_clash() -> None:
    source = _Source()

    def a() -> str:
        """Say a."""
        return "a"

    def b() -> str:
        """Say b."""
        return "b"

    def mine() -> str:
        """Say mine."""
        return "mine"

    def other() -> str:
        """Say other."""
        return "other"

    toolbox = Toolbox([source.make(a), mine])
    assert await toolbox.refresh() == []  # nothing announced
    source.changed, source.next = True, [source.make(b)]
    assert await toolbox.refresh() == [ToolsChange("fake-server", added=("b",), removed=("a",))]
    assert toolbox.names == ("mine", "b")
    source.changed, source.next = True, [source.make(other, name="mine")]
    with pytest.raises(UsageError, match="another tool"):
        await toolbox.refresh()
