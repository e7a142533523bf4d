"""Serving an ASGI app with uvicorn on loopback: in a background thread, or in
the foreground until interrupted.

Theory of operation: the server binds its socket itself, so the port is known
before uvicorn starts, and ``start()`` returns only once uvicorn reports that
it is serving (or has given up): no sleeps, no polling of the port. ``stop()``
wakes uvicorn's main loop at once instead of waiting for its next 0.1 s tick.
The emulation server, the replay of cassettes and the recording proxy all run
this way.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import threading
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, ClassVar

import anyio.to_thread
import uvicorn
from starlette.types import ASGIApp
from typing_extensions import Self

from toolwire.errors import ToolwireError, UsageError
from toolwire.testing._guard import BodyLimit, ServerLimits, accept_burst, guarded_protocol

__all__ = ["LoopbackServer", "is_loopback"]

_INCOMPLETE_MESSAGE = "ASGI callable returned without completing response."


class _DeliberateCutFilter(logging.Filter):
    """Silence uvicorn's complaint about the responses we cut on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != _INCOMPLETE_MESSAGE


def _install_log_filter() -> None:
    logger = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _DeliberateCutFilter) for f in logger.filters):
        logger.addFilter(_DeliberateCutFilter())


def is_loopback(host: str) -> bool:
    """True when ``host`` names the loopback interface only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _UvicornServer(uvicorn.Server):
    """uvicorn, telling us when it is serving (or has given up)."""

    def __init__(
        self,
        config: uvicorn.Config,
        ready: threading.Event,
        on_started: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(config)
        self.ready = ready
        self.on_started = on_started

        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        # Made before `ready` is set, so that stop() can always reach them.
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        try:
            await super().startup(sockets=sockets)
        finally:
            self.ready.set()
        if self.started and self.on_started is not None:
            self.on_started()

    async def main_loop(self) -> None:
        # uvicorn's loop polls should_exit every 0.1 s; this one also wakes up
        # at once when stop() is called from another thread.
        assert self._wake is not None
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864_000
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 0.1)
            should_exit = await self.on_tick(counter)

    def request_stop(self) -> None:
        """Ask the server to shut down; safe from any thread."""
        self.should_exit = True
        if self._loop is not None and self._wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                self._loop.call_soon_threadsafe(self._wake.set)


class LoopbackServer:
    """An ASGI app served on loopback (unless ``allow_remote``).

    Args:
        app: the ASGI application.
        host: the interface to listen on; loopback unless ``allow_remote``.
        port: the port; 0 picks a free one.
        allow_remote: permit a non-loopback ``host``.
        limits: what it accepts from clients (see
            :class:`~toolwire.testing.ServerLimits`): request bodies, open
            connections, head and idle timeouts.

    Raises:
        UsageError: ``host`` is not loopback and ``allow_remote`` is False.
    """

    label = "server"
    """How the server names itself in errors and its thread's name."""
    uvicorn_options: ClassVar[Mapping[str, Any]] = {}
    """uvicorn settings of this kind of server, over the defaults below."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        allow_remote: bool = False,
        limits: ServerLimits | None = None,
    ) -> None:
        if not allow_remote and not is_loopback(host):
            raise UsageError(
                f"refusing to listen on {host!r}: the {self.label} listens on "
                "loopback only unless remote access is explicitly allowed"
            )
        self.host = host
        self.app = app
        self.limits = limits or ServerLimits()
        self._requested_port = port
        self._socket: socket.socket | None = None
        self._server: _UvicornServer | None = None
        self._thread: threading.Thread | None = None
        self.body_limit: BodyLimit | None = None
        """The request bodies' guard once started: its ``buffered`` and
        ``peak_buffered`` say how many body bytes the server holds."""

    def __repr__(self) -> str:
        state = self.base_url if self._socket is not None else "stopped"
        return f"<{type(self).__name__} {state}>"

    @property
    def port(self) -> int:
        """The port listened on (known once started)."""
        if self._socket is None:
            raise UsageError(f"the {self.label} is not started")
        return int(self._socket.getsockname()[1])

    @property
    def base_url(self) -> str:
        """``http://host:port``, without a trailing slash."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def _bind(self) -> socket.socket:
        family, kind, proto, _, address = socket.getaddrinfo(
            self.host, self._requested_port, type=socket.SOCK_STREAM
        )[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
            sock.listen(2048)
        except OSError:
            sock.close()
            raise
        return sock

    def _make_server(
        self, ready: threading.Event, on_started: Callable[[], None] | None = None
    ) -> _UvicornServer:
        _install_log_filter()
        options: dict[str, Any] = {
            "log_level": "warning",
            "access_log": False,  # an access log would print Gemini's ?key= query
            "lifespan": "off",
            "loop": "asyncio",
            "ws": "none",
            "timeout_graceful_shutdown": 1,
            "timeout_keep_alive": self.limits.idle_timeout,
            "backlog": accept_burst(self.limits.max_connections),
            "http": guarded_protocol(
                max_connections=self.limits.max_connections,
                header_timeout=self.limits.header_timeout,
            ),
        }
        app = BodyLimit(
            self.app,
            self.limits.max_body_bytes,
            body_timeout=self.limits.body_timeout,
            min_rate=self.limits.min_body_rate,
            max_buffered=self.limits.max_buffered_bytes,
        )
        self.body_limit = app
        config = uvicorn.Config(app, **{**options, **self.uvicorn_options})
        return _UvicornServer(config, ready, on_started)

    def start(self) -> Self:
        """Start serving in a background thread; return once it is serving.

        Raises:
            UsageError: already started.
            ToolwireError: the server could not start.
        """
        if self._thread is not None:
            raise UsageError(f"the {self.label} is already started")
        self._socket = self._bind()
        ready = threading.Event()
        self._server = self._make_server(ready)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._socket]},
            name=f"toolwire-{self.label.replace(' ', '-')}-{self.port}",
            daemon=True,
        )
        self._thread.start()
        # uvicorn sets the event when startup is over, successful or not; the
        # timeout only guards against a thread that died before reaching it.
        ready.wait(timeout=30)
        if not self._server.started:
            self.stop()
            raise ToolwireError(f"the {self.label} failed to start")
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread to finish. Idempotent."""
        if self._server is not None:
            self._server.request_stop()
        if self._thread is not None:
            self._thread.join(timeout=30)
        if self._socket is not None:
            self._socket.close()
        self._thread = None
        self._server = None

    def serve_forever(self, *, on_ready: Callable[[Self], None] | None = None) -> None:
        """Serve in the current thread until interrupted (Ctrl-C or SIGTERM)."""
        if self._thread is not None:
            raise UsageError(f"the {self.label} is already started")
        self._socket = self._bind()
        callback = (lambda: on_ready(self)) if on_ready is not None else None
        server = self._make_server(threading.Event(), callback)
        try:
            server.run(sockets=[self._socket])
        finally:
            self._socket.close()
            self._socket = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await anyio.to_thread.run_sync(self.stop)
