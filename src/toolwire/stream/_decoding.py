"""Payloads to the accumulator: the short way, in runs, and payload by payload.

A :class:`PayloadDecoder` is the part of a
:class:`~toolwire.stream.decoder.StreamDecoder` that hands a codec's reading
of each payload to the accumulator (see the decoder's theory of operation):
:meth:`~PayloadDecoder.decode_fast` for the body read as it comes, argument
deltas matched by their text applied a run at a time, and
:meth:`~PayloadDecoder.decode_frames` for ``inspect`` and the last payloads
of a body. It owns what it needs: the accumulator it feeds, the codec that
matches argument deltas by their text, and the count of deltas read so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolwire.errors import RemoteProtocolError, ToolwireError
from toolwire.events import Event
from toolwire.stream.accumulate import Accumulator
from toolwire.stream.codecs import ArgsEventCodec, Codec
from toolwire.stream.framing import END_OF_BODY, Frame
from toolwire.stream.parts import ArgsPart, Part, StreamEndPart

__all__ = ["DecodedFrame", "PayloadDecoder"]


@dataclass(frozen=True, slots=True)
class DecodedFrame:
    """One payload of the stream and what it meant (for ``toolwire inspect``)."""

    event: str
    """The SSE event name (``"message"`` when absent or not SSE)."""
    data: str
    """The payload as received."""
    events: tuple[Event, ...] = field(default=())
    """The toolwire events this payload produced."""


class PayloadDecoder:
    """Hands decoded payloads to an accumulator.

    Args:
        acc: the accumulator fed (its decoder's).
    """

    __slots__ = ("_acc", "fast", "short_path_deltas")

    def __init__(self, acc: Accumulator) -> None:
        self._acc = acc
        self.fast: ArgsEventCodec | None = None
        """The codec that reads argument deltas by their text, when the
        reader hands such deltas over as matches (the short path)."""
        self.short_path_deltas = 0
        """How many argument deltas were read the short way."""

    def decode_fast(
        self,
        codec: Codec,
        payloads: Sequence[Frame | re.Match[str] | re.Match[bytes]],
        out: list[Event],
    ) -> None:
        """The hot path: no per-payload bookkeeping. The argument deltas that
        the reader matched by their shape go straight to their call, a run of
        consecutive ones for one call at a time."""
        acc = self._acc
        add_args = acc.calls.add_args
        fast = self.fast  # not None when the reader matched
        if len(payloads) == 1 and fast is not None and not isinstance(payloads[0], tuple):
            # A network read of one matched fragment, the commonest of a
            # small streamed turn: no run to gather.
            delta = fast.args_delta(payloads[0])
            if delta is not None:
                self.apply_run(delta[0], delta[1], [delta[2]], out)
                return
        apply = acc.apply
        decode = codec.decode
        args_run = fast.args_run if fast is not None else _no_args_run
        args_frame = fast.args_frame if fast is not None else _no_args_frame
        text_delta = fast.text_delta if fast is not None else _no_text_delta
        run: list[str] = []  # fragments matched for one call, not applied yet
        run_c = run_index = -1
        i, n = 0, len(payloads)
        while i < n:
            item = payloads[i]
            if not isinstance(item, tuple):
                found = args_run(payloads, i)
                if found is not None:
                    c, index, texts, i = found
                    if index != run_index or c != run_c:
                        if run and not self.apply_run(run_c, run_index, run, out):
                            return
                        run, run_c, run_index = texts, c, index
                    else:
                        run += texts
                    continue
                text = text_delta(item)
                if text is not None:
                    # Text deltas matched in place (Bedrock): straight to choice 0,
                    # a run of them at a time.
                    texts = [text] if text else []
                    i += 1
                    while i < n:
                        following = payloads[i]
                        if isinstance(following, tuple):
                            break
                        more = text_delta(following)
                        if more is None:
                            break
                        if more:
                            texts.append(more)
                        i += 1
                    if run:
                        if not self.apply_run(run_c, run_index, run, out):
                            return
                        run, run_index = [], -1
                    if texts:
                        acc.add_text_run(texts, out)
                        if acc.error is not None:
                            return
                    continue
                event, data = args_frame(item)
            else:
                event, data = item
            i += 1
            if run:
                if not self.apply_run(run_c, run_index, run, out):
                    return
                run, run_index = [], -1
            if acc.error is not None:
                return
            if not data and not event:  # END_OF_BODY
                apply([StreamEndPart()], out)
                continue
            try:
                decoded = decode(event, data)
                if len(decoded) == 1 and type(part := decoded[0]) is ArgsPart:
                    # One argument fragment, the commonest payload: straight to its call.
                    add_args(part.choice, part.index, part.args, out)
                    continue
            except ToolwireError as exc:
                acc.fail(exc, out)
                return
            except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
                acc.fail(_codec_bug(codec.dialect, exc, data), out)
                return
            apply(decoded, out)
        if run:
            self.apply_run(run_c, run_index, run, out)

    def apply_run(self, c: int, index: int, run: list[str], out: list[Event]) -> bool:
        """Apply matched fragments of one call; whether the stream goes on."""
        acc = self._acc
        if acc.error is not None:
            return False
        self.short_path_deltas += len(run)
        try:
            if len(run) == 1:
                acc.calls.add_args(c, index, run[0], out)
            else:
                acc.calls.add_args_run(c, index, run, out)
        except ToolwireError as exc:  # a limit of toolwire.stream.limits was passed
            acc.fail(exc, out)
        return acc.error is None

    def decode_frames(
        self,
        codec: Codec,
        payloads: list[tuple[str, str]],
        out: list[Event],
        frames: list[DecodedFrame] | None,
        final: bool,
    ) -> None:
        """Payload by payload, noting what each caused (``inspect``), and the
        last payloads of a body, which may have been cut."""
        acc = self._acc
        for event, data in payloads:
            if acc.error is not None:
                return
            start = len(out)
            parts: list[Part]
            if (event, data) == END_OF_BODY:
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
                    acc.fail(_codec_bug(codec.dialect, exc, data), out)
                    parts = []
            if parts:
                acc.apply(parts, out)
            if frames is not None:
                frames.append(DecodedFrame(event=event, data=data, events=tuple(out[start:])))


def _no_args_run(_items: Sequence[Any], _i: int) -> tuple[int, int, list[str], int] | None:
    raise AssertionError("a match from a reader without a matcher")


def _no_text_delta(_m: object) -> None:
    return None


def _no_args_frame(_m: re.Match[Any]) -> tuple[str, str]:
    raise AssertionError("a match from a reader without a matcher")


def _codec_bug(dialect: str, exc: Exception, data: str) -> RemoteProtocolError:
    """A gap in a codec's checks: still a typed error, never a crash."""
    return RemoteProtocolError(
        f"{dialect}: unexpected payload ({type(exc).__name__}: {exc})", raw=data
    )
