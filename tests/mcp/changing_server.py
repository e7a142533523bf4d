"""An MCP server built with the official SDK whose tool list changes: its
``unlock`` tool adds a ``vault`` tool and announces it
(``notifications/tools/list_changed``), for toolwire's tests.

``python changing_server.py`` serves over stdio.
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("changing-server", log_level="WARNING")


def vault(code: str) -> str:
    """Open the vault with a code."""
    return f"vault opened with {code}"


@server.tool()
async def unlock(ctx: Context) -> str:
    """Unlock the vault tool."""
    server.add_tool(vault)
    await ctx.notify_tools_changed()  # 2026-07-28: on the client's listen stream
    await ctx.session.send_tool_list_changed()  # earlier versions: a notification
    return "unlocked"


if __name__ == "__main__":
    server.run("stdio")
