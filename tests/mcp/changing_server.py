"""An MCP server built with the official SDK whose tool list changes: its
``unlock`` tool adds a ``vault`` tool and announces it
(``notifications/tools/list_changed``), for toolwire's tests.

``python changing_server.py`` serves over stdio; ``python
changing_server.py --http-fd N`` serves streamable HTTP on an already
bound listening socket (file descriptor ``N``).
"""

from __future__ import annotations

import argparse
import socket

import anyio
import uvicorn
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


async def serve_http(fd: int) -> None:
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[socket.socket(fileno=fd)])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http-fd", type=int, default=None)
    options = parser.parse_args()
    if options.http_fd is None:
        server.run("stdio")
    else:
        anyio.run(serve_http, options.http_fd)
