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

from collections.abc import AsyncIterable, Iterable

from toolwire.adapters._core import IdFactory
from toolwire.adapters._streams import AdaptedStream, AsyncAdaptedStream

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
