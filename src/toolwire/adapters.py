"""Adapters for the official SDKs: their stream objects in, toolwire events out.

Code that already streams with the ``openai`` or ``anthropic`` SDK keeps its
client and HTTP layer, and gets toolwire's accumulation, partial arguments and
failure handling by wrapping the stream::

    import toolwire
    import toolwire.adapters

    stream = client.chat.completions.create(model=..., messages=..., tools=..., stream=True)
    events = toolwire.adapters.openai_chat(stream)
    for event in events:
        if isinstance(event, toolwire.ToolCallReady):
            run(event.call)  # complete, parsed arguments
    result = events.result()  # toolwire.StreamResult

Theory of operation
-------------------
The SDKs parse the SSE stream themselves and yield pydantic models, built from
each payload without validation: a model's *set* fields are exactly the keys
the provider sent. ``model_dump(mode="json", by_alias=True,
exclude_unset=True)`` therefore gives the payload back as it was on the wire
(extra provider fields included, a missing ``index`` still missing, ``""`` and
``null`` kept), and the adapter feeds it, as JSON text, to the dialect's codec
and then to the accumulator: the very path :class:`~toolwire.StreamDecoder`
takes after framing. The rules for identity, completion, repair and partial
arguments are the same as for raw bytes, with no second implementation to
drift from the first. The price is one ``model_dump`` and one JSON encoding
per chunk (``bench/bench_adapters.py`` measures it).

What the SDKs hide, and how the adapter copes:

* The end marker. The openai SDK consumes ``data: [DONE]`` and yields nothing
  for it. When the adapter is given the SDK's stream object itself, before
  iterating it, it watches that stream's server-sent events for the marker;
  given any other iterable, a choice is complete at its finish reason, as the
  accumulator rules. Anthropic's ``message_stop`` and the Responses API's
  ``response.completed`` are ordinary events. If the iteration ends without
  an end marker and without a finish reason for every choice, the stream was
  cut: the adapter yields :class:`~toolwire.StreamFailed` with
  :class:`~toolwire.StreamTruncated`, and the calls in flight are reported as
  incomplete, never handed on as ready.
* Failures inside the stream. The SDKs raise from inside the iteration where
  the wire went wrong. Those failures are provider data and end the
  iteration with a ``StreamFailed`` event, as in ``StreamDecoder``, with the
  SDK's exception as the error's ``__cause__``: an in-stream error event (the
  SDK's ``APIError``) gives :class:`~toolwire.StreamErrorEvent`; a payload the
  SDK could not parse gives :class:`~toolwire.RemoteProtocolError`; a
  connection lost mid-stream (``APIConnectionError``, an httpx transport
  error) gives ``StreamTruncated`` -- unless the stream had already said
  everything (its end marker, or a finish reason for every choice), in which
  case it ends normally. Any other exception propagates unchanged.
* The SDKs' helper streams. The events of ``client.chat.completions.stream()``,
  ``client.responses.stream()`` and ``client.messages.stream()`` are accepted
  too: the raw chunk of a ``chunk`` event is used, the helpers' derived events
  (``content.delta``, ``text``, ``input_json``...) are skipped, and the
  snapshots they attach are left out.

Plain dicts (payloads already parsed from JSON) and strings (the text of an
SSE ``data:`` field, ``"[DONE]"`` included) are accepted as well. The
SDKs are never imported here: objects are recognized by their shape, and the
SDKs' exceptions by looking their classes up only in SDK modules that are
already loaded.

Validation of arguments against the tools' schemas stays in the tool layer:
hand the ready calls to :meth:`toolwire.Toolbox.execute`, which answers an
invalid call with a structured ``invalid_arguments`` result for the model.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Mapping
from types import TracebackType
from typing import Any

from toolwire._json import dumps
from toolwire._parts import (
    StreamEndPart,
)
from toolwire.accumulate import Accumulator
from toolwire.codecs import Codec, codec_for
from toolwire.codecs._common import error_event
from toolwire.errors import (
    RemoteProtocolError,
    StreamTruncated,
    ToolwireError,
    UsageError,
)
from toolwire.events import Event
from toolwire.types import StreamResult

__all__ = [
    "AdaptedStream",
    "AsyncAdaptedStream",
    "aanthropic_messages",
    "anthropic_messages",
    "aopenai_chat",
    "aopenai_responses",
    "openai_chat",
    "openai_responses",
]

IdFactory = Callable[[], str]


# -- from SDK objects to wire payloads ---------------------------------------------


def _dump(obj: object, exclude: frozenset[str] | None = None) -> dict[str, Any] | None:
    """The wire payload of an SDK model (or a dict), or ``None`` if ``obj`` is neither."""
    if isinstance(obj, Mapping):
        return dict(obj)
    model_dump = getattr(obj, "model_dump", None)
    if callable(model_dump):
        # exclude_unset keeps exactly the keys the provider sent; warnings are
        # off because the SDKs build unknown block types into a sibling model
        # (an ``mcp_tool_use`` block as a ``TextBlock``), which pydantic would
        # otherwise warn about while still dumping every field as received.
        value = model_dump(
            mode="json", by_alias=True, exclude_unset=True, exclude=exclude, warnings=False
        )
    else:
        to_dict = getattr(obj, "to_dict", None)
        if not callable(to_dict):
            return None
        value = to_dict()
    return value if isinstance(value, dict) else None


def _type_first(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``(event name, payload)`` with ``type`` as the first key, where the wire
    has it: pydantic dumps fields in declaration order (``type`` last), and
    the codecs spot their hottest events by the payload's first bytes."""
    kind = payload.get("type")
    if not isinstance(kind, str):
        return "message", payload
    if next(iter(payload)) != "type":
        payload = {"type": kind, **payload}
    return kind, payload


class _Dialect:
    """How one SDK's stream objects map back to the dialect's payloads."""

    api = ""
    watches_done = False
    """The SDK swallows an end marker that the adapter must watch for itself."""
    expects = ""

    def payload(self, obj: object) -> tuple[str, dict[str, Any]] | None:
        """``(event name, payload)`` of ``obj``, or ``None`` for a helper's
        derived event that carries nothing new."""
        raise NotImplementedError

    def unknown(self, obj: object) -> UsageError:
        return UsageError(
            f"{self.api} adapter: expected {self.expects} or a dict, got {type(obj).__name__}"
        )


_CHAT_DERIVED = frozenset(
    {
        "content.delta",
        "content.done",
        "refusal.delta",
        "refusal.done",
        "tool_calls.function.arguments.delta",
        "tool_calls.function.arguments.done",
        "logprobs.content.delta",
        "logprobs.content.done",
        "logprobs.refusal.delta",
        "logprobs.refusal.done",
    }
)


class _OpenAIChat(_Dialect):
    api = "openai-chat"
    watches_done = True
    expects = "ChatCompletionChunk objects"

    def payload(self, obj: object) -> tuple[str, dict[str, Any]] | None:
        if not isinstance(obj, Mapping) and not hasattr(obj, "choices"):
            # An event of the chat.completions.stream() helper: the raw chunk
            # is inside the "chunk" event; the others are derived from it.
            kind = getattr(obj, "type", None)
            if kind == "chunk" and hasattr(obj, "chunk"):
                obj = obj.chunk
            elif kind in _CHAT_DERIVED:
                return None
        payload = _dump(obj)
        if payload is None:
            raise self.unknown(obj)
        return "message", payload


class _OpenAIResponses(_Dialect):
    api = "openai-responses"
    expects = "Responses stream events"
    _EXCLUDE = frozenset({"snapshot"})  # added by the responses.stream() helper

    def payload(self, obj: object) -> tuple[str, dict[str, Any]] | None:
        payload = _dump(obj, None if isinstance(obj, Mapping) else self._EXCLUDE)
        if payload is None:
            raise self.unknown(obj)
        return _type_first(payload)


_ANTHROPIC_DERIVED = frozenset({"text", "citation", "thinking", "signature", "input_json"})
# What the messages.stream() helper adds to raw events: the finished block
# and message snapshots, which are not part of the wire payload.
_ANTHROPIC_EXTRAS = {
    "content_block_stop": frozenset({"content_block"}),
    "message_stop": frozenset({"message"}),
}


class _AnthropicMessages(_Dialect):
    api = "anthropic-messages"
    expects = "Messages stream events"

    def payload(self, obj: object) -> tuple[str, dict[str, Any]] | None:
        if isinstance(obj, Mapping):
            payload = _dump(obj)
        else:
            kind = getattr(obj, "type", None)
            if kind in _ANTHROPIC_DERIVED:
                return None
            payload = _dump(obj, _ANTHROPIC_EXTRAS.get(kind) if isinstance(kind, str) else None)
        if payload is None:
            raise self.unknown(obj)
        return _type_first(payload)


_DIALECTS: dict[str, _Dialect] = {
    d.api: d for d in (_OpenAIChat(), _OpenAIResponses(), _AnthropicMessages())
}


# -- the end marker the openai SDK swallows ----------------------------------------


class _DoneTap:
    """Stands in for an SDK stream's SSE decoder and notes ``[DONE]``.

    The openai SDK reads its decoder (``Stream._decoder``) when iteration
    starts and stops at ``[DONE]`` without yielding anything for it. Replacing
    the decoder before that point is the only way to tell a finished stream
    from one whose body just ended; if the SDK's internals change, the tap is
    simply never used and completion falls back to finish reasons.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.seen = False

    def _note(self, sse: Any) -> None:
        data = getattr(sse, "data", None)
        if isinstance(data, str) and data.startswith("[DONE]"):
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


def _install_done_tap(source: object) -> _DoneTap | None:
    # chat.completions.stream() wraps the raw stream in a helper.
    target: Any = getattr(source, "_raw_stream", source)
    decoder = getattr(target, "_decoder", None)
    if decoder is None or not (hasattr(decoder, "iter_bytes") or hasattr(decoder, "aiter_bytes")):
        return None
    tap = _DoneTap(decoder)
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


class _Core:
    __slots__ = ("acc", "api", "codec", "dialect", "tap")

    def __init__(self, dialect: _Dialect, source: object, id_factory: IdFactory | None) -> None:
        self.dialect = dialect
        self.api = dialect.api
        self.codec: Codec = codec_for(dialect.api)
        self.acc = Accumulator(id_factory=id_factory)
        self.tap = _install_done_tap(source) if dialect.watches_done else None

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
            found = self.dialect.payload(obj)
            if found is None:
                return out
            event, payload = found
            try:
                data = dumps(payload)
            except (TypeError, ValueError) as exc:
                raise UsageError(
                    f"{self.api} adapter: a payload is not JSON-serializable ({exc})"
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
                    f"{self.api}: unexpected payload ({type(exc).__name__}: {exc})", raw=data
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
            if (self.tap is not None and self.tap.seen) or self.acc.result(self.api).complete:
                return self.end()  # everything had arrived; only the goodbye was lost
            incomplete = [
                call
                for choice in self.acc.result(self.api).choices
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
            error = error_event(body if body is not None else str(exc), self.api)
        else:
            doc = exc.doc if isinstance(exc, json.JSONDecodeError) else None
            error = RemoteProtocolError(
                f"{self.api}: the SDK could not parse a stream payload ({exc})", raw=doc
            )
        error.__cause__ = exc
        out: list[Event] = []
        self.acc.fail(error, out)
        self.acc.close(out)
        return out

    def result(self) -> StreamResult:
        return self.acc.result(self.api)


def _dialect(api: str) -> _Dialect:
    dialect = _DIALECTS.get(api)
    if dialect is None:
        raise UsageError(f"no SDK adapter for api {api!r}; expected one of: {', '.join(_DIALECTS)}")
    return dialect


def _check_iterable(stream: object, api: str, *, asynchronous: bool) -> None:
    if asynchronous and not isinstance(stream, AsyncIterable):
        hint = " (use the adapter without the a- prefix)" if isinstance(stream, Iterable) else ""
        raise UsageError(f"{api} adapter: {type(stream).__name__} is not async-iterable{hint}")
    if not asynchronous and not isinstance(stream, Iterable):
        hint = " (use the a-prefixed adapter)" if isinstance(stream, AsyncIterable) else ""
        raise UsageError(f"{api} adapter: {type(stream).__name__} is not iterable{hint}")


# -- the public streams ---------------------------------------------------------------


class AdaptedStream:
    """Toolwire events from an SDK's synchronous stream.

    Iterate it for :mod:`toolwire.events` (each SDK object may give zero or
    more events); at the end of the iteration the stream is closed as
    ``StreamDecoder.close()`` would, so a cut stream ends with
    :class:`~toolwire.StreamFailed`. Then :meth:`result` is the final
    :class:`~toolwire.StreamResult`. Usually made by :func:`openai_chat`,
    :func:`openai_responses` or :func:`anthropic_messages`.

    Use it as a context manager (or call :meth:`close`) to stop early: the
    SDK stream is closed, and calls still in flight are reported incomplete.

    Args:
        stream: the SDK's stream (or any iterable of its objects or of dicts).
        api: ``openai-chat``, ``openai-responses`` or ``anthropic-messages``.
        id_factory: makes call ids where the provider sends none.

    Raises:
        UsageError: ``stream`` is not iterable, or ``api`` is unknown.
    """

    def __init__(
        self, stream: Iterable[object], api: str, *, id_factory: IdFactory | None = None
    ) -> None:
        dialect = _dialect(api)
        _check_iterable(stream, api, asynchronous=False)
        # The tap goes in before the SDK's iteration starts: iter() below
        # only creates its generator.
        self._core = _Core(dialect, stream, id_factory)
        self._source: object = stream
        self._it: Iterator[object] = iter(stream)
        self._pending: deque[Event] = deque()
        self._done = False

    @property
    def api(self) -> str:
        """The wire dialect being decoded."""
        return self._core.api

    @property
    def finished(self) -> bool:
        """True once the iteration has ended (or :meth:`close` was called):
        :meth:`result` is final."""
        return self._done

    def __iter__(self) -> AdaptedStream:
        return self

    def __next__(self) -> Event:
        pending = self._pending
        while not pending:
            if self._done:
                raise StopIteration
            self._step()
        return pending.popleft()

    def _step(self) -> None:
        core = self._core
        try:
            obj = next(self._it)
        except StopIteration:
            self._finish(core.end())
            return
        except Exception as exc:
            events = core.source_failed(exc)
            self._finish(events or [])
            if events is None:
                raise
            return
        self._pending.extend(core.feed(obj))
        if core.failed:
            self._finish([])

    def _finish(self, events: list[Event]) -> None:
        self._pending.extend(events)
        self._done = True
        self._close_source()

    def _close_source(self) -> None:
        for target in (self._it, self._source):
            close = getattr(target, "close", None)
            if callable(close):
                close()

    def result(self) -> StreamResult:
        """The reading of the stream so far; final once :attr:`finished`."""
        return self._core.result()

    def close(self) -> None:
        """Stop early: close the SDK stream and the accumulator (calls still
        being streamed become incomplete, never ready). Idempotent."""
        if not self._done:
            self._done = True
            self._core.end()
            self._close_source()
        self._pending.clear()

    def __enter__(self) -> AdaptedStream:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "finished" if self._done else "open"
        return f"<AdaptedStream {self.api} {state}>"


class AsyncAdaptedStream:
    """Toolwire events from an SDK's asynchronous stream.

    The async twin of :class:`AdaptedStream`: ``async for event in ...``,
    then :meth:`result`; ``async with`` (or :meth:`aclose`) to stop early.
    Usually made by :func:`aopenai_chat`, :func:`aopenai_responses` or
    :func:`aanthropic_messages`.

    Args:
        stream: the SDK's async stream (or any async iterable of its objects
            or of dicts).
        api: ``openai-chat``, ``openai-responses`` or ``anthropic-messages``.
        id_factory: makes call ids where the provider sends none.

    Raises:
        UsageError: ``stream`` is not async-iterable, or ``api`` is unknown.
    """

    def __init__(
        self, stream: AsyncIterable[object], api: str, *, id_factory: IdFactory | None = None
    ) -> None:
        dialect = _dialect(api)
        _check_iterable(stream, api, asynchronous=True)
        self._core = _Core(dialect, stream, id_factory)
        self._source: object = stream
        self._it: AsyncIterator[object] = stream.__aiter__()
        self._pending: deque[Event] = deque()
        self._done = False

    @property
    def api(self) -> str:
        """The wire dialect being decoded."""
        return self._core.api

    @property
    def finished(self) -> bool:
        """True once the iteration has ended (or :meth:`aclose` was called):
        :meth:`result` is final."""
        return self._done

    def __aiter__(self) -> AsyncAdaptedStream:
        return self

    async def __anext__(self) -> Event:
        pending = self._pending
        while not pending:
            if self._done:
                raise StopAsyncIteration
            await self._step()
        return pending.popleft()

    async def _step(self) -> None:
        core = self._core
        try:
            obj = await self._it.__anext__()
        except StopAsyncIteration:
            await self._finish(core.end())
            return
        except Exception as exc:
            events = core.source_failed(exc)
            await self._finish(events or [])
            if events is None:
                raise
            return
        self._pending.extend(core.feed(obj))
        if core.failed:
            await self._finish([])

    async def _finish(self, events: list[Event]) -> None:
        self._pending.extend(events)
        self._done = True
        await self._close_source()

    async def _close_source(self) -> None:
        for target in (self._it, self._source):
            close = getattr(target, "aclose", None) or getattr(target, "close", None)
            if callable(close):
                outcome = close()
                if inspect.isawaitable(outcome):
                    await outcome

    def result(self) -> StreamResult:
        """The reading of the stream so far; final once :attr:`finished`."""
        return self._core.result()

    async def aclose(self) -> None:
        """Stop early: close the SDK stream and the accumulator (calls still
        being streamed become incomplete, never ready). Idempotent."""
        if not self._done:
            self._done = True
            self._core.end()
            await self._close_source()
        self._pending.clear()

    async def __aenter__(self) -> AsyncAdaptedStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        state = "finished" if self._done else "open"
        return f"<AsyncAdaptedStream {self.api} {state}>"


# -- one entry point per SDK stream --------------------------------------------------


def openai_chat(stream: Iterable[object], *, id_factory: IdFactory | None = None) -> AdaptedStream:
    """Events from ``client.chat.completions.create(..., stream=True)``.

    Also accepts the ``client.chat.completions.stream()`` helper (once
    entered), any iterable of ``ChatCompletionChunk`` objects, and dicts.
    Works for every OpenAI-compatible server the SDK talks to.

    Args:
        stream: the SDK's ``Stream[ChatCompletionChunk]``, not yet iterated
            (so that the ``[DONE]`` marker can be seen).
        id_factory: makes call ids where the provider sends none.
    """
    return AdaptedStream(stream, "openai-chat", id_factory=id_factory)


def aopenai_chat(
    stream: AsyncIterable[object], *, id_factory: IdFactory | None = None
) -> AsyncAdaptedStream:
    """The async twin of :func:`openai_chat` (``openai.AsyncOpenAI``)."""
    return AsyncAdaptedStream(stream, "openai-chat", id_factory=id_factory)


def openai_responses(
    stream: Iterable[object], *, id_factory: IdFactory | None = None
) -> AdaptedStream:
    """Events from ``client.responses.create(..., stream=True)``.

    Also accepts the ``client.responses.stream()`` helper (once entered), any
    iterable of Responses stream events, and dicts.
    """
    return AdaptedStream(stream, "openai-responses", id_factory=id_factory)


def aopenai_responses(
    stream: AsyncIterable[object], *, id_factory: IdFactory | None = None
) -> AsyncAdaptedStream:
    """The async twin of :func:`openai_responses` (``openai.AsyncOpenAI``)."""
    return AsyncAdaptedStream(stream, "openai-responses", id_factory=id_factory)


def anthropic_messages(
    stream: Iterable[object], *, id_factory: IdFactory | None = None
) -> AdaptedStream:
    """Events from ``client.messages.create(..., stream=True)``.

    Also accepts the ``client.messages.stream()`` helper's ``MessageStream``
    (its derived ``text``/``input_json``... events are skipped), any iterable
    of ``RawMessageStreamEvent`` objects (beta ones too), and dicts.
    """
    return AdaptedStream(stream, "anthropic-messages", id_factory=id_factory)


def aanthropic_messages(
    stream: AsyncIterable[object], *, id_factory: IdFactory | None = None
) -> AsyncAdaptedStream:
    """The async twin of :func:`anthropic_messages` (``anthropic.AsyncAnthropic``)."""
    return AsyncAdaptedStream(stream, "anthropic-messages", id_factory=id_factory)
