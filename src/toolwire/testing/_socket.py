"""The emulation server's WebSocket mode (OpenAI Responses on ``/v1/responses``).

Each connection has the dialect's session
(:class:`~toolwire.stream.codecs.websocket.SocketSession`), which keeps the
context of the responses it answered, so a message that continues one is
read whole; the scenario's turn for it is rendered and encoded by the same
encoder as over HTTP, each event sent as one text message. A request the
server cannot answer gets an ``error`` event and the connection stays open.

:class:`SocketFaults` tells the server to close each connection after some
responses (a socket dropped between two turns), or to forget the responses
answered (the next continuation is refused as not found). Every connection
is logged in :attr:`EmulationServer.sockets
<toolwire.testing.EmulationServer.sockets>`: the messages received and the
responses sent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
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

    async def serve(websocket: WebSocket) -> None:
        await websocket.accept()
        log: dict[str, Any] = {"messages": [], "responses": 0}
        sockets.append(log)
        session = mode.session()
        encoder: Encoder = encoder_class(sse=True)
        handler._log(f"WEBSOCKET {websocket.url.path} open")
        try:
            while True:
                text = await websocket.receive_text()
                if faults.expire_after is not None and log["responses"] >= faults.expire_after:
                    log["messages"].append(jsonio.loads(text))
                    await websocket.send_text(encoder.dumps(session.expired()))
                    handler._log(f"WEBSOCKET {websocket.url.path} expired (fault)")
                    await websocket.close()
                    return
                cut = faults.cut_in == log["responses"] + 1
                answered = await _answer(
                    handler, dialect.name, encoder, session, websocket, text, log, cut=cut
                )
                if not answered:
                    continue
                if cut:
                    handler._log(f"WEBSOCKET {websocket.url.path} cut mid-response (fault)")
                    await websocket.close()
                    return
                log["responses"] += 1
                if faults.forget_after is not None and log["responses"] >= faults.forget_after:
                    session.forget()
                if faults.close_after is not None and log["responses"] >= faults.close_after:
                    handler._log(f"WEBSOCKET {websocket.url.path} closed by the server (fault)")
                    await websocket.close()
                    return
        except WebSocketDisconnect:
            handler._log(f"WEBSOCKET {websocket.url.path} closed by the client")

    return serve


async def _answer(
    handler: Handler,
    dialect: str,
    encoder: Encoder,
    session: SocketSession,
    websocket: WebSocket,
    text: str,
    log: dict[str, Any],
    *,
    cut: bool = False,
) -> bool:
    """Answer one message; ``True`` when a response was sent (not an error),
    only its first half when ``cut``."""
    try:
        log["messages"].append(jsonio.loads(text))
    except ValueError:
        log["messages"].append(text)
    handler._record(text.encode("utf-8"))
    body, refused = session.request(text)
    if body is None:
        assert refused is not None
        handler._log("WEBSOCKET message refused")
        await websocket.send_text(encoder.dumps(refused))
        return False
    raw = jsonio.dumps_bytes(body)
    try:
        parsed = parse_request(dialect, raw)
        turn = handler.scenario.turn_for(
            parsed.assistant_turns, last_results_have_error=parsed.latest_has_error
        )
        check_expected(turn.expect, parsed.media, parsed.assistant_turns + 1)
        reply = render(turn, parsed, input_tokens=prompt_size(raw) // 4)
    except (BadRequest, ScenarioError) as exc:
        handler._log(f"WEBSOCKET message 400 {exc.message}")
        await websocket.send_text(
            encoder.dumps(session.error("invalid_request_error", exc.message))
        )
        return False
    payloads = [frame.payload for frame in encoder.stream(reply)]
    if cut:
        payloads = payloads[: len(payloads) // 2]
    for n, payload in enumerate(payloads):
        if n and turn.delay:
            await anyio.sleep(turn.delay)
        await websocket.send_text(encoder.dumps(payload))
    if not cut:
        session.answered(body, payloads)
    handler._log(f"WEBSOCKET response (turn {parsed.assistant_turns + 1})")
    return True
