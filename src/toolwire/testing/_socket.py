"""The emulation server's WebSocket mode (OpenAI Responses on ``/v1/responses``).

Each connection has the dialect's session
(:class:`~toolwire.stream.codecs.websocket.SocketSession`), which keeps the
context of the responses it answered, so a message that continues one is
read whole; the scenario's turn for it is rendered and encoded by the same
encoder as over HTTP, each event sent as one text message (numbered in the
order sent). Messages are read while a response streams: a steer is
answered at once (the session decides what becomes of it, and whether a
successor follows the response), a request after the response. A request the
server cannot answer gets an ``error`` event and the connection stays open.

:class:`SocketFaults` tells the server to close each connection after some
responses (a socket dropped between two turns), or to forget the responses
answered (the next continuation is refused as not found). Every connection
is logged in :attr:`EmulationServer.sockets
<toolwire.testing.EmulationServer.sockets>`: the messages received and the
responses sent.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from toolwire.stream import jsonio
from toolwire.stream.codecs import WireDialect, registered
from toolwire.stream.codecs.websocket import SocketSession
from toolwire.testing._expect import check_expected
from toolwire.testing._handler import Handler
from toolwire.testing._parse import BadRequest, parse_request
from toolwire.testing._render import prompt_size, render
from toolwire.testing.encoders import Encoder
from toolwire.testing.scenario import ScenarioError

__all__ = ["SocketFaults", "socket_routes"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SocketFaults:
    """What the emulation server does wrong over its WebSockets, on purpose."""

    close_after: int | None = None
    """Close each connection after this many responses (``None``: never)."""
    forget_after: int | None = None
    """Forget the responses answered on a connection once it has sent this
    many: the next request continuing one is refused as not found."""
    expire_after: int | None = None
    """Answer the request after this many responses as OpenAI answers one on
    a connection past its 60 minutes (an error event, then the close)."""
    cut_in: int | None = None
    """Close each connection halfway through its response number ``cut_in``
    (1: the first), as a network failure mid-stream would."""
    pause_in: int | None = None
    """Halfway through the server's WebSocket response number ``pause_in``
    (1: the first, counted over all its connections), wait for the client's
    next message (a steer) before going on, 10 seconds at most: a test
    steers a response while it streams."""
    refuse_steers: bool = False
    """Refuse every steer (``response.steer.failed``, ``steering_not_supported``),
    as for a model that cannot be steered."""


def socket_routes(
    handler: Handler, faults: SocketFaults, sockets: list[Any]
) -> list[WebSocketRoute]:
    """The WebSocket routes of the dialects that have a WebSocket mode;
    each connection is logged in ``sockets``."""
    return [
        WebSocketRoute(d.socket.route, _endpoint(handler, d, faults, sockets))
        for d in registered()
        if d.socket is not None and d.encoder is not None
    ]


def _endpoint(
    handler: Handler, dialect: WireDialect, faults: SocketFaults, sockets: list[Any]
) -> Callable[[WebSocket], Awaitable[None]]:
    assert dialect.socket is not None and dialect.encoder is not None
    mode, encoder_class = dialect.socket, dialect.encoder
    begun = itertools.count(1)  # the responses begun, over all connections

    async def serve(websocket: WebSocket) -> None:
        await websocket.accept()
        log: dict[str, Any] = {"messages": [], "responses": 0}
        sockets.append(log)
        connection = _Connection(
            handler, dialect.name, encoder_class(sse=True), mode.session(), websocket, log, faults,
            begun,
        )  # fmt: skip
        handler._log(f"WEBSOCKET {websocket.url.path} open")
        send, received = anyio.create_memory_object_stream[str | None](_INBOX)
        async with anyio.create_task_group() as group:
            group.start_soon(_pump, websocket, send)
            with received:
                try:
                    await connection.converse(received)
                except WebSocketDisconnect:
                    handler._log(f"WEBSOCKET {websocket.url.path} closed by the client")
            group.cancel_scope.cancel()

    return serve


_INBOX = 64
"""Messages received and not yet read, at most (the reader waits beyond)."""
_PAUSE = 10.0
"""Seconds a paused response waits for the client's next message, at most."""


async def _pump(websocket: WebSocket, send: MemoryObjectSendStream[str | None]) -> None:
    """Read the connection's messages into ``send`` (``None``: it closed), so
    that a message can arrive while a response is sent."""
    with send:
        try:
            while True:
                await send.send(await websocket.receive_text())
        except (WebSocketDisconnect, RuntimeError):  # closed by the peer, or by the server
            with contextlib.suppress(anyio.BrokenResourceError):
                await send.send(None)
        except anyio.BrokenResourceError:
            return


class _Connection:
    """One connection: its messages read in order, each answered (a
    response, its successors, or an error event)."""

    def __init__(
        self,
        handler: Handler,
        dialect: str,
        encoder: Encoder,
        session: SocketSession,
        websocket: WebSocket,
        log: dict[str, Any],
        faults: SocketFaults,
        begun: Iterator[int],
    ) -> None:
        self.handler, self.dialect, self.encoder = handler, dialect, encoder
        self.session, self.websocket, self.log, self.faults = session, websocket, log, faults
        self.begun = begun
        """Numbers the responses begun (the endpoint's count, over its connections)."""
        self.later: list[str] = []
        """Requests received while a response streamed, answered after it."""
        self.path = websocket.url.path

    async def converse(self, received: MemoryObjectReceiveStream[str | None]) -> None:
        while True:
            text = self.later.pop(0) if self.later else await received.receive()
            if text is None:
                self.handler._log(f"WEBSOCKET {self.path} closed by the client")
                return
            self._logged(text)
            refused = self.session.steer(text, None)  # no response streams now
            if refused is not None:
                await self._send(refused, None)
                continue
            expire = self.faults.expire_after
            if expire is not None and self.log["responses"] >= expire:
                await self._send(self.session.expired(), None)
                self.handler._log(f"WEBSOCKET {self.path} expired (fault)")
                await self.websocket.close()
                return
            self.handler._record(text.encode("utf-8"))
            body, refusal = self.session.request(text)
            if body is None:
                assert refusal is not None
                self.handler._log("WEBSOCKET message refused")
                await self._send(refusal, None)
                continue
            if not await self._respond(body, received):
                return

    async def _respond(
        self, body: dict[str, Any] | None, received: MemoryObjectReceiveStream[str | None]
    ) -> bool:
        """Answer ``body`` and the successors the server starts after it;
        ``False`` when the connection was closed."""
        faults = self.faults
        while body is not None:
            cut = faults.cut_in == self.log["responses"] + 1
            payloads = await self._stream(body, received, cut=cut)
            if payloads is None:  # refused: an error event was sent
                return True
            if cut:
                self.handler._log(f"WEBSOCKET {self.path} cut mid-response (fault)")
                await self.websocket.close()
                return False
            self.log["responses"] += 1
            self.session.answered(body, payloads)
            follow = self.session.follow(body, payloads)
            for event in follow.events:
                await self._send(event, None)
            body = follow.successor
            if faults.forget_after is not None and self.log["responses"] >= faults.forget_after:
                self.session.forget()
            if faults.close_after is not None and self.log["responses"] >= faults.close_after:
                self.handler._log(f"WEBSOCKET {self.path} closed by the server (fault)")
                await self.websocket.close()
                return False
        return True

    async def _stream(
        self,
        body: dict[str, Any],
        received: MemoryObjectReceiveStream[str | None],
        *,
        cut: bool,
    ) -> list[Any] | None:
        """Render and send the response of ``body`` (its first half when
        ``cut``), reading the steers that arrive meanwhile: its payloads, or
        ``None`` when the request was refused."""
        raw = jsonio.dumps_bytes(body)
        try:
            parsed = parse_request(self.dialect, raw)
            turn = self.handler.scenario.turn_for(
                parsed.assistant_turns, last_results_have_error=parsed.latest_has_error
            )
            check_expected(turn.expect, parsed.media, parsed.assistant_turns + 1)
            reply = render(turn, parsed, input_tokens=prompt_size(raw) // 4)
        except (BadRequest, ScenarioError) as exc:
            self.handler._log(f"WEBSOCKET message 400 {exc.message}")
            await self._send(self.session.error("invalid_request_error", exc.message), None)
            return None
        payloads = [frame.payload for frame in self.encoder.stream(reply)]
        if cut:
            payloads = payloads[: len(payloads) // 2]
        pause = self.faults.pause_in == next(self.begun)
        live: str | None = None
        numbers = iter(range(1 << 30))
        for n, payload in enumerate(payloads):
            if n and turn.delay:
                await anyio.sleep(turn.delay)
            if pause and n == len(payloads) // 2:
                with anyio.move_on_after(_PAUSE):
                    await self._take(await received.receive(), live, numbers)
            while True:  # what arrived while the response streamed
                try:
                    await self._take(received.receive_nowait(), live, numbers)
                except anyio.WouldBlock:
                    break
            await self._send(payload, numbers)
            live = live or self.session.started(payload)
        self.handler._log(f"WEBSOCKET response (turn {parsed.assistant_turns + 1})")
        return payloads

    async def _take(self, text: str | None, live: str | None, numbers: Any) -> None:
        """A message that arrived while the response ``live`` streamed: a
        steer is answered now, a request after the response."""
        if text is None:
            raise WebSocketDisconnect()
        answer = self.session.steer(text, live, supported=not self.faults.refuse_steers)
        if answer is None:
            self.later.append(text)
            return
        self._logged(text)
        await self._send(answer, numbers)

    def _logged(self, text: str) -> None:
        try:
            self.log["messages"].append(jsonio.loads(text))
        except ValueError:
            self.log["messages"].append(text)

    async def _send(self, payload: Any, numbers: Any) -> None:
        """Send one event (numbered in its response's order, when it has one)."""
        if numbers is not None and isinstance(payload, dict):
            payload = {**payload, "sequence_number": next(numbers)}
        await self.websocket.send_text(self.encoder.dumps(payload))
