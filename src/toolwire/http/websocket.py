"""A WebSocket client: wsproto's sans-I/O protocol over an anyio stream.

Theory of operation: :func:`connect` opens a TCP stream (TLS for ``wss://``,
with the system's trust store), writes wsproto's upgrade request (the
caller's headers with it) and reads until the server accepts or refuses it;
a refusal is an HTTP answer, read (bounded) and handed to the caller's
``parse_error``, as the HTTP transport does. A :class:`WebSocket` then sends
text messages (one frame written at a time, whichever task sends) and
receives them whole: fragments are joined up to
``max_message`` bytes, pings are answered, and a close (or the peer's end of
stream) is ``None`` from :meth:`WebSocket.receive`. Every wait has a
deadline: the connection and its handshake, each message received.

Errors are toolwire's: :class:`~toolwire.errors.ConnectError` before the
socket is open, :class:`~toolwire.errors.ReadError` once it is,
:class:`~toolwire.errors.TransportTimeout` for a deadline, never the
headers (they carry the key) in a message. wsproto is an optional extra
(``pip install 'toolwire[websocket]'``), imported when a socket is opened.
"""

from __future__ import annotations

import ssl
from collections import deque
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio
import anyio.abc

from toolwire.errors import ConnectError, ReadError, TransportTimeout, UsageError
from toolwire.http import ErrorParser, redact_url

if TYPE_CHECKING:
    from wsproto import WSConnection

__all__ = ["MAX_MESSAGE", "WebSocket", "connect"]

MAX_MESSAGE = 16 * 1024 * 1024
"""The largest message received, in bytes (a larger one fails the socket)."""
_READ = 65536
_MAX_REFUSAL = 64 * 1024


def _wsproto() -> Any:
    try:
        import wsproto
    except ImportError:
        raise UsageError(
            "the WebSocket transport needs wsproto: pip install 'toolwire[websocket]'"
        ) from None
    return wsproto


class WebSocket:
    """One open WebSocket connection (made by :func:`connect`)."""

    def __init__(
        self, stream: anyio.abc.ByteStream, protocol: WSConnection, url: str, max_message: int
    ) -> None:
        self._stream = stream
        self._protocol = protocol
        self._url = url
        self._max_message = max_message
        self._pending: deque[Any] = deque()
        self._parts: list[str] = []
        self._size = 0
        self._sending = anyio.Lock(fast_acquire=True)
        """One frame written at a time (a message sent while a ping is answered)."""
        self.closed = False
        """Whether the connection has ended (closed by either side, or broken)."""
        self.sent = 0
        """Messages sent on it."""

    def __repr__(self) -> str:
        return f"<WebSocket {self._url}{' closed' if self.closed else ''}>"

    async def send(self, text: str) -> None:
        """Send one text message.

        Raises:
            ReadError: the connection is closed or broke.
        """
        from wsproto.connection import ConnectionState
        from wsproto.events import TextMessage

        if self.closed or self._protocol.state is not ConnectionState.OPEN:
            self.closed = True  # the server's close may already be read, not yet answered
            raise ReadError(f"the WebSocket {self._url} is closed")
        try:
            await self._write(self._protocol.send(TextMessage(data=text)))
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            self.closed = True
            raise ReadError(f"the WebSocket {self._url} broke while sending") from exc
        self.sent += 1

    async def receive(self, within: float) -> str | None:
        """The next text message whole; ``None`` once the connection is closed.

        Raises:
            TransportTimeout: no whole message within ``within`` seconds.
            ReadError: the connection broke, or a message is too large.
        """
        from wsproto.events import CloseConnection, Ping, TextMessage

        try:
            with anyio.fail_after(within):
                while True:
                    while self._pending:
                        event = self._pending.popleft()
                        if isinstance(event, TextMessage):
                            whole = self._part(event.data, event.message_finished)
                            if whole is not None:
                                return whole
                        elif isinstance(event, Ping):
                            await self._write(self._protocol.send(event.response()))
                        elif isinstance(event, CloseConnection):
                            await self._answer_close(event)
                            return None
                    if self.closed:
                        return None
                    await self._read()
        except TimeoutError:
            raise TransportTimeout(
                f"no message from the WebSocket {self._url} within {within:g} s"
            ) from None
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            self.closed = True
            raise ReadError(f"the WebSocket {self._url} broke") from exc

    async def _write(self, data: bytes) -> None:
        async with self._sending:
            await self._stream.send(data)

    def _part(self, data: str, finished: bool) -> str | None:
        self._parts.append(data)
        self._size += len(data)
        if self._size > self._max_message:
            self.closed = True
            raise ReadError(
                f"a message of the WebSocket {self._url} is over {self._max_message} bytes"
            )
        if not finished:
            return None
        whole = "".join(self._parts)
        self._parts, self._size = [], 0
        return whole

    async def _read(self) -> None:
        try:
            data: bytes | None = await self._stream.receive(_READ)
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            data = None
        if data is None:
            self.closed = True
        self._feed(data)

    def _feed(self, data: bytes | None) -> None:
        from wsproto.utilities import RemoteProtocolError as WsError

        try:
            self._protocol.receive_data(data)
            self._pending.extend(self._protocol.events())
        except WsError as exc:
            self.closed = True
            raise ReadError(f"the WebSocket {self._url} sent bad frames: {exc}") from None

    async def _answer_close(self, event: Any) -> None:
        from wsproto.connection import ConnectionState

        if self._protocol.state is ConnectionState.REMOTE_CLOSING:
            try:
                await self._write(self._protocol.send(event.response()))
            except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass
        self.closed = True
        await self._stream.aclose()

    async def aclose(self, grace: float = 1.0) -> None:
        """Close the connection (a close frame, then the stream)."""
        from wsproto.connection import ConnectionState
        from wsproto.events import CloseConnection

        if not self.closed and self._protocol.state is ConnectionState.OPEN:
            with anyio.move_on_after(grace, shield=True):
                try:
                    await self._write(self._protocol.send(CloseConnection(code=1000)))
                except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass
        self.closed = True
        with anyio.move_on_after(grace, shield=True):
            await self._stream.aclose()


async def connect(
    url: str,
    headers: Mapping[str, str],
    *,
    open_within: float,
    parse_error: ErrorParser | None = None,
    max_message: int = MAX_MESSAGE,
) -> WebSocket:
    """Open a WebSocket to ``url`` (``ws://`` or ``wss://``) with ``headers``.

    Raises:
        ConnectError: the connection or the handshake failed.
        TransportTimeout: not open within ``open_within`` seconds.
        ProviderError: the server refused the upgrade (``parse_error``'s error).
        UsageError: wsproto is not installed, or ``url`` is not a WebSocket URL.
    """
    wsproto = _wsproto()
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise UsageError(f"not a WebSocket URL: {redact_url(url)!r}")
    secure = parts.scheme == "wss"
    port = parts.port or (443 if secure else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    shown = redact_url(url)
    try:
        with anyio.fail_after(open_within):
            stream: anyio.abc.ByteStream
            if secure:
                stream = await anyio.connect_tcp(
                    parts.hostname,
                    port,
                    ssl_context=ssl.create_default_context(),
                    tls_standard_compatible=False,
                )
            else:
                stream = await anyio.connect_tcp(parts.hostname, port)
            try:
                protocol = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
                socket = WebSocket(stream, protocol, shown, max_message)
                await _handshake(socket, parts.netloc, target, headers, parse_error)
            except BaseException:
                await stream.aclose()
                raise
    except TimeoutError:
        raise TransportTimeout(
            f"the WebSocket {shown} did not open within {open_within:g} s"
        ) from None
    except (OSError, anyio.BrokenResourceError, anyio.EndOfStream, ssl.SSLError) as exc:
        raise ConnectError(f"cannot open the WebSocket {shown}: {type(exc).__name__}") from exc
    return socket


async def _handshake(
    socket: WebSocket,
    host: str,
    target: str,
    headers: Mapping[str, str],
    parse_error: ErrorParser | None,
) -> None:
    from wsproto.events import AcceptConnection, RejectConnection, RejectData, Request

    extra = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    await socket._stream.send(
        socket._protocol.send(Request(host=host, target=target, extra_headers=extra))
    )
    refused: RejectConnection | None = None
    body = b""
    while True:
        while socket._pending:
            event = socket._pending.popleft()
            if isinstance(event, AcceptConnection):
                return
            if isinstance(event, RejectConnection):
                refused = event
                if not event.has_body:
                    _refused(socket, refused, body, parse_error)
            elif isinstance(event, RejectData) and refused is not None:
                body = (body + event.data)[:_MAX_REFUSAL]
                if event.body_finished:
                    _refused(socket, refused, body, parse_error)
        if socket.closed:
            if refused is not None:
                _refused(socket, refused, body, parse_error)
            raise ConnectError(f"the WebSocket {socket._url} closed during its handshake")
        await socket._read()


def _refused(socket: WebSocket, refused: Any, body: bytes, parse_error: ErrorParser | None) -> None:
    from toolwire.http._errors import generic_error

    status = int(refused.status_code)
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in refused.headers}
    if parse_error is not None:
        raise parse_error(status, headers, body)
    raise generic_error(status, headers, body)
