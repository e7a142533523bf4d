"""OpenAI Responses over a WebSocket (``wss://…/v1/responses``).

Theory of operation: one connection carries the responses of one run, one
at a time. Each is asked with a ``response.create`` message holding the same
top-level fields as ``POST /v1/responses``, without ``stream`` (implicit)
and ``background`` (not supported over a socket), as the openai SDK's
``responses.connect()`` sends them. The server answers with the same events
as the SSE stream, each a text message, the last a ``response.completed``,
``.incomplete`` or ``.failed`` (or an ``error`` event).

A later turn continues the previous response of the connection: its message
names it (``previous_response_id``) and carries only what came after the
model's output (the tool results, a user's message), instead of the whole
context again. The server keeps that context for the connection only: a
response it does not know (another connection's, one it forgot) is refused
with an ``error`` event whose code is ``previous_response_not_found``, and a
connection that reached its lifetime (60 minutes) with
``websocket_connection_limit_reached``; neither generated anything.

A live response can be steered: a ``response.steer`` message names it and
carries user messages. The server acknowledges it (``response.steer.accepted``,
or ``.failed`` with the input returned) among the response's events; it then
ends the response at a safe point (``response.incomplete``, reason
``steered``) or lets it complete, and starts a successor on its own (its
``response.created`` follows the end: the steers are committed then). A
response that ends with calls keeps the steers queued
(``response.steer.pending`` after its end): they are prepended to the input
of the request that answers the calls, which must not send them again.

The emulation server's side of a connection is
:class:`~toolwire.stream.codecs.emulation.openai_responses_session.ResponsesSession`.
Reference: https://platform.openai.com/docs/guides/websocket-mode
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from toolwire.errors import UsageError
from toolwire.stream.codecs.emulation.openai_responses import ASSISTANT_ITEMS
from toolwire.stream.codecs.emulation.openai_responses_session import (
    CREATE,
    ENDS,
    EXPIRED,
    NOT_FOUND,
    ResponsesSession,
    ended_steered,
    event_response_id,
)
from toolwire.stream.codecs.openai_responses_notices import steer_request
from toolwire.stream.codecs.websocket import SocketMessage, SocketMode, SocketRead, SteerAck
from toolwire.stream.jsonio import dumps, loads

__all__ = [
    "EXPIRED",
    "NOT_FOUND",
    "RESPONSES_SOCKET",
    "new_items",
    "read_message",
    "socket_message",
    "socket_url",
    "steer_message",
]

_CREATED: Final = "response.created"
_STEER_ACKS: Final[dict[str, SteerAck]] = {
    "response.steer.accepted": "accepted",
    "response.steer.failed": "failed",
    "response.steer.pending": "pending",
}
_PARSED: Final = frozenset({*ENDS, _CREATED, *_STEER_ACKS, "error"})
_NOT_SENT: Final = ("stream", "background")
# OpenAI sends "type" first: most messages are told by their first bytes.
_TYPE_HEAD: Final = re.compile(r'\s*\{\s*"type"\s*:\s*"([^"\\]*)"')
_EVENT: Final = SocketRead("event")


def socket_url(base_url: str) -> str:
    """The socket of a base URL: ``https://host/v1`` -> ``wss://host/v1/responses``.

    Raises:
        UsageError: the base URL is not ``http(s)://``.
    """
    scheme, sep, rest = base_url.partition("://")
    socket_scheme = {"https": "wss", "http": "ws"}.get(scheme.lower()) if sep else None
    if socket_scheme is None:
        raise UsageError(f"a WebSocket needs an http:// or https:// base URL, not {scheme!r}")
    return f"{socket_scheme}://{rest.rstrip('/')}/responses"


def over_socket(body: dict[str, Any]) -> bool:
    """Whether a request can be sent over the socket (a background one cannot)."""
    return body.get("background") is not True and body.get("stream") is True


def _from_model(item: Any) -> bool:
    if not isinstance(item, dict):
        return False
    kind = item.get("type", "message")
    return kind in ASSISTANT_ITEMS or (kind == "message" and item.get("role") == "assistant")


def new_items(previous: list[Any], current: list[Any]) -> list[Any] | None:
    """What ``current`` (a request's whole input) adds after ``previous``
    (the previous request's) and the model's output that followed it: the
    items a continued response is sent (``None``: ``current`` does not
    continue ``previous`` that way, or adds nothing)."""
    n = len(previous)
    if len(current) <= n or current[:n] != previous:
        return None
    rest = current[n:]
    k = 0
    while k < len(rest) and _from_model(rest[k]):
        k += 1
    added = rest[k:]
    if not added or any(_from_model(item) for item in added):
        return None
    return added


def _user_text(item: Any) -> str | None:
    """The text of a user message item (``None``: another item)."""
    if not isinstance(item, dict) or item.get("role") != "user":
        return None
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        text = content[0].get("text")
        return text if isinstance(text, str) else None
    return None


def _without_held(added: list[Any], held: Sequence[str]) -> list[Any]:
    """``added`` without the user messages of the steers the server holds
    (one each, the first that says its text)."""
    waiting = list(held)
    kept = []
    for item in added:
        text = _user_text(item)
        if text is not None and text in waiting:
            waiting.remove(text)
            continue
        kept.append(item)
    return kept


def socket_message(
    body: dict[str, Any],
    previous_id: str | None,
    previous_input: list[Any] | None,
    held: Sequence[str] = (),
) -> SocketMessage:
    """The ``response.create`` message of an HTTP request body, continuing
    ``previous_id`` with only the new items where the input allows it (the
    steers the server holds for it, ``held``, left out: it prepends them)."""
    create: dict[str, Any] = {"type": CREATE}
    create.update((k, v) for k, v in body.items() if k not in _NOT_SENT)
    whole = body.get("input")
    whole_list = whole if isinstance(whole, list) else None
    continued = False
    if previous_id is not None and previous_input is not None and whole_list is not None:
        added = new_items(previous_input, whole_list)
        if added is not None:
            create["previous_response_id"] = previous_id
            create["input"] = _without_held(added, held) if held else added
            continued = True
    return SocketMessage(dumps(create), continued, whole_list)


def _error_code(obj: dict[str, Any]) -> Any:
    """The code of an ``error`` event: in its ``error`` object (the SDK's
    ``ResponseWsError``), or at its top level (``ResponseErrorEvent``, as
    in the SSE stream)."""
    inner = obj.get("error")
    return obj.get("code") or (inner.get("code") if isinstance(inner, dict) else None)


def read_message(text: str) -> SocketRead:
    """What a received message means (only a start, an end, a steer's
    acknowledgement or an error is parsed)."""
    head = _TYPE_HEAD.match(text)
    if head is not None and head.group(1) not in _PARSED:
        return _EVENT
    try:
        obj = loads(text)
    except ValueError:
        return _EVENT  # the stream decoder reports it
    if not isinstance(obj, dict):
        return _EVENT
    kind = obj.get("type")
    if kind in ENDS:
        steered = kind != "response.failed" and ended_steered(obj)
        return SocketRead("end", event_response_id(obj), successor=steered)
    if kind == _CREATED:
        return SocketRead("created", event_response_id(obj))
    if kind in _STEER_ACKS:
        return SocketRead("steer", steer=_STEER_ACKS[kind])
    if kind == "error":
        code = _error_code(obj)
        if code == NOT_FOUND:
            return SocketRead("not_found")
        if code == EXPIRED:
            return SocketRead("expired")
        return SocketRead("end")
    return _EVENT


def frame(text: str) -> bytes:
    """An event message as the SSE bytes the Responses stream decoder reads
    (a line break can only be JSON whitespace: it becomes a space)."""
    if "\n" in text or "\r" in text:
        text = text.replace("\r", " ").replace("\n", " ")
    return b"data: " + text.encode("utf-8") + b"\n\n"


def steer_message(response_id: str, texts: Sequence[str]) -> str:
    """The ``response.steer`` message that steers ``response_id`` with ``texts``."""
    return dumps(steer_request(response_id, texts))


RESPONSES_SOCKET: Final = SocketMode(
    route="/v1/responses",
    url=socket_url,
    accepts=over_socket,
    message=socket_message,
    read=read_message,
    frame=frame,
    session=ResponsesSession,
    steer=steer_message,
)
"""The Responses API's WebSocket mode."""
