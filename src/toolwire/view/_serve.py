"""Running the viewer: a socket on loopback, uvicorn, the URL to open."""

from __future__ import annotations

import socket
import webbrowser
from collections.abc import Callable
from pathlib import Path

import uvicorn

from toolwire.view._app import ViewSettings, create_app

__all__ = ["serve"]


def serve(
    journal: Path | str,
    *,
    port: int = 0,
    open_browser: bool = False,
    announce: Callable[[str], None] = print,
    principal: str = "toolwire view",
    approval_key: bytes | None = None,
    cassettes: tuple[Path, ...] = (),
) -> None:
    """Serve the viewer of ``journal`` (a file, or a ``postgresql://`` URL) on
    127.0.0.1 until interrupted.

    ``port`` 0 takes any free port. The URL, with its access token, is given
    to ``announce`` once the socket listens (and opened in a browser when
    ``open_browser``). Approvals and denials given in the page are journaled
    as ``principal``, signed with ``approval_key`` when given (else unsigned,
    as the run's page says). ``cassettes``: the recorded streams
    whose calls' arguments the run pages replay.

    Raises:
        OSError: the port cannot be bound.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(64)
        bound = int(sock.getsockname()[1])
        settings = ViewSettings(
            journal=journal,
            token=ViewSettings.new_token(),
            port=bound,
            principal=principal,
            approval_key=approval_key,
            cassettes=cassettes,
        )
        url = f"http://127.0.0.1:{bound}/?token={settings.token}"
        config = uvicorn.Config(
            create_app(settings),
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        announce(url)
        if open_browser:
            webbrowser.open(url)
        server.run(sockets=[sock])
    finally:
        sock.close()
