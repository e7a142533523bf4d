"""toolwire's sample tools served over MCP (stdio), to try an MCP client offline.

Run it as a subprocess, which is what ``toolwire.mcp.connect_stdio`` does::

    python -m toolwire.examples.mcp_server

It needs the ``mcp`` extra (``pip install 'toolwire[mcp]'``) and offers
:func:`~toolwire.examples.get_weather`, :func:`~toolwire.examples.get_current_time`
and :func:`~toolwire.examples.calculator`, read-only all three.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from toolwire.examples.calculator import calculator
from toolwire.examples.clock import get_current_time
from toolwire.examples.weather import get_weather

__all__ = ["server"]

server = MCPServer(
    "toolwire-samples",
    instructions="toolwire's sample tools: the weather, the time, a calculator.",
    log_level="WARNING",
)
for _tool in (get_weather, get_current_time, calculator):
    server.tool(
        name=_tool.name,
        description=_tool.description,
        annotations=ToolAnnotations(read_only_hint=_tool.read_only),
    )(_tool.function)


if __name__ == "__main__":
    server.run("stdio")
