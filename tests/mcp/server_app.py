"""A small MCP server for the tests, written with the official ``mcp`` SDK.

Run it as a subprocess: ``python server_app.py`` serves over stdio;
``python server_app.py --http-fd N`` serves streamable HTTP on an already
listening socket inherited as file descriptor ``N`` (the test binds the port,
so there is no race for it), and answers only requests that carry
``Authorization: Bearer mcp-test-token``.
"""

from __future__ import annotations

import argparse
import os
import socket
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel
from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN = "mcp-test-token"

server = MCPServer(
    "toolwire-test-server", instructions="Tools for toolwire's tests.", log_level="WARNING"
)


class _Stats:
    """What the slow tool saw, shared by every session of this process."""

    def __init__(self) -> None:
        self.started = 0
        self.cancelled = 0
        self.finished = 0
        self.changed = anyio.Event()

    def bump(self, field: str) -> None:
        setattr(self, field, getattr(self, field) + 1)
        self.changed.set()
        self.changed = anyio.Event()


stats = _Stats()


class Weather(BaseModel):
    """Current conditions in a city."""

    city: str
    condition: str
    temperature_c: float


@server.tool(
    annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    structured_output=False,
)
def add(a: int, b: int) -> str:
    """Add two integers.

    Args:
        a: the first number.
        b: the second number.
    """
    return str(a + b)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def get_weather(city: str) -> Weather:
    """Current weather of a city (structured output).

    Args:
        city: the city name.
    """
    return Weather(city=city, condition="light rain", temperature_c=24.5)


@server.tool()
def divide(a: float, b: float) -> float:
    """Divide a by b; fails when b is zero."""
    if b == 0:
        raise ToolError("cannot divide by zero; pass a non-zero b")
    return a / b


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer; counts how often it was cancelled."""
    stats.bump("started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        stats.bump("cancelled")
        raise
    stats.bump("finished")
    return f"slept {seconds} s"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def slow_stats(cancelled_at_least: int = 0, wait: float = 5.0) -> dict[str, int]:
    """Counters of the slow tool, once it was cancelled at least N times (or after `wait` s)."""
    with anyio.move_on_after(wait):
        while stats.cancelled < cancelled_at_least:
            await stats.changed.wait()
    return {"started": stats.started, "cancelled": stats.cancelled, "finished": stats.finished}


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
def delete_record(record_id: str) -> str:
    """Delete a record (pretends to)."""
    return f"deleted {record_id}"


@server.tool(name="notes.search", annotations=ToolAnnotations(read_only_hint=True))
def notes_search(query: str, limit: int = 3) -> list[str]:
    """Search notes; a dotted name, and a result of several text blocks."""
    return [f"note {i} about {query}" for i in range(1, limit + 1)]


@server.tool(structured_output=False)
def chart(title: str) -> list[Any]:
    """A caption and a picture."""
    return [f"chart: {title}", Image(data=b"\x89PNG\r\n\x1a\n", format="png")]


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def read_env(name: str) -> str:
    """The value of an environment variable of the server process."""
    return os.environ.get(name, "<unset>")


@server.tool()
def crash(code: int = 3) -> str:
    """Exit the server process at once, mid-call."""
    os._exit(code)


class _RequireToken:
    """Refuses HTTP requests without the test bearer token."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if headers.get(b"authorization") != f"Bearer {TOKEN}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"missing token"})
                return
        await self.app(scope, receive, send)


async def serve_http(fd: int) -> None:
    sock = socket.socket(fileno=fd)
    app = _RequireToken(server.streamable_http_app())
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http-fd", type=int, default=None)
    options = parser.parse_args()
    if options.http_fd is None:
        server.run("stdio")
    else:
        anyio.run(serve_http, options.http_fd)


if __name__ == "__main__":
    main()
