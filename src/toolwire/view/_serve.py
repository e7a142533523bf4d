"""Running the viewer: a socket on loopback, uvicorn, the URL to open.

Theory of operation: uvicorn serves the application over its h11 protocol,
with one addition (:class:`HeadTimeout`): a connection must send a whole
request head within ``head_timeout`` seconds (:class:`ViewSettings`) of opening (or of its
previous response, past the keep-alive wait), else it is dropped. A client
that opens connections and sends a few bytes of a head now and then would
otherwise hold them forever (uvicorn's keep-alive timer is reset by every
byte, and does not run before the first request).
"""

from __future__ import annotations

import asyncio
import socket
import webbrowser
from collections.abc import Callable
from pathlib import Path

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from toolwire.view._access import new_opener, new_secret
from toolwire.view._app import ViewSettings, create_app

__all__ = ["HeadTimeout", "serve", "server_for"]


class HeadTimeout(H11Protocol):
    """uvicorn's h11 protocol, dropping a connection whose request head is
    not whole ``head_timeout`` seconds after it could start."""

    head_timeout = 5.0
    """Seconds (what :class:`ViewSettings` says, in the subclass :func:`server_for` makes)."""
    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(self.head_timeout)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()  # the head is whole: the request is the app's now

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm(self.timeout_keep_alive + self.head_timeout)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(seconds, self._head_expired)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_expired(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()


def server_for(settings: ViewSettings) -> uvicorn.Server:
    """The uvicorn server of the viewer ``settings`` describe (not started)."""
    config = uvicorn.Config(
        create_app(settings),
        http=type("HeadTimeout", (HeadTimeout,), {"head_timeout": settings.head_timeout}),
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
    )
    return uvicorn.Server(config)


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
    to ``announce`` once the socket listens. With ``open_browser``, a browser
    is opened on a private file that sends it to the viewer with a one-time
    code (the token is never on the browser's command line:
    :mod:`toolwire.view._access`). Approvals and denials given in the page
    are journaled as ``principal``, signed with ``approval_key`` when given
    (else unsigned, as the run's page says). ``cassettes``: the recorded
    streams whose calls' arguments the run pages replay.

    Raises:
        OSError: the port cannot be bound.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    code = new_secret() if open_browser else None
    opener = new_opener() if code is not None else None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(64)
        settings = ViewSettings(
            journal=journal,
            token=ViewSettings.new_token(),
            port=int(sock.getsockname()[1]),
            principal=principal,
            approval_key=approval_key,
            cassettes=cassettes,
            code=code,
            code_used=opener.remove if opener is not None else None,
        )
        server = server_for(settings)
        announce(f"{settings.url()}?token={settings.token}")
        if opener is not None:
            opener.write(f"{settings.url()}?code={code}")
            webbrowser.open(opener.uri)
        server.run(sockets=[sock])
    finally:
        sock.close()
        if opener is not None:
            opener.remove()
