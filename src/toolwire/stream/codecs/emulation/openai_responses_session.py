"""The emulation server's side of one Responses WebSocket connection.

Theory of operation: a :class:`ResponsesSession` keeps the context of each
response it answered (its input and its output), so a ``response.create``
that continues one (``previous_response_id``, only the new items) is read
whole; a connection that reached its lifetime and a continued response it
does not know are refused as OpenAI refuses them.

It steers as the API does, in the one way the emulation needs: a
``response.steer`` naming the live response is accepted (queued), one that
names another is refused (``response.steer.failed``, its input returned).
When the response ends, the steers it queued are committed to a successor
the server starts on its own (the response's context and the steers' input
its request), unless the response asked for client tools: then they wait
(``response.steer.pending`` after the end, a stub per call owed) and are
prepended to the input of the request that continues it. A response that
ended ``steered`` of its own (a scenario's ``steer: accepted``) is followed
by a successor too, with nothing added.
"""

from __future__ import annotations

from typing import Any, Final

from toolwire.stream.codecs.emulation._base import hex_token
from toolwire.stream.codecs.websocket import SocketFollow
from toolwire.stream.jsonio import loads

__all__ = ["ENDS", "ResponsesSession", "ended_steered", "event_response_id"]

CREATE: Final = "response.create"
STEER: Final = "response.steer"
NOT_FOUND: Final = "previous_response_not_found"
"""The error code of a continued response the connection does not know."""
EXPIRED: Final = "websocket_connection_limit_reached"
"""The error code of a connection past its lifetime."""
ENDS: Final = frozenset({"response.completed", "response.incomplete", "response.failed"})
"""The types of the events that end a response."""
_KEPT_CONTEXTS = 256
"""Responses whose context one emulated connection keeps, at most."""
_CLIENT_CALLS: Final = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
}


class ResponsesSession:
    """The emulation server's side of one connection (see the module docstring)."""

    def __init__(self) -> None:
        self._contexts: dict[str, list[Any]] = {}
        self._queued: dict[str, list[tuple[str, list[Any]]]] = {}
        """The steers accepted for a live response: their ids and input."""
        self._held: dict[str, list[Any]] = {}
        """The input of steers pending on a response that asked for calls."""
        self._steers = 0

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
        held = self._held.pop(previous, [])
        body["input"] = [*context, *held, *_as_items(body.get("input"))]
        return body, None

    def answered(self, body: dict[str, Any], payloads: list[Any]) -> None:
        """See :class:`~toolwire.stream.codecs.websocket.SocketSession`."""
        found, output = _ended(payloads)
        if found is None or output is None:
            return
        self._contexts.pop(found, None)
        self._contexts[found] = [*_as_items(body.get("input")), *output]
        while len(self._contexts) > _KEPT_CONTEXTS:
            del self._contexts[next(iter(self._contexts))]

    def forget(self) -> None:
        """See :class:`~toolwire.stream.codecs.websocket.SocketSession`."""
        self._contexts.clear()
        self._held.clear()

    def steer(
        self, text: str, live: str | None, *, supported: bool = True
    ) -> dict[str, Any] | None:
        """See :class:`~toolwire.stream.codecs.websocket.SocketSession`."""
        try:
            obj = loads(text)
        except ValueError:
            return None
        if not isinstance(obj, dict) or obj.get("type") != STEER:
            return None
        self._steers += 1
        steer_id = "steer_" + hex_token(f"{live}:{self._steers}", 24)
        target = obj.get("previous_response_id")
        items = _as_items(obj.get("input"))
        steer = {"id": steer_id, "previous_response_id": target}
        if not supported or live is None or target != live or not items:
            code, message = (
                ("steering_not_supported", "This model does not support steering.")
                if not supported
                else ("invalid_input", "Steering input must be non-empty.")
                if not items
                else ("response_not_active", f"Response '{str(target)[:80]}' is not active.")
            )
            error = {"code": code, "message": message, "type": "invalid_request_error"}
            return {"type": "response.steer.failed", "error": error,
                    "steer": {**steer, "input": obj.get("input")}}  # fmt: skip
        self._queued.setdefault(live, []).append((steer_id, items))
        return {"type": "response.steer.accepted", "steer": steer}

    def follow(self, body: dict[str, Any], payloads: list[Any]) -> SocketFollow:
        """See :class:`~toolwire.stream.codecs.websocket.SocketSession`."""
        found, output = _ended(payloads)
        queued = self._queued.pop(found, []) if found is not None else []
        if found is None or output is None or payloads[-1].get("type") == "response.failed":
            return SocketFollow()
        stubs = [
            {"type": _CLIENT_CALLS[i["type"]], "call_id": i.get("call_id"), "name": i.get("name")}
            for i in output
            if isinstance(i, dict) and i.get("type") in _CLIENT_CALLS
        ]
        if stubs and queued:
            self._held[found] = [item for _, items in queued for item in items]
            events = [
                {"type": "response.steer.pending", "reason": "waiting_for_required_input",
                 "required_input": stubs, "steer": {"id": steer_id, "previous_response_id": found}}
                for steer_id, _ in queued
            ]  # fmt: skip
            return SocketFollow(events=events)
        if queued or ended_steered(payloads[-1]):
            context = [*_as_items(body.get("input")), *output]
            added = [item for _, items in queued for item in items]
            return SocketFollow(successor={**body, "input": [*context, *added]})
        return SocketFollow()

    def started(self, payload: Any) -> str | None:
        """See :class:`~toolwire.stream.codecs.websocket.SocketSession`."""
        if not isinstance(payload, dict) or payload.get("type") != "response.created":
            return None
        return event_response_id(payload)

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


def event_response_id(event: dict[str, Any]) -> str | None:
    """The id of the response an event carries whole (its start, its end)."""
    response = event.get("response")
    found = response.get("id") if isinstance(response, dict) else None
    return found if isinstance(found, str) else None


def ended_steered(end: dict[str, Any]) -> bool:
    """Whether an end event ends its response for a steer (a successor follows)."""
    response = end.get("response")
    details = response.get("incomplete_details") if isinstance(response, dict) else None
    return isinstance(details, dict) and details.get("reason") == "steered"


def _ended(payloads: list[Any]) -> tuple[str | None, list[Any] | None]:
    """The id and output of the response whose last event ends ``payloads``."""
    last = payloads[-1] if payloads else None
    if not isinstance(last, dict) or last.get("type") not in ENDS:
        return None, None
    response = last.get("response")
    output = response.get("output") if isinstance(response, dict) else None
    return event_response_id(last), (output if isinstance(output, list) else None)


def _as_items(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return list(value) if isinstance(value, list) else []
