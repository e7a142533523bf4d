"""A dialect's WebSocket mode: what a client sends and reads over one socket.

Theory of operation: a dialect that can stream its answers over a WebSocket
(OpenAI Responses: ``wss://…/v1/responses``, one ``response.create`` message
per response, answered by the same events as its SSE stream) registers a
:class:`SocketMode`. Everything it holds is pure: the socket's URL for a
base URL, the message that asks for a response (continuing a previous one
with only the new input, where it can), what one received message means to
the client (an event for the stream decoder, the end of a response, or a
refusal to act on), the message that steers a live response (where the
dialect can), and, for the emulation server, a :class:`SocketSession` that
reads the messages of one connection. The I/O lives elsewhere
(:mod:`toolwire.http.websocket`, :mod:`toolwire.providers`,
:mod:`toolwire.testing`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

__all__ = [
    "SocketFollow",
    "SocketMessage",
    "SocketMode",
    "SocketRead",
    "SocketSession",
    "SteerAck",
]

SteerAck = Literal["accepted", "failed", "pending"]
"""What the server said of a steer sent on the connection."""


@dataclass(frozen=True, slots=True)
class SocketRead:
    """What one message received means to the client."""

    kind: Literal["event", "created", "steer", "end", "not_found", "expired"]
    """``event``: one more event of the response; ``created``: its first
    (a response began: a successor the server started on its own when it
    comes after an end); ``steer``: what became of a steer sent on the
    connection; ``end``: the response's last event (decoded too);
    ``not_found``: the response continued is not known here (nothing was
    generated: ask again with the whole context); ``expired``: the
    connection reached its lifetime (nothing was generated: reconnect)."""
    response_id: str | None = None
    """The response's id, on the events that name it (its start, its end)."""
    steer: SteerAck | None = None
    """On a ``steer``: the steer was accepted (queued), failed (its input
    returned), or is pending (the response ended with calls: the queued
    input goes with the request that answers them)."""
    successor: bool = False
    """On an ``end``: the server starts a successor on its own (a response
    ended for a steer)."""


@dataclass(frozen=True, slots=True)
class SocketMessage:
    """A request as a socket message: its text, and whether it continues the
    previous response (with only the new input) or carries the whole context."""

    text: str
    continued: bool
    input: list[Any] | None
    """The request's whole input (what the next request may continue after)."""


@dataclass(frozen=True, slots=True)
class SocketFollow:
    """What the emulation server sends after a response ends: events that
    follow it (a pending steer's), and the request of a successor it starts
    on its own (``None``: none)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    successor: dict[str, Any] | None = None


class SocketSession(Protocol):
    """The emulation server's side of one connection: the context of each
    response it answered, so a request that continues one reads whole."""

    def request(self, text: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The request body a message asks for, its context made whole, or
        the error event that answers it instead (not a request, a response
        continued that is not known here): one of the two is ``None``."""
        ...

    def answered(self, body: dict[str, Any], payloads: list[Any]) -> None:
        """Remember the response ``payloads`` (the events sent) answered to ``body``."""
        ...

    def forget(self) -> None:
        """Forget every response answered (each continuation is then refused)."""
        ...

    def steer(
        self, text: str, live: str | None, *, supported: bool = True
    ) -> dict[str, Any] | None:
        """The answer to a steering message received while the response
        ``live`` streams (``None``: none streams): its acknowledgement or
        failure (every one fails when not ``supported``: a model that cannot
        be steered); ``None`` when ``text`` is no steering message."""
        ...

    def follow(self, body: dict[str, Any], payloads: list[Any]) -> SocketFollow:
        """What follows the response ``payloads`` answered to ``body``."""
        ...

    def started(self, payload: Any) -> str | None:
        """The id of the response the event ``payload`` begins (``None``: it begins none)."""
        ...

    def error(self, code: str, message: str) -> dict[str, Any]:
        """An error event payload."""
        ...

    def expired(self) -> dict[str, Any]:
        """The error event of a connection past its lifetime."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class SocketMode:
    """A dialect's WebSocket mode (see the module docstring)."""

    route: str
    """The emulation server's WebSocket route (the HTTP route's path)."""
    url: Callable[[str], str]
    """The socket's URL for a provider's base URL (``https`` -> ``wss``)."""
    accepts: Callable[[dict[str, Any]], bool]
    """Whether an HTTP request body can be sent over the socket (else over HTTP)."""
    message: Callable[[dict[str, Any], str | None, list[Any] | None, Sequence[str]], SocketMessage]
    """The message asking for the response of an HTTP request body, given the
    previous response answered on this connection and its request's whole
    input (``None``, ``None``: none, or not to be continued), and the texts
    of the steers the server holds for it (left out of a continuation: the
    server adds them)."""
    read: Callable[[str], SocketRead]
    """What a received message means (cheap: most are only looked at)."""
    frame: Callable[[str], bytes]
    """A received event as the bytes the dialect's stream decoder reads."""
    session: Callable[[], SocketSession]
    """A new connection's server-side session (the emulation server)."""
    steer: Callable[[str, Sequence[str]], str] | None = None
    """The message that steers the live response of an id with texts (each a
    user message), where the dialect can steer (``None``: it cannot)."""
