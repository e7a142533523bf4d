"""``toolwire mcp serve module:toolbox``: a toolbox as an MCP server.

Over stdio by default (stdout carries the protocol only: every message of
this command goes to stderr), or streamable HTTP on loopback with
``--http``, where the URL is printed on stderr once the socket listens.
``module:toolbox`` is imported with the current directory on the import
path, as ``toolwire batch --agent`` does; it names a :class:`~toolwire.Toolbox`,
or a function returning one.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import anyio
import click

from toolwire.cli.batch import import_reference
from toolwire.cli.runs import _journal_option
from toolwire.journal import Journal, default_journal, open_journal
from toolwire.tools import Toolbox

__all__ = ["mcp"]

_LOOPBACK = ("127.0.0.1", "::1", "localhost")


@click.group("mcp")
def mcp() -> None:
    """MCP: serve a toolbox as an MCP server."""


def load_toolbox(reference: str) -> Toolbox:
    """The toolbox ``module:attribute`` names (a Toolbox, or a function returning one).

    Raises:
        click.BadParameter: it cannot be imported, or is no toolbox.
    """
    hint = "'APP'"
    target: Any = import_reference(reference, param_hint=hint, example="app:toolbox")
    if not isinstance(target, Toolbox) and callable(target):
        try:
            target = target()
        except Exception as exc:
            raise click.BadParameter(
                f"{reference}() failed: {type(exc).__name__}: {exc}", param_hint=hint
            ) from None
    if not isinstance(target, Toolbox):
        raise click.BadParameter(
            f"{reference!r} is a {type(target).__name__}, not a toolwire.Toolbox (nor a "
            "function returning one)",
            param_hint=hint,
        )
    return target


def _journal(path: Path | str | None) -> Journal | None:
    chosen = path if path is not None else default_journal()
    return None if chosen is None else open_journal(chosen)


@mcp.command("serve")
@click.argument("app")
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP (default: stdio).")
@click.option("--host", default="127.0.0.1", show_default=True, help="With --http: loopback only.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535),
              help="With --http: the port (0: any free port).")  # fmt: skip
@click.option("--name", default="toolwire", show_default=True, help="The server's name.")
@click.option(
    "--approval",
    type=click.Choice(["elicit", "refuse"]),
    default="elicit",
    show_default=True,
    help="requires_approval tools: ask the client (form elicitation), or refuse them.",
)
@_journal_option
def serve(
    app: str,
    use_http: bool,
    host: str,
    port: int,
    name: str,
    approval: str,
    journal_path: Path | str | None,
) -> None:
    """Serve the toolbox APP (module:attribute) as an MCP server; each call
    is journaled (--journal, or $TOOLWIRE_JOURNAL; off disables it)."""
    from toolwire.mcp import mcp_server

    if use_http and host not in _LOOPBACK:
        raise click.BadParameter(
            f"{host!r} is not a loopback address: toolwire mcp serve --http listens on "
            "127.0.0.1, ::1 or localhost only",
            param_hint="'--host'",
        )
    toolbox = load_toolbox(app)
    server = mcp_server(
        toolbox,
        name=name,
        journal=_journal(journal_path),
        approval="refuse" if approval == "refuse" else "elicit",
    )
    if use_http:
        anyio.run(_serve_http, server, host, port)
    else:
        anyio.run(_serve_stdio, server)


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def _serve_http(server: Any, host: str, port: int) -> None:
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
    listener.listen(64)
    bound = listener.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    click.echo(f"toolwire mcp: serving {server.name} at http://{shown}:{bound}/mcp", err=True)
    await uvicorn.Server(config).serve(sockets=[listener])
