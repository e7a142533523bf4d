"""MCP tools and Python tools in one toolwire agent.

Run it from the repository root, with the MCP extra installed
(``pip install 'toolwire[mcp]'``)::

    python examples/mcp_tools.py

It starts the small MCP server of toolwire's test suite
(``tests/mcp/server_app.py``) as a subprocess over stdio, and toolwire's
emulation server to play the model, so it runs offline and needs no API key.
To use it for real, point ``connect_stdio`` at your own server (for example
``connect_stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"])``,
or ``connect_http("https://.../mcp", headers=...)``) and the provider at a
real model.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

import toolwire.mcp
from toolwire import Agent, OpenAIChat, tool
from toolwire.testing import EmulationServer, Scenario

SERVER_APP = Path(__file__).resolve().parent.parent / "tests" / "mcp" / "server_app.py"

# What the emulated model does: call the MCP server's weather tool and the
# local clock tool in parallel, then answer from both results.
SCENARIO = {
    "name": "mcp-example",
    "turns": [
        {
            "tool_calls": [
                {"name": "demo_get_weather", "arguments": {"city": "Lisbon"}},
                {"name": "local_time", "arguments": {"city": "Lisbon"}},
            ]
        },
        {
            "text": "In Lisbon it is {result:local_time} and the weather is "
            "{result:demo_get_weather.condition}, {result:demo_get_weather.temperature_c} °C."
        },
    ],
}


@tool(read_only=True)
def local_time(city: str) -> str:
    """The local time in a city (a Python tool next to the MCP ones).

    Args:
        city: the city name.
    """
    return "09:15"


async def main() -> None:
    async with toolwire.mcp.connect_stdio(sys.executable, [str(SERVER_APP)]) as server:
        # The test server's slow and crashing tools are for the tests only.
        hidden = ["slow", "slow_stats", "crash"]
        mcp_tools = await server.tools(prefix="demo_", exclude=hidden, timeout=10)
        print(f"{server.name} offers:")
        for t in mcp_tools:
            flags = [f for f in ("read_only", "requires_approval") if getattr(t, f)]
            print(f"  {t.name:<22} {', '.join(flags) or '-'}")

        with EmulationServer(Scenario.from_dict(SCENARIO)) as model:
            provider = OpenAIChat(api_key="not-needed", base_url=model.url_for("openai-chat"))
            agent = Agent(provider, model="gpt-4.1-mini", tools=[*mcp_tools, local_time])
            try:
                result = await agent.run("What's the time and weather in Lisbon?")
            finally:
                await agent.aclose()

    for record in result.tool_calls:
        print(f"tool {record.call.name} -> {record.result.content}")
    print(f"answer: {result.output}")


if __name__ == "__main__":
    anyio.run(main)
