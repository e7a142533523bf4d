"""The public adapted streams, synchronous and asynchronous."""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from types import TracebackType

from toolwire.adapters._core import Core, IdFactory
from toolwire.errors import UsageError
from toolwire.events import Event
from toolwire.stream.codecs import registered
from toolwire.stream.codecs.sdk import Shape
from toolwire.types import StreamResult


def _check_iterable(stream: object, dialect: str, *, asynchronous: bool) -> None:
    if asynchronous and not isinstance(stream, AsyncIterable):
        hint = " (use the adapter without the a- prefix)" if isinstance(stream, Iterable) else ""
        raise UsageError(f"{dialect} adapter: {type(stream).__name__} is not async-iterable{hint}")
    if not asynchronous and not isinstance(stream, Iterable):
        hint = " (use the a-prefixed adapter)" if isinstance(stream, AsyncIterable) else ""
        raise UsageError(f"{dialect} adapter: {type(stream).__name__} is not iterable{hint}")


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
        dialect: ``openai-chat``, ``openai-responses`` or ``anthropic-messages``.
        id_factory: makes call ids where the provider sends none.

    Raises:
        UsageError: ``stream`` is not iterable, or ``dialect`` is unknown.
    """

    def __init__(
        self, stream: Iterable[object], dialect: str, *, id_factory: IdFactory | None = None
    ) -> None:
        shape = shape_for(dialect)
        _check_iterable(stream, dialect, asynchronous=False)
        # The tap goes in before the SDK's iteration starts: iter() below
        # only creates its generator.
        self._core = Core(shape, stream, id_factory)
        self._source: object = stream
        self._it: Iterator[object] = iter(stream)
        self._pending: deque[Event] = deque()
        self._done = False

    @property
    def dialect(self) -> str:
        """The wire dialect being decoded."""
        return self._core.dialect

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
        return f"<AdaptedStream {self.dialect} {state}>"


class AsyncAdaptedStream:
    """Toolwire events from an SDK's asynchronous stream.

    The async twin of :class:`AdaptedStream`: ``async for event in ...``,
    then :meth:`result`; ``async with`` (or :meth:`aclose`) to stop early.
    Usually made by :func:`aopenai_chat`, :func:`aopenai_responses` or
    :func:`aanthropic_messages`.

    Args:
        stream: the SDK's async stream (or any async iterable of its objects
            or of dicts).
        dialect: ``openai-chat``, ``openai-responses`` or ``anthropic-messages``.
        id_factory: makes call ids where the provider sends none.

    Raises:
        UsageError: ``stream`` is not async-iterable, or ``dialect`` is unknown.
    """

    def __init__(
        self, stream: AsyncIterable[object], dialect: str, *, id_factory: IdFactory | None = None
    ) -> None:
        shape = shape_for(dialect)
        _check_iterable(stream, dialect, asynchronous=True)
        self._core = Core(shape, stream, id_factory)
        self._source: object = stream
        self._it: AsyncIterator[object] = stream.__aiter__()
        self._pending: deque[Event] = deque()
        self._done = False

    @property
    def dialect(self) -> str:
        """The wire dialect being decoded."""
        return self._core.dialect

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
        return f"<AsyncAdaptedStream {self.dialect} {state}>"


def shape_for(dialect: str) -> Shape:
    """The SDK shape of a dialect that has an adapter."""
    shapes = {d.name: d.sdk_shape for d in registered() if d.sdk_shape is not None}
    shape = shapes.get(dialect)
    if shape is None:
        raise UsageError(
            f"no SDK adapter for dialect {dialect!r}; expected one of: {', '.join(shapes)}"
        )
    return shape
