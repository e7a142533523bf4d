"""``StreamDecoder``: a provider's response bytes in, toolwire events out.

Theory of operation
-------------------
Three sans-I/O stages, fed by whatever reads the network (or a file)::

    bytes -> framing -> codec -> accumulator -> events

*Framing* cuts bytes into payloads: SSE for most providers, NDJSON for
Ollama, a streamed JSON array for Gemini without ``alt=sse``. *Codecs* turn
each payload into provider-neutral parts (``codecs/``). The *accumulator*
owns identity and completion of tool calls (``accumulate.py``).

With ``dialect="auto"`` the framing is chosen from the first bytes and the
dialect from the first payload that tells (frames before that are held and
replayed, so nothing is lost).

The commonest payload, an argument delta, has a short way through: when the
codec knows its dialect's exact text for one (``args_event``: Anthropic, and
OpenAI chat once a chunk has shown the stream's own members), the SSE reader
hands each event of that text over as a regular-expression match
(``SSEDecoder.feed_matched``), the codec takes the call's index and the
fragment out of it, and the accumulator appends the fragment to its call:
no line cut, no JSON parsed, no part built. An event of any other text, or
one the codec hands back, is read the general way, so both ways give the
same events. ``short_path=False`` reads everything the general way, and
``short_path_deltas`` counts the deltas read the short way:
``tests/stream/test_args_events.py`` checks that both ways agree and that
the short way is taken.

Nothing here raises on bad provider data: a malformed payload, an error
event or a cut stream becomes a :class:`~toolwire.events.StreamFailed` event
and ``result().error``; decoding stops there. Any exception other than
toolwire's own would be a bug; as a last line of defence it is turned into a
:class:`~toolwire.errors.RemoteProtocolError` that names the payload.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from toolwire import _compat
from toolwire.errors import RemoteProtocolError, ToolwireError, UsageError
from toolwire.events import Event
from toolwire.stream._decoding import DecodedFrame, PayloadDecoder
from toolwire.stream._response import decode_response
from toolwire.stream.accumulate import Accumulator
from toolwire.stream.codecs import (
    Codec,
    ContinuedCodec,
    EventStreamArgsCodec,
    as_args_event,
    as_continued,
    registered,
    wire_dialect,
)
from toolwire.stream.framing import (
    EventStreamDecoder,
    FrameReader,
    FramingKind,
    SniffingReader,
    SSEDecoder,
    reader_for,
)
from toolwire.stream.jsonio import JSONDecodeError, JSONLimitError, loads
from toolwire.stream.limits import MAX_FRAME_BYTES
from toolwire.types import StreamResult

__all__ = ["DecodedFrame", "StreamDecoder", "decode_response", "sniff_dialect"]

FRAMINGS: frozenset[FramingKind] = frozenset({"sse", "ndjson", "json-array", "eventstream"})


def sniff_dialect(event: str, data: str) -> str | None:
    """Guess the dialect from one payload, or ``None`` if it does not tell.

    Each registered dialect names what only it sends (``sniff_*`` of
    :class:`~toolwire.stream.codecs.WireDialect`): an event name, then a
    payload's text, then its ``type`` member, then its shape.
    """
    dialects = registered()
    for d in dialects:
        if d.sniff_name(event):
            return d.name
    stripped = data.strip()
    for d in dialects:
        if d.sniff_text(stripped):
            return d.name
    try:
        obj = loads(stripped)
    except JSONLimitError as exc:
        raise RemoteProtocolError(f"a stream chunk goes past a limit: {exc}", raw=data) from None
    except (JSONDecodeError, ValueError):
        return None
    if not isinstance(obj, dict):
        return None
    kind = obj.get("type")
    if isinstance(kind, str):
        for d in dialects:
            if d.sniff_name(kind):
                return d.name
    for d in dialects:
        if d.sniff_shape(obj):
            return d.name
    return None


class StreamDecoder:
    """Decodes one streamed response into events and a final result.

    Args:
        dialect: a :data:`~toolwire.types.Dialect` (``openai-chat``,
            ``anthropic-messages``...), or ``auto`` to tell from the bytes.
        id_factory: makes call ids where the provider sends none.
        api: the former name of ``dialect`` (deprecated).
        short_path: read argument deltas of the dialect's exact text the short
            way (the default); ``False`` reads every payload the general way,
            which gives the same events (tests compare the two).

    Example::

        decoder = StreamDecoder("openai-chat")
        for chunk in response_chunks:
            for event in decoder.feed(chunk):
                if isinstance(event, toolwire.ToolCallReady):
                    run(event.call)
        decoder.close()
        result = decoder.result()
    """

    def __init__(
        self,
        dialect: str = "auto",
        *,
        id_factory: Callable[[], str] | None = None,
        api: str | None = None,
        short_path: bool = True,
    ) -> None:
        if api is not None:
            _compat.renamed_argument("StreamDecoder", "api")
            if dialect not in ("auto", api):
                raise UsageError(f"dialect={dialect!r} and api={api!r} disagree: pass one")
            dialect = api
        registration = None if dialect == "auto" else wire_dialect(dialect)  # or a UsageError
        self._requested = dialect
        self.dialect: str | None = None if dialect == "auto" else dialect
        """The dialect being decoded (``None`` until ``auto`` has told)."""
        self._acc = Accumulator(id_factory=id_factory)
        self._codec: Codec | None = None
        self._continued: ContinuedCodec | None = None  # the codec, of a dialect of kept streams
        self._held: list[tuple[str, str]] = []  # frames held until the dialect is known
        self._held_size = 0
        self._closed = False
        self._reader: FrameReader
        self._sniffer: SniffingReader | None = None
        # A reader and a codec that reads argument deltas by their shape (SSE;
        # AWS event streams, whose codec names the event type it matches).
        self._sse: SSEDecoder | EventStreamDecoder | None = None
        self._payloads = PayloadDecoder(self._acc)
        if registration is None:
            self._reader = self._sniffer = SniffingReader(FRAMINGS)
        else:
            self._codec = registration.codec()
            self._continued = as_continued(registration, self._codec)
            self._acc.state_dialect = self._codec.dialect
            framings = self._codec.framings
            if len(framings) == 1:
                (kind,) = framings
                self._reader = reader_for(kind)
                fast = as_args_event(registration, self._codec)
                if (
                    short_path
                    and isinstance(self._reader, SSEDecoder | EventStreamDecoder)
                    and fast is not None
                ):
                    self._sse = self._reader
                    self._payloads.fast = fast
                    if isinstance(self._reader, EventStreamDecoder):
                        # The registry checked it: an EventStreamArgsCodec.
                        framed = cast(EventStreamArgsCodec, fast)
                        self._reader.match_event = framed.args_event_type
                        self._reader.match_bytes = framed.args_event_bytes
            else:
                self._reader = self._sniffer = SniffingReader(framings)

    # -- public API ---------------------------------------------------------------

    def feed(self, data: bytes) -> list[Event]:
        """Decode the next piece of the response body (any split is fine)."""
        out: list[Event] = []
        self._feed(data, out, None)
        return out

    def feed_frames(self, data: bytes) -> list[DecodedFrame]:
        """Like :meth:`feed`, but grouped by payload, each with its raw text.
        What no payload caused (the framing's own fault, a dialect that
        cannot be told) comes last, in an entry with an empty payload: every
        event of :meth:`feed` is in one entry."""
        frames: list[DecodedFrame] = []
        out: list[Event] = []
        self._feed(data, out, frames)
        return _with_rest(frames, out)

    def close(self) -> list[Event]:
        """The body ended: flush, finish open calls or report the cut."""
        out: list[Event] = []
        self._close(out, None)
        return out

    def close_frames(self) -> list[DecodedFrame]:
        """Like :meth:`close`, grouped by payload; a last entry with an empty
        payload holds what the end of input itself caused."""
        frames: list[DecodedFrame] = []
        out: list[Event] = []
        self._close(out, frames)
        return _with_rest(frames, out)

    def result(self) -> StreamResult:
        """The reading so far; final after :meth:`close`."""
        return self._acc.result(self.dialect or self._requested)

    @property
    def quirks(self) -> tuple[str, ...]:
        """What the stream did that its dialect's reference does not, as the
        codec noticed it so far (sorted; see :attr:`toolwire.stream.codecs.Codec.quirks`)."""
        return tuple(sorted(self._codec.quirks)) if self._codec is not None else ()

    @property
    def short_path_deltas(self) -> int:
        """How many argument deltas were read the short way (matched by their
        text, no JSON parsed): proof that the short path is taken."""
        return self._payloads.short_path_deltas

    @property
    def error(self) -> ToolwireError | None:
        """Why the stream failed, if it did."""
        return self._acc.error

    @property
    def cursor(self) -> tuple[str, str] | None:
        """Where the stream stands, for a dialect whose provider keeps its
        streams: ``(stream id, id of the last event decoded)`` (a Responses
        response's id and ``sequence_number``, an interaction's id and
        ``event_id``), or ``None`` when the dialect has none or they did not
        come yet. A cut stream reopened *after* that event continues exactly
        where this decoder stopped (see :meth:`drop_partial`)."""
        return self._continued.cursor if self._continued is not None else None

    def drop_partial(self) -> None:
        """The stream was cut: forget the bytes of the event it was cut in, so
        that a continuation that starts at the next whole event (the events
        after :attr:`cursor`, from a reopened stream) can be fed to this
        decoder. Everything decoded so far (text, calls, their arguments)
        stays and goes on.

        Raises:
            UsageError: the decoder is closed, or its framing is not SSE.
        """
        if self._closed or not isinstance(self._reader, SSEDecoder):
            raise UsageError("only an open decoder of an SSE stream can be continued")
        self._reader.drop_partial()

    def continue_after(self, stream_id: str, after: str | None) -> None:
        """What is fed from now on is stream ``stream_id`` as its provider
        streams it again after the event ``after``: this decoder's
        :attr:`cursor` once the cut was dropped (:meth:`drop_partial`), or
        ``None`` for a fresh decoder reading a kept stream from its first
        event. Every event is then checked: one that names another response
        or interaction, comes again (a replay of what was read) or is out of
        order fails the stream with a
        :class:`~toolwire.errors.ContinuationMismatch` (a ``StreamFailed``
        event and ``error``): as of any failed stream, none of its calls is
        to be run, not even those made whole before it (the agent runs none).

        Raises:
            UsageError: the decoder is closed, its dialect's provider keeps no
                streams (or ``auto`` has not told it yet), or it does not
                stand at ``(stream_id, after)``.
        """
        codec = self._continued
        if self._closed or codec is None:
            raise UsageError(
                "only an open decoder of a dialect whose streams are kept continues one"
            )
        codec.continue_after(stream_id, after)

    # -- internals ------------------------------------------------------------------

    def _feed(self, data: bytes, out: list[Event], frames: list[DecodedFrame] | None) -> None:
        if self._closed:
            raise UsageError("feed() after close(): use a new StreamDecoder per response")
        if self._acc.error is not None or not data:
            return
        fast = self._payloads.fast
        matcher = fast.args_event if fast is not None and frames is None else None
        try:
            if matcher is not None and self._sse is not None and self._codec is not None:
                # Argument deltas of the exact known shape come as matches.
                items = self._sse.feed_matched(data, matcher)
                self._after_framing()
                self._payloads.decode_fast(self._codec, items, out)
                return
            payloads = self._reader.feed_pairs(data)
        except ToolwireError as exc:
            self._acc.fail(exc, out)
            return
        self._after_framing()
        self._decode(payloads, out, frames)

    def _close(self, out: list[Event], frames: list[DecodedFrame] | None) -> None:
        if self._closed:
            return
        if self._acc.error is None:
            try:
                payloads = self._reader.close_pairs()
            except ToolwireError as exc:
                self._acc.fail(exc, out)
                payloads = []
            self._after_framing()
            self._decode(payloads, out, frames, final=True)
            if self._acc.error is None and self._codec is None and self._held:
                self._acc.fail(
                    RemoteProtocolError(
                        "could not tell which dialect this stream speaks; pass dialect=...",
                        raw=self._held[0][1],
                    ),
                    out,
                )
        self._closed = True
        self._acc.close(out)

    def _after_framing(self) -> None:
        """What the framing told: a JSON array is Gemini's; bytes that were
        not UTF-8 make the accumulator check text and arguments for them."""
        sniffer = self._sniffer
        if sniffer is not None and sniffer.kind is not None and self._codec is None:
            for d in registered():
                if d.whole_framing == sniffer.kind:
                    self._set_dialect(d.name)
                    break
        if self._reader.undecodable:
            self._acc.check_utf8 = True

    def _set_dialect(self, dialect: str) -> None:
        self.dialect = dialect
        registration = wire_dialect(dialect)
        self._codec = registration.codec()
        self._continued = as_continued(registration, self._codec)
        self._acc.state_dialect = self._codec.dialect

    def _decode(
        self,
        payloads: list[tuple[str, str]],
        out: list[Event],
        frames: list[DecodedFrame] | None,
        *,
        final: bool = False,
    ) -> None:
        if self._codec is None:
            try:
                payloads = self._sniff(payloads)
            except ToolwireError as exc:
                self._acc.fail(exc, out)
                return
            if self._codec is None:
                return
        if frames is None and not final:
            self._payloads.decode_fast(self._codec, payloads, out)
        else:
            self._payloads.decode_frames(self._codec, payloads, out, frames, final)

    def _sniff(self, payloads: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Hold frames until one tells the dialect; then all of them go on.
        Each frame is looked at once, and what is held is capped."""
        self._held.extend(payloads)
        for event, data in payloads:
            dialect = sniff_dialect(event, data)
            if dialect is not None:
                self._set_dialect(dialect)
                held, self._held = self._held, []
                return held
            self._held_size += len(data)
            if self._held_size > MAX_FRAME_BYTES:
                raise RemoteProtocolError(
                    f"could not tell which dialect this stream speaks from its first "
                    f"{MAX_FRAME_BYTES} bytes; pass dialect=...",
                    raw=self._held[0][1],
                )
        return []


def _with_rest(frames: list[DecodedFrame], out: list[Event]) -> list[DecodedFrame]:
    """``frames``, then an entry with an empty payload for the events of
    ``out`` that none of them holds. The payloads' events are the first of
    ``out`` (each frame holds its own, in order); what comes after them was
    caused by no payload: a framing fault, the end of input."""
    rest = out[sum(len(frame.events) for frame in frames) :]
    if rest:
        frames.append(DecodedFrame(event="", data="", events=tuple(rest)))
    return frames


def __getattr__(name: str) -> object:
    """Older names, with a warning (see :mod:`toolwire._compat`)."""
    return _compat.renamed(__name__, name)
