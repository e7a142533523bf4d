"""One adapted stream's state: SDK objects through the codec and the accumulator,
the end marker the openai SDK swallows, and what the SDK's exceptions mean."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from toolwire.errors import RemoteProtocolError, StreamTruncated, ToolwireError, UsageError
from toolwire.events import Event
from toolwire.stream.accumulate import Accumulator
from toolwire.stream.codecs import Codec, codec_for, error_event
from toolwire.stream.codecs.sdk import Shape
from toolwire.stream.jsonio import dumps
from toolwire.stream.parts import StreamEndPart
from toolwire.types import StreamResult

IdFactory = Callable[[], str]


# -- the end marker the openai SDK swallows ----------------------------------------


class _DoneTap:
    """Stands in for an SDK stream's SSE decoder and notes ``[DONE]``.

    The openai SDK reads its decoder (``Stream._decoder``) when iteration
    starts and stops at ``[DONE]`` without yielding anything for it. Replacing
    the decoder before that point is the only way to tell a finished stream
    from one whose body just ended; if the SDK's internals change, the tap is
    simply never used and completion falls back to finish reasons.
    """

    def __init__(self, inner: Any, marker: str) -> None:
        self._inner = inner
        self._marker = marker
        self.seen = False

    def _note(self, sse: Any) -> None:
        data = getattr(sse, "data", None)
        if isinstance(data, str) and data.startswith(self._marker):
            self.seen = True

    def iter_bytes(self, iterator: Any) -> Iterator[Any]:
        for sse in self._inner.iter_bytes(iterator):
            self._note(sse)
            yield sse

    async def aiter_bytes(self, iterator: Any) -> AsyncIterator[Any]:
        async for sse in self._inner.aiter_bytes(iterator):
            self._note(sse)
            yield sse

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _install_done_tap(source: object, marker: str) -> _DoneTap | None:
    # chat.completions.stream() wraps the raw stream in a helper.
    target: Any = getattr(source, "_raw_stream", source)
    decoder = getattr(target, "_decoder", None)
    if decoder is None or not (hasattr(decoder, "iter_bytes") or hasattr(decoder, "aiter_bytes")):
        return None
    tap = _DoneTap(decoder, marker)
    try:
        target._decoder = tap
    except (AttributeError, TypeError):
        return None
    return tap


# -- what an exception from the SDK's iteration means ------------------------------

_BAD_PAYLOAD = "bad_payload"
_ERROR_EVENT = "error_event"
_CUT = "cut"


def _is_instance(exc: BaseException, module: Any, name: str) -> bool:
    cls = getattr(module, name, None)
    return isinstance(cls, type) and isinstance(exc, cls)


def _classify(exc: Exception) -> str | None:
    """What an exception raised by an SDK's stream says about the stream, or
    ``None`` when it is not an SDK's report of the wire."""
    if isinstance(exc, json.JSONDecodeError):
        return _BAD_PAYLOAD  # the SDKs parse each payload with json.loads
    for name in ("openai", "anthropic"):
        sdk = sys.modules.get(name)
        if sdk is None:
            continue
        if _is_instance(exc, sdk, "APIConnectionError"):  # includes APITimeoutError
            return _CUT
        if _is_instance(exc, sdk, "APIResponseValidationError"):
            return _BAD_PAYLOAD
        if _is_instance(exc, sdk, "APIError"):
            return _ERROR_EVENT
    for name in ("httpx", "httpx2"):
        http = sys.modules.get(name)
        if http is not None and _is_instance(exc, http, "TransportError"):
            return _CUT
    return None


# -- the sans-I/O core shared by the sync and async streams --------------------------


class Core:
    __slots__ = ("acc", "codec", "dialect", "shape", "tap")

    def __init__(self, shape: Shape, source: object, id_factory: IdFactory | None) -> None:
        self.shape = shape
        self.dialect = shape.dialect
        self.codec: Codec = codec_for(shape.dialect)
        self.acc = Accumulator(id_factory=id_factory)
        self.acc.state_dialect = self.codec.dialect
        marker = shape.end_marker
        self.tap = _install_done_tap(source, marker) if marker is not None else None

    @property
    def failed(self) -> bool:
        return self.acc.error is not None

    def feed(self, obj: object) -> list[Event]:
        out: list[Event] = []
        acc = self.acc
        if acc.error is not None:
            return out
        if isinstance(obj, str):
            event, data = "message", obj  # already the text of an SSE data field
        else:
            found = self.shape.payload(obj)
            if found is None:
                return out
            event, payload = found
            try:
                data = dumps(payload)
            except (TypeError, ValueError) as exc:
                raise UsageError(
                    f"{self.dialect} adapter: a payload is not JSON-serializable ({exc})"
                ) from exc
        try:
            parts = self.codec.decode(event, data)
        except ToolwireError as exc:
            acc.fail(exc, out)
            return out
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            # A gap in a codec's checks: still a typed error, never a crash.
            acc.fail(
                RemoteProtocolError(
                    f"{self.dialect}: unexpected payload ({type(exc).__name__}: {exc})", raw=data
                ),
                out,
            )
            return out
        if parts:
            acc.apply(parts, out)
        return out

    def end(self) -> list[Event]:
        """The source is exhausted (or the caller stopped early)."""
        out: list[Event] = []
        if self.tap is not None and self.tap.seen and self.acc.error is None and not self.acc.ended:
            self.acc.apply([StreamEndPart()], out)
        self.acc.close(out)
        return out

    def source_failed(self, exc: Exception) -> list[Event] | None:
        """The source raised ``exc``: the events that says, or ``None`` when
        the exception is not about the stream and must propagate."""
        kind = _classify(exc)
        if kind is None:
            return None
        if self.acc.closed:
            return []
        error: ToolwireError
        if kind == _CUT:
            if (self.tap is not None and self.tap.seen) or self.acc.result(self.dialect).complete:
                return self.end()  # everything had arrived; only the goodbye was lost
            incomplete = [
                call
                for choice in self.acc.result(self.dialect).choices
                for call in choice.incomplete_tool_calls
            ]
            what = (
                f"{len(incomplete)} tool call(s) were still being streamed"
                if incomplete
                else "no tool call was in progress"
            )
            error = StreamTruncated(
                f"the connection failed ({type(exc).__name__}) before the provider's "
                f"end marker; {what}",
                incomplete_tool_calls=incomplete,
            )
        elif kind == _ERROR_EVENT:
            body = getattr(exc, "body", None)
            error = error_event(body if body is not None else str(exc), self.dialect)
        else:
            doc = exc.doc if isinstance(exc, json.JSONDecodeError) else None
            error = RemoteProtocolError(
                f"{self.dialect}: the SDK could not parse a stream payload ({exc})", raw=doc
            )
        error.__cause__ = exc
        out: list[Event] = []
        self.acc.fail(error, out)
        self.acc.close(out)
        return out

    def result(self) -> StreamResult:
        return self.acc.result(self.dialect)
