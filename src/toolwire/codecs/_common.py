"""Helpers shared by the codecs: JSON payloads and provider error events."""

from __future__ import annotations

from typing import Any

from toolwire._json import JSONDecodeError, loads
from toolwire.errors import RemoteProtocolError, StreamErrorEvent

__all__ = ["error_event", "is_done_trailer", "load_payload"]


def is_done_trailer(data: str) -> bool:
    """Whether a payload is OpenAI's ``[DONE]`` line, which servers of other
    dialects (Cohere v2, OpenRouter's Responses endpoint) send after their own
    end event."""
    return data[:1] == "[" and data.strip() == "[DONE]"


def load_payload(data: str, api: str) -> dict[str, Any]:
    """Parse one frame's JSON; the payload must be an object."""
    try:
        obj = loads(data)
    except (JSONDecodeError, ValueError) as exc:
        raise RemoteProtocolError(
            f"{api}: a stream chunk is not valid JSON ({exc})", raw=data
        ) from exc
    if not isinstance(obj, dict):
        raise RemoteProtocolError(
            f"{api}: a stream chunk is {type(obj).__name__}, expected a JSON object", raw=data
        )
    return obj


def error_event(payload: Any, api: str) -> StreamErrorEvent:
    """A provider's in-stream error payload as a typed error.

    Accepts ``{"error": {...}}``, the inner object, or a bare string, as
    providers disagree on the shape (OpenAI, Groq, Anthropic, Gemini).
    """
    err: Any = payload
    if isinstance(err, dict) and "error" in err:
        err = err["error"]
    if isinstance(err, str):
        return StreamErrorEvent(err, provider=api, body=payload)
    if not isinstance(err, dict):
        return StreamErrorEvent(
            f"{api}: the provider reported an error", provider=api, body=payload
        )
    message = err.get("message")
    if not isinstance(message, str) or not message:
        message = f"{api}: the provider reported an error"
    # The HTTP status goes by several names: Groq "status_code", Gemini's
    # integer "code", and "status" where it is a number.
    status = next(
        (
            value
            for value in (err.get("status_code"), err.get("code"), err.get("status"))
            if isinstance(value, int) and not isinstance(value, bool)
        ),
        None,
    )
    code = err.get("code")
    error_type = err.get("type", err.get("status"))
    return StreamErrorEvent(
        message,
        provider=api,
        status_code=status if isinstance(status, int) else None,
        code=code if isinstance(code, str) else None,
        error_type=error_type if isinstance(error_type, str) else None,
        body=err,
    )
