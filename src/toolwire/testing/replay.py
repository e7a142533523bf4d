"""``toolwire serve --cassette``: answering requests from a recorded cassette.

Theory of operation: each request is matched to a recorded exchange
(:mod:`toolwire.testing._match`: method, path, query and the canonical body)
and answered with the recorded status, headers and body, sent as the same
bytes in the same chunks, read from the body file as they go (a body is never
held whole). With ``realtime`` each chunk waits for its recorded arrival time,
counted from when the request was read, so a client sees the recorded pacing;
a recording that was cut is cut again at the same byte.

A request that matches nothing gets HTTP 400 with a JSON body whose
``error.message`` names the nearest recorded request and how it differs (the
shape the OpenAI, Anthropic and Gemini SDKs all read), and the message is kept
in :attr:`ReplayApp.mismatches` so a test can fail on it even when the client
swallowed the error.
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, ClassVar

import anyio
from starlette.types import Receive, Scope, Send

from toolwire.stream.codecs import registered
from toolwire.testing._match import VOLATILE_FIELDS, Matcher, Mismatch
from toolwire.testing.cassette import Cassette, Exchange, header_bytes
from toolwire.testing.proxy import MAX_REQUEST_BYTES, json_error
from toolwire.testing.serving import LoopbackServer

__all__ = ["CassetteServer", "ReplayApp"]

MISMATCH_STATUS = 400
"""The status of the answer to a request the cassette does not hold."""

_NOT_REPLAYED = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length"})


class ReplayApp:
    """Answers requests from a cassette, as an ASGI application.

    Args:
        cassette: the recorded exchanges.
        ignore: body fields left out of matching, besides
            :data:`~toolwire.testing._match.VOLATILE_FIELDS`.
        realtime: send each chunk at its recorded time.
        log: called with one line per request.
        max_request_bytes: the largest request body read (413 beyond).
        sleep: waits ``seconds`` (``anyio.sleep``).
        clock: seconds on a monotonic clock (``time.perf_counter``); tests
            pass a fake one with ``sleep``.
    """

    def __init__(
        self,
        cassette: Cassette,
        *,
        ignore: Iterable[str] = (),
        realtime: bool = False,
        log: Callable[[str], None] | None = None,
        max_request_bytes: int = MAX_REQUEST_BYTES,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.cassette = cassette
        self.matcher = Matcher(cassette.exchanges, (*VOLATILE_FIELDS, *ignore))
        self.realtime = realtime
        self.log = log
        self.max_request_bytes = max_request_bytes
        self.mismatches: list[str] = []
        """The message of each request that matched nothing, in order."""
        self._sleep = sleep
        self._clock = clock

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > self.max_request_bytes:
                start, end = json_error(413, "request_too_large", "the request body is too large")
                await send(start)
                await send(end)
                return
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        read_at = self._clock()
        raw_path = scope.get("raw_path")
        method = scope["method"]
        path = raw_path.decode("latin-1") if raw_path else scope["path"]
        query = scope["query_string"].decode("latin-1")
        content_type = next(
            (v.decode("latin-1") for k, v in scope["headers"] if k.lower() == b"content-type"), None
        )
        key = self.matcher.key(method, path, query, bytes(body), content_type)
        found = self.matcher.match(key)
        if isinstance(found, Mismatch):
            text = found.message(str(self.cassette.directory), _root(scope))
            self.mismatches.append(text)
            self._log(f"{method} {path} {MISMATCH_STATUS} no recorded exchange matches")
            start, end = json_error(MISMATCH_STATUS, "cassette_mismatch", text)
            await send(start)
            await send(end)
            return
        self._log(f"{method} {path} {found.response.status} replayed {found.sidecar.name}")
        await self._play(found, read_at, send)

    def _log(self, line: str) -> None:
        if self.log is not None:
            self.log(line)

    async def _wait_until(self, started: float, at_ms: float) -> None:
        if self.realtime:
            delay = started + at_ms / 1000 - self._clock()
            if delay > 0:
                await self._sleep(delay)

    async def _play(self, exchange: Exchange, started: float, send: Send) -> None:
        response = exchange.response
        headers = [
            (k.encode("ascii"), header_bytes(v))
            for k, v in response.headers
            if k.lower() not in _NOT_REPLAYED
        ]
        if response.header("content-length") is not None:
            # The body file's size, which is the recorded one unless edited.
            size = response.body_file.stat().st_size
            headers.append((b"content-length", str(size).encode()))
        await self._wait_until(started, response.headers_ms)
        await send({"type": "http.response.start", "status": response.status, "headers": headers})
        for data, at in response.iter_chunks():
            await self._wait_until(started, at)
            await send({"type": "http.response.body", "body": data, "more_body": True})
        if response.complete:
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        # A recording that was cut ends here too: uvicorn closes the connection.


class CassetteServer(LoopbackServer):
    """A loopback server replaying a cassette (``toolwire serve --cassette``).

    Args:
        cassette: a cassette directory, or a loaded :class:`Cassette`.
        ignore: body fields left out of matching, besides the volatile ones.
        realtime: send each chunk at its recorded time.
        log: called with one line per request.
        host: where to listen (loopback unless ``allow_remote``).
        port: the port to listen on (0: any free one).
        allow_remote: allow a ``host`` that is not loopback.

    Raises:
        CassetteError: the cassette cannot be read.
        UsageError: a non-loopback ``host`` without ``allow_remote``.
    """

    label = "cassette server"
    # The recorded Server and Date headers are the ones sent.
    uvicorn_options: ClassVar[Mapping[str, Any]] = {
        "server_header": False,
        "date_header": False,
        "proxy_headers": False,
    }

    def __init__(
        self,
        cassette: Cassette | str | os.PathLike[str],
        *,
        ignore: Iterable[str] = (),
        realtime: bool = False,
        log: Callable[[str], None] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        allow_remote: bool = False,
    ) -> None:
        loaded = cassette if isinstance(cassette, Cassette) else Cassette.load(cassette)
        self.replay = ReplayApp(loaded, ignore=ignore, realtime=realtime, log=log)
        super().__init__(self.replay, host=host, port=port, allow_remote=allow_remote)

    def __repr__(self) -> str:
        state = self.base_url if self._socket is not None else "stopped"
        return f"<CassetteServer {str(self.replay.cassette.directory)!r} {state}>"

    @property
    def mismatches(self) -> list[str]:
        """The message of each request that matched nothing, in order."""
        return self.replay.mismatches

    def base_urls(self) -> dict[str, str]:
        """The base URL a client of each recorded dialect points at, by
        dialect, in recording order: the recorded path without the
        dialect's endpoint (``/v1/chat/completions`` gives ``.../v1``)."""
        return {
            dialect: self.base_url + prefix
            for dialect, prefix in recorded_prefixes(self.replay.cassette).items()
        }


def _root(scope: Scope) -> str:
    """The URL of the server's root, as the client reached it."""
    server = scope.get("server")
    if not server or server[1] is None:
        return "http://HOST:PORT"
    host, port = server
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def recorded_prefixes(cassette: Cassette) -> dict[str, str]:
    """The path of each recorded dialect's base URL, in recording order."""
    found: dict[str, str] = {}
    for exchange in cassette.exchanges:
        dialect, path = exchange.dialect, exchange.request.path.partition("?")[0].rstrip("/")
        if dialect is None or dialect in found:
            continue
        known = {d.name: d for d in registered()}.get(dialect)
        tail = known.client_path if known is not None else ""
        if not tail and "/models/" in path:  # the path holds the model
            found[dialect] = path[: path.rindex("/models/")]
        elif tail and path.endswith(tail):
            found[dialect] = path[: len(path) - len(tail)]
    return found
