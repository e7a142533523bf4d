"""What the framing readers share: the reader interface, limits and text decoding."""

from __future__ import annotations

from typing import Final, Literal, Protocol, TypeAlias

from toolwire.errors import UsageError
from toolwire.stream.limits import MAX_FRAME_BYTES

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "END_OF_BODY",
    "Frame",
    "FrameReader",
    "TextErrors",
    "check_errors",
    "check_limit",
    "snippet",
]

DEFAULT_MAX_FRAME_BYTES: Final = MAX_FRAME_BYTES
"""The default cap on the bytes a reader buffers for one frame (64 MiB): one
SSE line or event, one NDJSON line, one JSON array element."""

Frame: TypeAlias = tuple[str, str]
"""One payload: ``(event name, text)``; the event name is ``"message"`` for
framings without names (and for SSE events without an ``event:`` field)."""

END_OF_BODY: Final[Frame] = ("", "")
"""The frame a reader gives when the framing itself says the body is over
(the closing ``]`` of a streamed JSON array): the provider's end marker."""

TextErrors: TypeAlias = Literal["strict", "replace", "surrogateescape"]
"""What a reader does with bytes that are not UTF-8: raise a
:class:`~toolwire.errors.RemoteProtocolError` (``"strict"``), put U+FFFD in
their place (``"replace"``), or keep each one as a lone surrogate
(``"surrogateescape"``) so that the layer above can tell exactly where the
text was not UTF-8 (the stream decoder uses it to refuse a tool call whose
arguments were not valid UTF-8 instead of running altered arguments)."""

_SNIPPET: Final = 80


class FrameReader(Protocol):
    """Bytes in, frames out, in whatever pieces the transport received them.

    Feeding a body whole, one byte at a time or in any other split gives the
    same frames. A reader never loses the frames that came before a fault:
    the ``feed_pairs`` that meets it returns them and the next call raises;
    once it has raised, it raises the same error on every call.
    """

    @property
    def undecodable(self) -> bool:
        """Whether some bytes of the body were not UTF-8 (and were escaped or
        replaced as the reader's ``errors`` says)."""
        ...

    def feed_pairs(self, data: bytes) -> list[Frame]:
        """The frames completed by the next piece of the body."""
        ...

    def close_pairs(self) -> list[Frame]:
        """The body ended: the last frames, or the error that says it was cut."""
        ...


def check_limit(value: int, name: str) -> int:
    """A buffer cap given by the caller, checked: a positive integer."""
    # bool is an int, but ``max_event_bytes=True`` is a mistake, not a limit.
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{name} must be a positive integer, got {value!r}")
    return value


def check_errors(value: str) -> TextErrors:
    """A ``errors`` mode given by the caller, checked."""
    if value not in ("strict", "replace", "surrogateescape"):
        raise UsageError(f"errors must be 'strict', 'replace' or 'surrogateescape', got {value!r}")
    return value  # type: ignore[return-value]


def snippet(data: bytes, at: int) -> bytes:
    """A little context around position ``at`` of ``data``, for an error's ``raw``."""
    return data[max(0, at - 20) : at + _SNIPPET]
