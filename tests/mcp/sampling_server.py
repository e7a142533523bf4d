"""An MCP server built with the official SDK whose tools ask the client's
model for a completion mid-call (sampling), for toolwire's tests.

``summarize`` sends ``sampling/createMessage`` itself
(``ctx.session.create_message``: a request on the connection's back
channel, so handshake-era protocols only); ``headline`` asks through the
SDK's resolver, which also rides a 2026-07-28 ``InputRequiredResult``.

``python sampling_server.py`` serves over stdio; ``python
sampling_server.py --http-fd N`` serves streamable HTTP on an already bound
listening socket (file descriptor ``N``).
"""

from __future__ import annotations

import argparse
import socket
import warnings
from typing import Annotated

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer, Resolve, Sample
from mcp_types import CreateMessageResult, SamplingMessage, TextContent

server = MCPServer("sampling-server", log_level="WARNING")
warnings.simplefilter("ignore")  # sampling is deprecated by 2026-07-28; still served


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Summarize a text with the client's model."""
    message = SamplingMessage(role="user", content=TextContent(text=f"Summarize: {text}"))
    result = await ctx.session.create_message(
        [message], max_tokens=40, system_prompt="You write one-line summaries."
    )
    content = result.content
    said = content.text if isinstance(content, TextContent) else content.type
    return f"summary by {result.model}: {said} ({result.stop_reason})"


def ask_headline(text: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(text=f"Headline: {text}"))
    return Sample([message], max_tokens=20)


@server.tool()
def headline(text: str, made: Annotated[CreateMessageResult, Resolve(ask_headline)]) -> str:
    """Write a headline with the client's model."""
    content = made.content
    return f"headline: {content.text if isinstance(content, TextContent) else content.type}"


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
