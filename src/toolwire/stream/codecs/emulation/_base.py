"""What the emulation server's encoders share: the reply to encode, the frame,
the encoder's base class, and the error bodies several dialects copy.

A :class:`Reply` is a scripted turn rendered for one request, independent of
the dialect; each encoder turns it into frames (streamed) or a body (whole).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, ClassVar

from toolwire.stream import jsonio
from toolwire.stream.codecs.emulation._request import ParsedRequest

__all__ = [
    "OPENAI_ERRORS",
    "Encoder",
    "Frame",
    "Reply",
    "ReplyCall",
    "fragments",
    "hex_token",
    "lower_token",
    "merge_error",
    "openai_error",
    "token",
]


@dataclass(frozen=True, slots=True)
class ReplyCall:
    """A tool call ready to encode."""

    index: int
    name: str
    raw_arguments: str
    """The arguments text as streamed (compact JSON, or the scenario's raw text)."""
    arguments: dict[str, Any] | None
    """The arguments as an object, or ``None`` when the raw text is not a JSON object."""
    custom: bool = False
    """A custom (freeform) tool call: ``raw_arguments`` is its input text."""
    fields: dict[str, Any] = field(default_factory=dict[str, Any])
    """More fields sent beside the call (OpenAI dialects)."""
    provider_fields: dict[str, Any] = field(default_factory=dict[str, Any])
    """More fields of the call's wire item, in the request's dialect (the
    scenario's ``provider_fields``: an Anthropic ``caller``, a Gemini ``thoughtSignature``)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """A turn rendered for one request, independent of the dialect."""

    request: ParsedRequest
    turn: int
    reasoning: str
    text: str
    calls: tuple[ReplyCall, ...]
    chunk_size: int
    created: int
    input_tokens: int
    provider_items: tuple[tuple[str, dict[str, Any]], ...] = ()
    """The dialect's own items, each with where it goes (``reasoning``, ``text``, ``calls``)."""
    finish: str | None = None
    """The dialect's finish word to send instead of the usual one."""
    provider_fields: dict[str, Any] = field(default_factory=dict[str, Any])
    """More fields of the answer, in the request's dialect."""
    quirks: frozenset[str] = frozenset()
    """Server quirks to play (the scenario's ``quirks``), where the dialect has them."""
    steer: str | None = None
    """What became of a steer (``accepted``, ``pending``, ``failed``), where
    the dialect has steering."""

    def items_after(self, place: str) -> list[dict[str, Any]]:
        """The dialect's own items that go after ``place``, in order."""
        return [item for where, item in self.provider_items if where == place]

    @property
    def seed(self) -> str:
        """Seed of this reply's ids: the same conversation and turn give the same ids."""
        return f"{self.request.dialect}:{self.request.conversation}:{self.turn}"

    @property
    def output_tokens(self) -> int:
        """A made-up but plausible count: about four characters per token."""
        size = len(self.text) + len(self.reasoning)
        size += sum(len(c.name) + len(c.raw_arguments) for c in self.calls)
        return max(1, size // 4)

    @property
    def reasoning_tokens(self) -> int:
        """The part of :attr:`output_tokens` spent on reasoning."""
        return len(self.reasoning) // 4


@dataclass(frozen=True, slots=True)
class Frame:
    """One streamed event: a JSON payload, an optional SSE event name."""

    payload: Any
    event: str | None = None
    raw: str | None = None
    """Text sent instead of the serialized payload (``[DONE]``, Anthropic's ping)."""


def fragments(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of ``size`` characters (none for empty text)."""
    return [text[i : i + size] for i in range(0, len(text), size)]


class Encoder:
    """Base of the dialect encoders.

    Args:
        sse: whether the request asked for SSE, for a dialect that streams in
            another framing too (Gemini's JSON array); ignored by the others.
    """

    dialect: ClassVar[str]
    stream_media_type: str = "text/event-stream; charset=utf-8"
    json_media_type: str = "application/json"

    def __init__(self, *, sse: bool = True) -> None:
        self.sse = sse

    def stream(self, reply: Reply) -> list[Frame]:
        """The frames of a streamed answer."""
        raise NotImplementedError

    def body(self, reply: Reply) -> dict[str, Any]:
        """The non-streaming answer."""
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The dialect's JSON error body for an HTTP error ``status``."""
        raise NotImplementedError

    def error_frame(self, error: dict[str, Any], sequence_number: int) -> Frame:
        """An in-stream error event, from the fault's ``error_event`` fields."""
        raise NotImplementedError

    def stream_key(self, reply: Reply) -> str | None:
        """The id under which the server keeps a streamed answer's frames, for
        continuations after an event (``None``: the dialect has none)."""
        return None

    def event_id(self, frame: Frame) -> str | None:
        """The id of a streamed event, from which a continuation starts after it."""
        return None

    def dumps(self, payload: Any) -> str:
        """Serialize one payload as the provider does (compact, raw UTF-8)."""
        return jsonio.dumps(payload)

    def dumps_body(self, body: Any) -> bytes:
        """Serialize a non-streaming body."""
        return jsonio.dumps_bytes(body)

    def frame(self, frame: Frame, index: int, *, broken: bool = False) -> bytes:
        """The bytes of frame number ``index``; ``broken`` cuts its JSON in half."""
        text = frame.raw if frame.raw is not None else self.dumps(frame.payload)
        if broken:
            text = text[: len(text) // 2]
        head = f"event: {frame.event}\n" if frame.event is not None else ""
        return f"{head}data: {text}\n\n".encode()

    def trailer(self) -> bytes:
        """Bytes after the last frame (the JSON array's ``]``)."""
        return b""


OPENAI_ERRORS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def openai_error(status: int, message: str) -> dict[str, Any]:
    kind, code = OPENAI_ERRORS.get(status, ("server_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def merge_error(defaults: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    merged = dict(defaults)
    merged.update(given)
    return merged


# -- deterministic identifiers ------------------------------------------------------

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_LOWER_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"
_HEX = "0123456789abcdef"


def token(seed: str, length: int, alphabet: str = _ALNUM) -> str:
    """A pseudo-random string drawn deterministically from ``seed``."""
    out: list[str] = []
    counter = 0
    while len(out) < length:
        digest = hashlib.sha256(f"{seed}#{counter}".encode()).digest()
        out.extend(alphabet[b % len(alphabet)] for b in digest)
        counter += 1
    return "".join(out[:length])


def hex_token(seed: str, length: int) -> str:
    """Like :func:`token`, lowercase hexadecimal."""
    return token(seed, length, _HEX)


def lower_token(seed: str, length: int) -> str:
    """Like :func:`token`, lowercase letters and digits."""
    return token(seed, length, _LOWER_ALNUM)
