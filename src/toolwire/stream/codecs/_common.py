"""Helpers shared by the codecs: JSON payloads and provider error events."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any, Final

from toolwire.errors import RemoteProtocolError, StreamErrorEvent, TokenCountInvalid
from toolwire.stream.jsonio import JSONDecodeError, JSONLimitError, loads
from toolwire.stream.limits import MAX_TOKEN_COUNT
from toolwire.stream.parts import FinishPart, MetaPart, UnknownPart
from toolwire.types import FinishReason, Usage

__all__ = [
    "DONE",
    "UnreadFields",
    "as_int",
    "as_list",
    "as_obj",
    "as_str",
    "bad_json",
    "error_event",
    "finish_part",
    "int_or_none",
    "is_done_trailer",
    "load_frame",
    "load_payload",
    "meta_part",
    "output_with_reasoning",
    "summed_usage",
    "thinking_usage",
    "token_count",
    "unknown_part",
    "unread_fields",
]


DONE: Final = "[DONE]"
"""OpenAI's end-of-stream line."""


def is_done_trailer(data: str) -> bool:
    """Whether a payload is OpenAI's ``[DONE]`` line, which servers of other
    dialects (Cohere v2, OpenRouter's Responses endpoint) send after their own
    end event."""
    return data[:1] == "[" and data.strip() == DONE


def load_payload(data: str, dialect: str) -> dict[str, Any]:
    """Parse one frame's JSON; the payload must be an object."""
    try:
        obj = loads(data)
    except (JSONDecodeError, ValueError) as exc:
        raise bad_json(dialect, exc, data) from exc
    if not isinstance(obj, dict):
        raise RemoteProtocolError(
            f"{dialect}: a stream chunk is {type(obj).__name__}, expected a JSON object", raw=data
        )
    return obj


def load_frame(data: str, dialect: str, quirks: set[str]) -> dict[str, Any] | None:
    """One frame's JSON object (:func:`load_payload`), or ``None`` for OpenAI's
    ``[DONE]`` line (:func:`is_done_trailer`), noted in ``quirks``: the
    codec then gives ``TrailerPart(DONE)``."""
    if is_done_trailer(data):
        quirks.add("[DONE] line after the dialect's own end event")
        return None
    return load_payload(data, dialect)


def bad_json(dialect: str, exc: ValueError, data: str) -> RemoteProtocolError:
    """The error for a payload the JSON parser refused, naming the real cause."""
    if isinstance(exc, JSONLimitError):
        return RemoteProtocolError(f"{dialect}: a stream chunk goes past a limit: {exc}", raw=data)
    return RemoteProtocolError(f"{dialect}: a stream chunk is not valid JSON ({exc})", raw=data)


def error_event(payload: Any, dialect: str) -> StreamErrorEvent:
    """A provider's in-stream error payload as a typed error.

    Accepts ``{"error": {...}}``, the inner object, or a bare string, as
    providers disagree on the shape (OpenAI, Groq, Anthropic, Gemini).
    """
    err: Any = payload
    if isinstance(err, dict) and "error" in err:
        err = err["error"]
    if isinstance(err, str):
        return StreamErrorEvent(err, provider=dialect, body=payload)
    if not isinstance(err, dict):
        return StreamErrorEvent(
            f"{dialect}: the provider reported an error", provider=dialect, body=payload
        )
    message = err.get("message")
    if not isinstance(message, str) or not message:
        message = f"{dialect}: the provider reported an error"
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
        provider=dialect,
        status_code=status if isinstance(status, int) else None,
        code=code if isinstance(code, str) else None,
        error_type=error_type if isinstance(error_type, str) else None,
        body=err,
    )


# -- defensive accessors: provider JSON is never trusted -----------------------


def as_obj(value: Any, what: str) -> dict[str, Any]:
    """``value`` as a JSON object, or a typed error naming ``what``."""
    if isinstance(value, dict):
        return value
    raise RemoteProtocolError(f"{what}: expected a JSON object, got {type(value).__name__}")


def as_list(value: Any, what: str) -> list[Any]:
    """``value`` as a list; ``None`` counts as empty."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    raise RemoteProtocolError(f"{what}: expected a JSON array, got {type(value).__name__}")


def as_str(value: Any, what: str) -> str | None:
    """``value`` as a string; ``None`` stays ``None``."""
    if value is None or isinstance(value, str):
        return value
    raise RemoteProtocolError(f"{what}: expected a string, got {type(value).__name__}")


def as_int(value: Any, what: str) -> int | None:
    """``value`` as an integer; ``None`` stays ``None``."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise RemoteProtocolError(f"{what}: expected an integer, got {type(value).__name__}")


def int_or_none(value: Any) -> int | None:
    """``value`` when it is an integer (not a bool), else ``None``: for
    optional integers (an index, a length) where a wrong type is ignored,
    not an error. Token counts are read by :func:`token_count`."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def token_count(raw: Mapping[str, Any], key: str, dialect: str, within: str = "") -> int | None:
    """The token count ``raw[key]`` of a provider's usage; ``None`` when it
    is absent or ``null``.

    Every dialect reads its counts through this, so that none lets a count
    through that is not one: a negative, fractional, non-finite or absurd
    (past :data:`~toolwire.stream.limits.MAX_TOKEN_COUNT`) number, a bool or
    a string is a :class:`~toolwire.errors.TokenCountInvalid` naming the field
    (``within``: the object holding it, as ``completion_tokens_details``)
    and the value. A whole float (``12.0``) counts as its integer.
    """
    value = raw.get(key)
    if value is None:
        return None
    count: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        count = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        count = int(value)
    if count is not None and 0 <= count <= MAX_TOKEN_COUNT:
        return count
    field = f"{within}.{key}" if within else key
    if count is not None:
        why = "negative" if count < 0 else f"larger than {MAX_TOKEN_COUNT:,}"
    elif isinstance(value, float):
        why = "not a whole number"
    else:
        why = f"a {type(value).__name__}, not a number"
    raise TokenCountInvalid(
        f"{dialect}: the usage's {field} is {_shown(value)}, {why}: not a token count",
        field=field,
        value=value,
    )


def summed_usage(
    prompt: int | None, output: int | None, raw: dict[str, Any], cached: int | None = None
) -> Usage:
    """The usage of a dialect that sends no total (Cohere, Ollama): the total
    is the sum of the two counts, ``None`` only when neither came."""
    total = None if prompt is None and output is None else (prompt or 0) + (output or 0)
    return Usage(
        input_tokens=prompt, output_tokens=output, total_tokens=total, cached_tokens=cached, raw=raw
    )


def thinking_usage(
    raw: dict[str, Any],
    dialect: str,
    within: str,
    *,
    output: str,
    thoughts: str,
    prompt: str,
    total: str,
    cached: str,
) -> Usage:
    """A usage whose output count leaves thinking out (the Gemini dialects'),
    as a :class:`~toolwire.types.Usage` whose ``output_tokens`` counts the
    thinking too (``output`` + ``thoughts``), as OpenAI's
    ``completion_tokens`` does; each argument names the member of ``raw``
    (``within``, for the errors) that holds that count."""
    answer = token_count(raw, output, dialect, within)
    thinking = token_count(raw, thoughts, dialect, within)
    both = None if answer is None and thinking is None else (answer or 0) + (thinking or 0)
    return Usage(
        input_tokens=token_count(raw, prompt, dialect, within),
        output_tokens=both,
        total_tokens=token_count(raw, total, dialect, within),
        reasoning_tokens=thinking,
        cached_tokens=token_count(raw, cached, dialect, within),
        raw=raw,
    )


def output_with_reasoning(
    prompt: int | None, completion: int | None, reasoning: int | None, total: int | None
) -> tuple[int | None, int | None]:
    """The output count, reasoning included, and the reasoning count.

    For the OpenAI dialects, whose reasoning count is a detail of the
    output's. OpenAI counts reasoning inside ``completion_tokens``; xAI's
    Chat Completions leave it out (prompt + completion + reasoning = total).
    The total tells which: when it is the sum with reasoning and not the sum
    without, reasoning is added to the output. Without a total, a reasoning
    count larger than the completion count can only have been left out of
    it, and is added too. Otherwise the completion count is the whole
    output, and a reasoning count past it (OpenRouter's MiniMax: 11 of 10)
    is cut to it, as a part cannot be larger than its whole.
    """
    if completion is None or reasoning is None:
        return completion, reasoning
    if total is not None and prompt is not None:
        if prompt + completion != total and prompt + completion + reasoning == total:
            return completion + reasoning, reasoning
    elif total is None and reasoning > completion:
        return completion + reasoning, reasoning
    return completion, min(reasoning, completion)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:37]}..."


def meta_part(model: Any, response_id: Any) -> MetaPart:
    """The model and response id of a stream, each kept only if a string."""
    return MetaPart(
        model=model if isinstance(model, str) else None,
        response_id=response_id if isinstance(response_id, str) else None,
    )


def finish_part(table: Mapping[str, FinishReason], raw: str, choice: int = 0) -> FinishPart:
    """The finish part for a provider's raw reason: its word in the dialect's
    table, ``"other"`` for a word the table does not know."""
    return FinishPart(table.get(raw, "other"), raw, choice)


def unknown_part(
    dialect: str, kind: str, payload: dict[str, Any], quirks: set[str], choice: int = 0
) -> UnknownPart:
    """What a codec hands on for an item, block, part or event it does not
    act on or keep (an ``UnknownItem`` event), noting it among its quirks."""
    quirks.add(f"{kind} (not understood, handed on as an unknown item)")
    quirk = f"{dialect}: toolwire does not act on {kind!r}; it is handed on as sent, not sent back"
    return UnknownPart(dialect, kind, payload, quirk, choice)


def unread_fields(
    dialect: str, obj: dict[str, Any], read: Collection[str], choice: int = 0
) -> list[UnknownPart]:
    """The fields of a message, candidate or event that a codec does not read,
    each handed on as an ``UnknownItem`` named after the field, with the
    payload ``{field: value}`` (fields that are null or empty carry nothing).
    Metadata is common on these wires: it is not noted among the quirks."""
    return [
        UnknownPart(
            dialect,
            key,
            {key: value},
            f"{dialect}: toolwire does not read the field {key!r}; it is handed on as sent",
            choice,
        )
        for key, value in obj.items()
        if key not in read and value is not None and value != [] and value != {}
    ]


_UNSEEN: Final = object()


class UnreadFields:
    """:func:`unread_fields` over a stream: each field handed on when first
    sent and again when its value changes, not for every payload that repeats
    it (Vertex's ``createTime``, OpenRouter's ``provider``, Azure's
    ``content_filter_results``)."""

    def __init__(self, dialect: str) -> None:
        self.dialect = dialect
        self._seen: dict[tuple[frozenset[str], int, str], Any] = {}

    def parts(
        self, obj: dict[str, Any], read: frozenset[str], choice: int = 0
    ) -> list[UnknownPart]:
        """The fields of ``obj`` (a payload of kind ``read``) not handed on yet."""
        fresh = []
        seen = self._seen
        for part in unread_fields(self.dialect, obj, read, choice):
            key = (read, choice, part.type)
            value = part.payload[part.type]
            if seen.get(key, _UNSEEN) != value:
                seen[key] = value
                fresh.append(part)
        return fresh
