"""An Agent mixing an MCP tool and a Python tool, against the emulation
server (real HTTP, every wire format) and the real MCP server process."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolwire import Agent, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.mcp import MCPConnection
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio


@tool(read_only=True)
def get_current_time(timezone: str = "UTC") -> dict[str, Any]:
    """The current time in a time zone.

    Args:
        timezone: an IANA zone name.
    """
    return {"timezone": timezone, "time": "10:30"}


def scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "mcp-and-python",
            "turns": [
                {
                    "tool_calls": [
                        {"name": "mcp_get_weather", "arguments": {"city": "杭州"}},
                        {"name": "get_current_time", "arguments": {"timezone": "Asia/Shanghai"}},
                    ],
                    "chunk_size": 7,
                },
                {
                    "text": "杭州: {result:mcp_get_weather.condition}, "
                    "{result:mcp_get_weather.temperature_c}°C; "
                    "time {result:get_current_time.time}.",
                },
            ],
        }
    )


@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_agent_mixes_mcp_and_python_tools(name: str, stdio_server: MCPConnection) -> None:
    mcp_tools = await stdio_server.tools(prefix="mcp_", include=["get_weather", "add"])
    _, dialect, model = PROVIDERS[name]
    with EmulationServer(scenario()) as emulation:
        provider = make_provider(name, base_url=emulation.url_for(dialect), api_key="test-key")
        agent = Agent(provider, model=model, tools=[*mcp_tools, get_current_time], eager=True)
        try:
            result = await agent.run("杭州天气怎么样?现在几点?")
        finally:
            await agent.aclose()
        first_request = emulation.requests[0]
    assert result.ok and result.outcome == "answered" and result.turns == 2
    assert result.output == "杭州: light rain, 24.5°C; time 10:30."
    by_name = {record.call.name: record.result for record in result.tool_calls}
    assert set(by_name) == {"mcp_get_weather", "get_current_time"}
    assert json.loads(by_name["mcp_get_weather"].content)["city"] == "杭州"
    # The model was offered the MCP tools next to the Python one.
    offered = json.dumps(first_request, ensure_ascii=False)
    assert "mcp_get_weather" in offered and "mcp_add" in offered
    assert "get_current_time" in offered


def _images_in(body: dict[str, Any]) -> list[Any]:
    """The Anthropic image blocks of a request, tool results included."""
    found = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            inner = block.get("content") if block.get("type") == "tool_result" else [block]
            found.extend(b for b in inner or [] if isinstance(b, dict) and b["type"] == "image")
    return found


async def test_an_mcp_image_reaches_the_model_as_an_image(stdio_server: MCPConnection) -> None:
    mcp_tools = await stdio_server.tools(prefix="mcp_", include=["chart"])
    scripted = Scenario.from_dict(
        {
            "turns": [
                {"tool_calls": [{"name": "mcp_chart", "arguments": {"title": "sales"}}]},
                {"expect": {"images": 1}, "text": "I see {result:mcp_chart}"},
            ]
        }
    )
    _, dialect, model = PROVIDERS["anthropic"]
    with EmulationServer(scripted) as emulation:
        provider = make_provider("anthropic", base_url=emulation.url_for(dialect), api_key="k")
        agent = Agent(provider, model=model, tools=mcp_tools, journal=False)
        try:
            result = await agent.run("Draw the sales chart.")
        finally:
            await agent.aclose()
        assert result.output == "I see chart: sales"
        png = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
        assert _images_in(emulation.requests[-1]) == [{"type": "image", "source": png}]
