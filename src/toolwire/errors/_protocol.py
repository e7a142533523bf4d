"""Errors of the bytes on the wire: what was sent or received breaks the protocol."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from toolwire.errors._base import ToolwireError

__all__ = [
    "ContinuationMismatch",
    "LocalProtocolError",
    "ProtocolError",
    "RemoteProtocolError",
    "StreamTruncated",
    "TokenCountInvalid",
    "UnfinishedCall",
]


class ProtocolError(ToolwireError):
    """The bytes exchanged with the provider do not follow its protocol."""

    type_name = "protocol_error"


class LocalProtocolError(ProtocolError):
    """We were asked to build a request the protocol cannot express."""

    type_name = "local_protocol_error"


class RemoteProtocolError(ProtocolError):
    """The provider sent bytes that do not follow its protocol.

    Attributes:
        raw: the offending piece of input (truncated to 500 characters), if any.
    """

    type_name = "remote_protocol_error"

    def __init__(self, message: str, *, raw: str | bytes | None = None) -> None:
        super().__init__(message)
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        self.raw = raw[:500] if raw is not None else None

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        if self.raw is not None:
            d["raw"] = self.raw
        return d


class UnfinishedCall(Protocol):
    """What :class:`StreamTruncated` reports of a call that was still being
    streamed: an :class:`~toolwire.types.IncompleteToolCall` (this module
    sits below the value types, so it names only what it uses)."""

    @property
    def id(self) -> str | None:
        """The provider's id, if it had sent one."""
        ...

    @property
    def name(self) -> str | None:
        """The tool's name, if it had arrived."""
        ...

    @property
    def raw_arguments(self) -> str:
        """The argument text received so far."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``inspect --json``."""
        ...


class StreamTruncated(RemoteProtocolError):
    """The stream ended before the provider said it was complete.

    Attributes:
        incomplete_tool_calls: the calls that were still being streamed. They
            are never executed; they are listed so the caller can report them.
    """

    type_name = "stream_truncated"

    def __init__(
        self,
        message: str,
        *,
        incomplete_tool_calls: Sequence[UnfinishedCall] | None = None,
    ) -> None:
        super().__init__(message)
        self.incomplete_tool_calls: list[UnfinishedCall] = list(incomplete_tool_calls or [])

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["incomplete_tool_calls"] = [c.to_dict() for c in self.incomplete_tool_calls]
        return d


class ContinuationMismatch(RemoteProtocolError):
    """A stream reopened after a cut (or read again from its first event)
    sent an event that does not continue the stream it reopens: one at or
    before the last event already read, one read twice, or one of another
    response or interaction. Nothing of the reopened stream is used: its
    turn failed, as a cut one does.

    Attributes:
        stream_id: the id of the stream that was reopened.
        after: the id of the last event read of it before (``None``: it was
            read from its first event).
    """

    type_name = "continuation_mismatch"

    def __init__(
        self, message: str, *, stream_id: str, after: str | None, raw: str | bytes | None = None
    ) -> None:
        super().__init__(message, raw=raw)
        self.stream_id = stream_id
        self.after = after

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["stream_id"] = self.stream_id
        d["after"] = self.after
        return d


class TokenCountInvalid(RemoteProtocolError):
    """The provider's usage holds a count that cannot be one: negative, not
    a whole number (``2.5``, ``NaN``, infinite), a bool, not a number at all,
    or absurdly large. A count is never dropped or clamped silently: it
    would let a run through its token or cost limits, or price it wrong.

    Attributes:
        field: the usage member, as the provider names it
            (``completion_tokens``, ``usageMetadata.candidatesTokenCount``).
        value: the value it held, as decoded.
    """

    type_name = "token_count_invalid"

    def __init__(self, message: str, *, field: str, value: Any) -> None:
        super().__init__(message, raw=repr(value))
        self.field = field
        self.value = value

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["field"] = self.field
        d["value"] = repr(self.value)
        return d
