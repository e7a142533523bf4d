"""An MCP server built with the official SDK, for toolwire's protocol
version tests: ``python versioned_server.py`` speaks every version the SDK
does; ``python versioned_server.py VERSION`` stands for an older server that
speaks only the handshake-era ``VERSION``: it serves no 2026-07-28 request
(so a client's ``server/discover`` probe fails and it falls back to
``initialize``) and counter-offers ``VERSION`` whatever the client asks (two
of the SDK's own functions, replaced in this process).

Serves over stdio.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from mcp.server import runner
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import InitializeRequestParams

server = MCPServer("versioned-server", log_level="WARNING")


@server.tool()
def version(ctx: Context) -> str:
    """The protocol version this call was made in."""
    return f"spoken: {ctx.request_context.protocol_version}"


def speak_only(pinned: str) -> None:
    """Serve the handshake era only (a first request with a 2026-07-28
    envelope, the client's ``server/discover`` probe, no longer opens that
    era: it is refused as a legacy connection refuses it), and counter-offer
    ``pinned`` to every ``initialize``."""

    def negotiate(params: Mapping[str, Any] | None) -> tuple[InitializeRequestParams, str]:
        return InitializeRequestParams.model_validate(params or {}, by_name=False), pinned

    runner._has_modern_envelope = lambda _params: False
    runner.ServerRunner._negotiate_initialize = staticmethod(negotiate)  # type: ignore[method-assign]


if __name__ == "__main__":
    if len(sys.argv) > 1:
        speak_only(sys.argv[1])
    server.run("stdio")
