"""Stream framing: bytes in, frames out, without any I/O.

Theory of operation
-------------------
Providers stream their responses in one of four framings, and each has one
reader here, behind one interface (:class:`FrameReader`: ``feed_pairs`` and
``close_pairs``, giving ``(event, text)`` frames):

* :class:`SSEDecoder` (``sse.py``) — ``text/event-stream``, as the WHATWG
  HTML standard defines it. Almost every provider.
* :class:`NDJSONDecoder` (``ndjson.py``) — one JSON document per line (Ollama).
* :class:`JSONArrayDecoder` (``json_array.py``) — one JSON array whose
  elements arrive over time (Gemini ``streamGenerateContent`` without
  ``alt=sse``); the closing ``]`` gives :data:`END_OF_BODY`.
* :class:`EventStreamDecoder` (``eventstream.py``) — AWS's binary
  ``application/vnd.amazon.eventstream`` (Bedrock): length-prefixed messages
  with CRC32 checks; frames are ``(:event-type, payload)``.

:class:`SniffingReader` (``sniff.py``) picks one of them from the body's first
significant byte, for ``StreamDecoder("auto")`` and Gemini.

Each reader is fed the body in whatever pieces the transport received and
returns the frames those pieces completed; closing marks the end of input.
Feeding a body whole, one byte at a time or in any other split gives the
same frames: a reader only ever looks at complete lines (or complete JSON
elements), and keeps the incomplete end of a piece for the next call, as a
list of pieces joined once (linear, not quadratic, in a long line's pieces).
All of them work on bytes and decode text only once a frame is complete, so
a UTF-8 sequence split between two pieces decodes correctly; bytes that are
not UTF-8 are handled as the reader's ``errors`` says (:data:`TextErrors`).

Errors: malformed framing raises :class:`~toolwire.errors.RemoteProtocolError`
(or :class:`~toolwire.errors.StreamTruncated` when the input ended early).
A reader never loses the frames that came before the fault: when a ``feed``
completes some frames and then meets the fault, it returns those frames and
raises on the next call. Each reader caps the bytes it buffers for one frame
(:data:`~toolwire.stream.limits.MAX_FRAME_BYTES` by default), so a stream that never
ends a line cannot exhaust memory.
"""

from __future__ import annotations

from toolwire.stream.framing._common import (
    DEFAULT_MAX_FRAME_BYTES,
    END_OF_BODY,
    Frame,
    FrameReader,
    TextErrors,
)
from toolwire.stream.framing.eventstream import EventStreamDecoder, EventStreamMessage
from toolwire.stream.framing.json_array import JSONArrayDecoder
from toolwire.stream.framing.ndjson import NDJSONDecoder
from toolwire.stream.framing.sniff import FramingKind, SniffingReader, reader_for
from toolwire.stream.framing.sse import ServerSentEvent, SSEDecoder

__all__ = [
    "DEFAULT_MAX_FRAME_BYTES",
    "END_OF_BODY",
    "EventStreamDecoder",
    "EventStreamMessage",
    "Frame",
    "FrameReader",
    "FramingKind",
    "JSONArrayDecoder",
    "NDJSONDecoder",
    "SSEDecoder",
    "ServerSentEvent",
    "SniffingReader",
    "TextErrors",
    "reader_for",
]
