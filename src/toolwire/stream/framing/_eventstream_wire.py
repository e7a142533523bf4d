"""The AWS event-stream message: its layout, header values, reading and writing.

A message is length-prefixed and checked twice::

    total length (4) | headers length (4) | prelude CRC32 (4)
    headers (headers length bytes) | payload | message CRC32 (4)

:mod:`~toolwire.stream.framing.eventstream` reads a stream of them
incrementally; this module holds what both directions share: the layout's
constants, the header values (read by :func:`_headers`, written by
:func:`encode_message`) and the messages AWS sends (events, exceptions).
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Final, TypeAlias

from toolwire.errors import RemoteProtocolError, StreamErrorEvent
from toolwire.stream.jsonio import loads

__all__ = [
    "MAX_HEADERS_BYTES",
    "MEDIA_TYPE",
    "EventStreamMessage",
    "HeaderValue",
    "encode_message",
    "event_message",
    "exception_message",
]

HeaderValue: TypeAlias = bool | int | bytes | str | datetime | uuid.UUID
"""A header's value, by its wire type: bool, byte/short/int/long (``int``),
byte array (``bytes``), string (``str``), timestamp (``datetime``, UTC), UUID."""

MEDIA_TYPE: Final = "application/vnd.amazon.eventstream"
"""The framing's media type (a response's ``Content-Type``)."""

_PRELUDE: Final = 12  # total length, headers length, prelude CRC
_OVERHEAD: Final = _PRELUDE + 4  # and the message CRC
MAX_HEADERS_BYTES: Final = 128 * 1024
"""The most header bytes one message may have (the AWS limit)."""
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=timezone.utc)
_U32: Final = struct.Struct(">I")
_PRELUDE_STRUCT: Final = struct.Struct(">III")
_INTS: Final = {
    2: struct.Struct(">b"),
    3: struct.Struct(">h"),
    4: struct.Struct(">i"),
    5: struct.Struct(">q"),
}
_LEN16: Final = struct.Struct(">H")
_SNIPPET: Final = 80


@dataclass(frozen=True, slots=True)
class EventStreamMessage:
    """One message: its headers by name, and its payload bytes."""

    headers: Mapping[str, HeaderValue]
    payload: bytes

    def header(self, name: str) -> str | None:
        """A string header's value (``:event-type``...), or ``None``."""
        value = self.headers.get(name)
        return value if isinstance(value, str) else None


def _headers(raw: bytes) -> dict[str, HeaderValue]:
    headers: dict[str, HeaderValue] = {}
    pos, n = 0, len(raw)
    try:
        while pos < n:
            size = raw[pos]
            name = raw[pos + 1 : pos + 1 + size]
            pos += 1 + size
            kind = raw[pos]  # IndexError when the name ran past the end
            value, pos = _value(raw, pos + 1, kind)
            headers[name.decode("utf-8")] = value
    except (IndexError, struct.error, UnicodeDecodeError, OverflowError):
        raise RemoteProtocolError(
            f"an event-stream header cannot be read at byte {pos}", raw=raw[:_SNIPPET]
        ) from None
    return headers


def _value(raw: bytes, pos: int, kind: int) -> tuple[HeaderValue, int]:
    if kind == 0 or kind == 1:
        return kind == 0, pos
    if kind in _INTS:
        fmt = _INTS[kind]
        return fmt.unpack_from(raw, pos)[0], pos + fmt.size
    if kind == 6 or kind == 7:
        (size,) = _LEN16.unpack_from(raw, pos)
        pos += 2
        data = raw[pos : pos + size]
        if len(data) != size:
            raise IndexError
        return (data if kind == 6 else data.decode("utf-8")), pos + size
    if kind == 8:
        (millis,) = _INTS[5].unpack_from(raw, pos)
        return _EPOCH + timedelta(milliseconds=millis), pos + 8
    if kind == 9:
        data = raw[pos : pos + 16]
        if len(data) != 16:
            raise IndexError
        return uuid.UUID(bytes=data), pos + 16
    raise RemoteProtocolError(f"an event-stream header has an unknown type {kind}")


def _provider_error(kind: str, message: EventStreamMessage) -> StreamErrorEvent:
    """An ``exception`` or ``error`` message as the provider's error."""
    if kind == "exception":
        code = message.header(":exception-type")
        text = _payload_message(message.payload)
    else:
        code = message.header(":error-code")
        text = message.header(":error-message")
    body = message.payload.decode("utf-8", "replace")
    return StreamErrorEvent(
        f"the stream reported {kind} {code or 'without a type'}: {(text or body)[:2000]}",
        body=body,
        code=code,
        error_type=kind,
    )


def _payload_message(payload: bytes) -> str | None:
    try:
        obj = loads(payload.decode("utf-8"))
    except ValueError:
        return None
    if isinstance(obj, dict):
        for key in ("message", "Message"):
            if isinstance(obj.get(key), str):
                return str(obj[key])
    return None


# -- writing (the emulation server and tests) ------------------------------------


def encode_message(headers: Mapping[str, HeaderValue], payload: bytes) -> bytes:
    """One message's bytes: headers in the order given, both CRCs computed."""
    encoded = b"".join(_encode_header(name, value) for name, value in headers.items())
    total = _OVERHEAD + len(encoded) + len(payload)
    head = _U32.pack(total) + _U32.pack(len(encoded))
    body = head + _U32.pack(zlib.crc32(head)) + encoded + payload
    return body + _U32.pack(zlib.crc32(body))


def _encode_header(name: str, value: HeaderValue) -> bytes:
    key = name.encode("utf-8")
    out = bytes([len(key)]) + key
    if isinstance(value, bool):
        return out + bytes([0 if value else 1])
    if isinstance(value, int):
        return out + b"\x05" + _INTS[5].pack(value)
    if isinstance(value, bytes):
        return out + b"\x06" + _LEN16.pack(len(value)) + value
    if isinstance(value, str):
        data = value.encode("utf-8")
        return out + b"\x07" + _LEN16.pack(len(data)) + data
    if isinstance(value, datetime):
        millis = (value - _EPOCH) // timedelta(milliseconds=1)
        return out + b"\x08" + _INTS[5].pack(millis)
    return out + b"\x09" + value.bytes


def event_message(event_type: str, payload: bytes) -> bytes:
    """An ``event`` message as AWS sends one (JSON payload)."""
    return encode_message(
        {
            ":event-type": event_type,
            ":content-type": "application/json",
            ":message-type": "event",
        },
        payload,
    )


def exception_message(exception_type: str, payload: bytes) -> bytes:
    """An ``exception`` message as AWS sends one (JSON payload)."""
    return encode_message(
        {
            ":exception-type": exception_type,
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        payload,
    )
