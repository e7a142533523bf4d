"""``StreamDecoder``: a provider's response bytes in, toolwire events out.

Theory of operation
-------------------
Three sans-I/O stages, fed by whatever reads the network (or a file)::

    bytes -> framing -> codec -> accumulator -> events

*Framing* cuts bytes into payloads: SSE for most providers, NDJSON for
Ollama, a streamed JSON array for Gemini without ``alt=sse``. *Codecs* turn
each payload into provider-neutral parts (``codecs/``). The *accumulator*
owns identity and completion of tool calls (``accumulate.py``).

With ``api="auto"`` the framing is chosen from the first bytes and the
dialect from the first payload that tells (frames before that are held and
replayed, so nothing is lost).

Nothing here raises on bad provider data: a malformed payload, an error
event or a cut stream becomes a :class:`~toolwire.events.StreamFailed` event
and ``result().error``; decoding stops there. Any exception other than
toolwire's own would be a bug; as a last line of defence it is turned into a
:class:`~toolwire.errors.RemoteProtocolError` that names the payload.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from toolwire._json import JSONDecodeError, loads
from toolwire.accumulate import Accumulator
from toolwire.codecs import APIS, Codec, codec_for
from toolwire.codecs._parts import Part, StreamEndPart
from toolwire.errors import RemoteProtocolError, ToolwireError, UsageError
from toolwire.events import Event
from toolwire.sse import JSONArrayDecoder, NDJSONDecoder, SSEDecoder
from toolwire.types import StreamResult

__all__ = ["DecodedFrame", "StreamDecoder", "sniff_api"]

_ANTHROPIC_EVENTS = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)
_COHERE_EVENTS = frozenset(
    {
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
    }
)


@dataclass(frozen=True, slots=True)
class DecodedFrame:
    """One payload of the stream and what it meant (for ``toolwire inspect``)."""

    event: str
    """The SSE event name (``"message"`` when absent or not SSE)."""
    data: str
    """The payload as received."""
    events: tuple[Event, ...] = field(default=())
    """The toolwire events this payload produced."""


def sniff_api(event: str, data: str) -> str | None:
    """Guess the dialect from one payload, or ``None`` if it does not tell."""
    if event in _ANTHROPIC_EVENTS:
        return "anthropic-messages"
    if event.startswith("response."):
        return "openai-responses"
    if event in _COHERE_EVENTS:
        return "cohere-v2"
    stripped = data.strip()
    if stripped == "[DONE]":
        return "openai-chat"
    try:
        obj = loads(stripped)
    except (JSONDecodeError, ValueError):
        return None
    if not isinstance(obj, dict):
        return None
    kind = obj.get("type")
    if isinstance(kind, str):
        if kind in _ANTHROPIC_EVENTS:
            return "anthropic-messages"
        if kind.startswith("response."):
            return "openai-responses"
        if kind in _COHERE_EVENTS:
            return "cohere-v2"
    if "choices" in obj or str(obj.get("object", "")).startswith("chat.completion"):
        return "openai-chat"
    if "candidates" in obj or "usageMetadata" in obj:
        return "gemini"
    if "message" in obj and "done" in obj:
        return "ollama-ndjson"
    return None


class StreamDecoder:
    """Decodes one streamed response into events and a final result.

    Args:
        api: ``openai-chat``, ``openai-responses``, ``anthropic-messages``,
            ``gemini``, ``ollama-ndjson``, ``cohere-v2``, or ``auto`` to tell
            from the bytes.
        id_factory: makes call ids where the provider sends none.

    Example::

        decoder = StreamDecoder("openai-chat")
        for chunk in response_chunks:
            for event in decoder.feed(chunk):
                if isinstance(event, toolwire.ToolCallReady):
                    run(event.call)
        decoder.close()
        result = decoder.result()
    """

    def __init__(self, api: str = "auto", *, id_factory: Callable[[], str] | None = None) -> None:
        if api != "auto" and api not in APIS:
            raise UsageError(f"unknown api {api!r}; expected one of: {', '.join(APIS)} or auto")
        self._requested = api
        self.api: str | None = None if api == "auto" else api
        """The dialect being decoded (``None`` until ``auto`` has told)."""
        self._acc = Accumulator(id_factory=id_factory)
        self._codec: Codec | None = None
        self._framer: SSEDecoder | NDJSONDecoder | JSONArrayDecoder | None = None
        self._head = b""  # bytes held until the framing is known
        self._held: list[tuple[str, str]] = []  # frames held until the dialect is known
        self._array_ended = False
        self._closed = False
        if api in ("openai-chat", "openai-responses", "anthropic-messages", "cohere-v2"):
            self._framer = SSEDecoder()
        elif api == "ollama-ndjson":
            self._framer = NDJSONDecoder()
        if self.api is not None:
            self._codec = codec_for(self.api)

    # -- public API ---------------------------------------------------------------

    def feed(self, data: bytes) -> list[Event]:
        """Decode the next piece of the response body (any split is fine)."""
        out: list[Event] = []
        self._feed(data, out, None)
        return out

    def feed_frames(self, data: bytes) -> list[DecodedFrame]:
        """Like :meth:`feed`, but grouped by payload, each with its raw text."""
        frames: list[DecodedFrame] = []
        self._feed(data, [], frames)
        return frames

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
        if out:
            frames.append(DecodedFrame(event="", data="", events=tuple(out)))
        return frames

    def result(self) -> StreamResult:
        """The reading so far; final after :meth:`close`."""
        return self._acc.result(self.api or self._requested)

    @property
    def quirks(self) -> tuple[str, ...]:
        """What the stream did that its dialect's reference does not, as the
        codec noticed it so far (sorted; see :attr:`toolwire.codecs.Codec.quirks`)."""
        return tuple(sorted(self._codec.quirks)) if self._codec is not None else ()

    @property
    def error(self) -> ToolwireError | None:
        """Why the stream failed, if it did."""
        return self._acc.error

    # -- internals ------------------------------------------------------------------

    def _feed(self, data: bytes, out: list[Event], frames: list[DecodedFrame] | None) -> None:
        if self._closed:
            raise UsageError("feed() after close(): use a new StreamDecoder per response")
        if self._acc.error is not None or not data:
            return
        try:
            payloads = self._frame(data)
        except ToolwireError as exc:
            self._acc.fail(exc, out)
            return
        self._decode(payloads, out, frames)

    def _close(self, out: list[Event], frames: list[DecodedFrame] | None) -> None:
        if self._closed:
            return
        if self._acc.error is None:
            try:
                payloads = self._frame_close()
            except ToolwireError as exc:
                self._acc.fail(exc, out)
                payloads = []
            self._decode(payloads, out, frames, final=True)
            if (
                self._acc.error is None
                and self._codec is None
                and (self._held or self._head.strip())
            ):
                self._acc.fail(
                    RemoteProtocolError(
                        "could not tell which API this stream speaks; pass api=...",
                        raw=self._head or (self._held[0][1] if self._held else None),
                    ),
                    out,
                )
        self._closed = True
        self._acc.close(out)

    def _frame(self, data: bytes) -> list[tuple[str, str]]:
        framer = self._framer
        if framer is None:
            self._head += data
            stripped = self._head.lstrip(b" \t\r\n\xef\xbb\xbf")
            if not stripped:
                return []
            framer = self._framer = self._pick_framer(stripped[:1])
            data, self._head = self._head, b""
        if isinstance(framer, SSEDecoder):
            return framer.feed_pairs(data)
        if isinstance(framer, JSONArrayDecoder):
            payloads = [("message", text) for text in framer.feed(data)]
            if framer.finished and not self._array_ended:
                self._array_ended = True
                payloads.append(("", ""))  # the closing bracket: end of stream
            return payloads
        return [("message", line) for line in framer.feed(data)]

    def _frame_close(self) -> list[tuple[str, str]]:
        framer = self._framer
        if framer is None:
            return []
        if isinstance(framer, SSEDecoder):
            return framer.close_pairs()
        if isinstance(framer, JSONArrayDecoder):
            payloads = [("message", text) for text in framer.close()]
            if framer.finished and not self._array_ended:
                self._array_ended = True
                payloads.append(("", ""))
            return payloads
        return [("message", line) for line in framer.close()]

    def _pick_framer(self, first: bytes) -> SSEDecoder | NDJSONDecoder | JSONArrayDecoder:
        if first == b"[":
            if self.api not in (None, "gemini"):
                raise RemoteProtocolError(f"{self.api}: the body is a JSON array, not SSE")
            self._set_api("gemini")
            return JSONArrayDecoder()
        if first == b"{" and self.api in (None, "ollama-ndjson"):
            return NDJSONDecoder()
        return SSEDecoder()

    def _set_api(self, api: str) -> None:
        if self.api is None:
            self.api = api
        if self._codec is None:
            self._codec = codec_for(self.api)

    def _decode(
        self,
        payloads: list[tuple[str, str]],
        out: list[Event],
        frames: list[DecodedFrame] | None,
        *,
        final: bool = False,
    ) -> None:
        acc = self._acc
        codec = self._codec
        if codec is None:
            payloads = self._sniff(payloads)
            codec = self._codec
            if codec is None:
                return
        if frames is None and not final:
            # The hot path: no per-payload bookkeeping.
            apply = acc.apply
            decode = codec.decode
            for event, data in payloads:
                if acc.error is not None:
                    return
                if not data and not event:
                    apply([StreamEndPart()], out)
                    continue
                try:
                    decoded = decode(event, data)
                except ToolwireError as exc:
                    acc.fail(exc, out)
                    return
                except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
                    acc.fail(_codec_bug(codec.api, exc, data), out)
                    return
                apply(decoded, out)
            return
        for event, data in payloads:
            if acc.error is not None:
                return
            start = len(out)
            parts: list[Part]
            if not event and not data:
                parts = [StreamEndPart()]
            else:
                try:
                    parts = codec.decode(event, data)
                except ToolwireError as exc:
                    if final and not acc.ended:
                        # The body stopped inside its last payload: a cut,
                        # reported as such by the accumulator's close().
                        acc.cut_tail = data
                        return
                    acc.fail(exc, out)
                    parts = []
                except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
                    acc.fail(_codec_bug(codec.api, exc, data), out)
                    parts = []
            if parts:
                acc.apply(parts, out)
            if frames is not None:
                frames.append(DecodedFrame(event=event, data=data, events=tuple(out[start:])))

    def _sniff(self, payloads: list[tuple[str, str]]) -> list[tuple[str, str]]:
        self._held.extend(payloads)
        if self.api is None:
            for event, data in self._held:
                api = sniff_api(event, data)
                if api is not None:
                    self._set_api(api)
                    break
        else:
            self._set_api(self.api)
        if self._codec is None:
            return []
        held, self._held = self._held, []
        return held


def _codec_bug(api: str, exc: Exception, data: str) -> RemoteProtocolError:
    """A gap in a codec's checks: still a typed error, never a crash."""
    return RemoteProtocolError(f"{api}: unexpected payload ({type(exc).__name__}: {exc})", raw=data)
