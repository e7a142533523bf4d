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

:class:`ResponsesSession` is the emulation server's side of a connection.
Reference: https://platform.openai.com/docs/guides/websocket-mode
"""

from __future__ import annotations

import re
from typing import Any, Final

from toolwire.errors import UsageError
from toolwire.stream.codecs.emulation.openai_responses import ASSISTANT_ITEMS
from toolwire.stream.codecs.websocket import SocketMessage, SocketMode, SocketRead
from toolwire.stream.jsonio import dumps, loads

__all__ = [
    "EXPIRED",
    "NOT_FOUND",
    "RESPONSES_SOCKET",
    "ResponsesSession",
    "new_items",
    "read_message",
    "socket_message",
    "socket_url",
]

CREATE: Final = "response.create"
NOT_FOUND: Final = "previous_response_not_found"
"""The error code of a continued response the connection does not know."""
EXPIRED: Final = "websocket_connection_limit_reached"
"""The error code of a connection past its lifetime."""
_ENDS: Final = frozenset({"response.completed", "response.incomplete", "response.failed"})
_NOT_SENT: Final = ("stream", "background")
# OpenAI sends "type" first: most messages are told by their first bytes.
_TYPE_HEAD: Final = re.compile(r'\s*\{\s*"type"\s*:\s*"([^"\\]*)"')
_EVENT: Final = SocketRead("event")
_KEPT_CONTEXTS = 256
"""Responses whose context one emulated connection keeps, at most."""


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


def socket_message(
    body: dict[str, Any], previous_id: str | None, previous_input: list[Any] | None
) -> SocketMessage:
    """The ``response.create`` message of an HTTP request body, continuing
    ``previous_id`` with only the new items where the input allows it."""
    create: dict[str, Any] = {"type": CREATE}
    create.update((k, v) for k, v in body.items() if k not in _NOT_SENT)
    whole = body.get("input")
    whole_list = whole if isinstance(whole, list) else None
    continued = False
    if previous_id is not None and previous_input is not None and whole_list is not None:
        added = new_items(previous_input, whole_list)
        if added is not None:
            create["previous_response_id"] = previous_id
            create["input"] = added
            continued = True
    return SocketMessage(dumps(create), continued, whole_list)


def _error_code(obj: dict[str, Any]) -> Any:
    """The code of an ``error`` event: in its ``error`` object (the SDK's
    ``ResponseWsError``), or at its top level (``ResponseErrorEvent``, as
    in the SSE stream)."""
    inner = obj.get("error")
    return obj.get("code") or (inner.get("code") if isinstance(inner, dict) else None)


def read_message(text: str) -> SocketRead:
    """What a received message means (only an end or an error is parsed)."""
    head = _TYPE_HEAD.match(text)
    if head is not None and head.group(1) not in _ENDS and head.group(1) != "error":
        return _EVENT
    try:
        obj = loads(text)
    except ValueError:
        return _EVENT  # the stream decoder reports it
    if not isinstance(obj, dict):
        return _EVENT
    kind = obj.get("type")
    if kind in _ENDS:
        response = obj.get("response")
        found = response.get("id") if isinstance(response, dict) else None
        return SocketRead("end", found if isinstance(found, str) else None)
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


class ResponsesSession:
    """The emulation server's side of one connection: each response's
    context (its input and its output), so that a request continuing one
    is read whole."""

    def __init__(self) -> None:
        self._contexts: dict[str, list[Any]] = {}

    def request(self, text: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """See :class:`~toolwire.stream.codecs.websocket.SocketSession`."""
        try:
            obj = loads(text)
        except ValueError as exc:
            return None, self.error("invalid_json", f"the message is not JSON: {exc}")
        if not isinstance(obj, dict) or obj.get("type") != CREATE:
            kind = obj.get("type") if isinstance(obj, dict) else None
            return None, self.error("unknown_event", f"unsupported message type {kind!r}")
        body = {k: v for k, v in obj.items() if k != "type"}
        body["stream"] = True
        previous = body.pop("previous_response_id", None)
        if previous is None:
            return body, None
        context = self._contexts.get(previous) if isinstance(previous, str) else None
        if context is None:
            message = f"Previous response with id '{str(previous)[:80]}' not found."
            return None, self.error(NOT_FOUND, message, "previous_response_id")
        body["input"] = [*context, *_as_items(body.get("input"))]
        return body, None

    def answered(self, body: dict[str, Any], payloads: list[Any]) -> None:
        """See :class:`~toolwire.stream.codecs.websocket.SocketSession`."""
        last = payloads[-1] if payloads else None
        if not isinstance(last, dict) or last.get("type") not in _ENDS:
            return
        response = last.get("response")
        found = response.get("id") if isinstance(response, dict) else None
        output = response.get("output") if isinstance(response, dict) else None
        if not isinstance(found, str) or not isinstance(output, list):
            return
        self._contexts.pop(found, None)
        self._contexts[found] = [*_as_items(body.get("input")), *output]
        while len(self._contexts) > _KEPT_CONTEXTS:
            del self._contexts[next(iter(self._contexts))]

    def forget(self) -> None:
        """See :class:`~toolwire.stream.codecs.websocket.SocketSession`."""
        self._contexts.clear()

    def expired(self) -> dict[str, Any]:
        """See :class:`~toolwire.stream.codecs.websocket.SocketSession`."""
        message = (
            "Responses websocket connection limit reached (60 minutes). Create a new connection."
        )
        return self.error(EXPIRED, message)

    def error(self, code: str, message: str, param: str | None = None) -> dict[str, Any]:
        """An ``error`` event, as the SDK's ``ResponseWsError``: the error in
        its ``error`` object, with the HTTP status of a refused request."""
        error = {"type": "invalid_request_error", "code": code, "message": message, "param": param}
        return {"type": "error", "status": 400, "error": error}


def _as_items(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []


RESPONSES_SOCKET: Final = SocketMode(
    route="/v1/responses",
    url=socket_url,
    accepts=over_socket,
    message=socket_message,
    read=read_message,
    frame=frame,
    session=ResponsesSession,
)
"""The Responses API's WebSocket mode."""
