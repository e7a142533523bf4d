"""Partial arguments, replayed: how each tool call's arguments grew, delta
by delta, read from a cassette of the run's streams.

Theory of operation: the journal keeps each call's final arguments, not the
stream they came in. A cassette (``toolwire proxy --record DIR``, or the
``toolwire_cassette`` fixture) keeps the stream byte for byte, chunk by chunk,
with each chunk's arrival time. :func:`load_replays` decodes every streamed
exchange of the cassettes given to ``toolwire view --cassette`` with the
decoder the agent uses, and keeps, for each complete tool call, its argument
deltas with the time each arrived. A call is found on a run's page by its
id, which the provider gave and both the stream and the journal hold, and by
its tool and arguments, which must be the journal's too (ids repeat across
runs of an emulation, and a provider that sends none gets made-up ones).

What reaches a page is cleaned as every value is: credential-shaped runs of
the final arguments are masked in every step (a secret that is only half
arrived in an early step is masked too), and the page sets it as text.
Bounded: at most :data:`MAX_STEPS` steps a call (more deltas are grouped,
and the page says so); each body is read within the cassette reader's
limit; decoded cassettes are cached while their files are unchanged.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolwire.events import ToolCallDelta, ToolCallReady
from toolwire.journal import JournalEvent, ToolIntent
from toolwire.stream.decoder import StreamDecoder
from toolwire.testing.cassette import Cassette, CassetteError, Exchange
from toolwire.testing.summary import is_streamed
from toolwire.tools.redaction import hidden_spans
from toolwire.types import ToolCall
from toolwire.view._html import ident, text

__all__ = ["MAX_STEPS", "ArgumentReplay", "Replays", "load_replays", "replay_for", "scrubber"]

MAX_STEPS = 2000
"""The most steps a call's replay shows (more deltas are grouped)."""
_MASK = "•"


@dataclass(frozen=True, slots=True)
class ArgumentReplay:
    """One call's arguments as they streamed."""

    call_id: str
    name: str
    exchange: str
    """The cassette file the stream was read from (its sidecar's path)."""
    steps: tuple[tuple[float, str], ...]
    """Each step's arrival (milliseconds after the request was sent) and the
    argument text it added, masked."""
    deltas: int
    """How many deltas the stream carried (more than ``len(steps)`` when grouped)."""
    arguments: Any = field(default=None, repr=False, compare=False)
    """The arguments the stream completed (what the journal's intent must hold)."""


Replays = Mapping[str, Sequence[ArgumentReplay]]
"""Replays by call id (several cassettes or runs may share an id)."""


def _masked(deltas: list[str]) -> list[str]:
    """``deltas`` with every character that redaction hides in their whole
    text masked, lengths kept (in time linear in the text)."""
    whole = "".join(deltas)
    spans = hidden_spans(whole)
    if not spans:
        return deltas
    pieces: list[str] = []
    at = 0
    for start, end in spans:
        pieces += (whole[at:start], _MASK * (end - start))
        at = end
    pieces.append(whole[at:])
    masked = "".join(pieces)
    out, at = [], 0
    for delta in deltas:
        out.append(masked[at : at + len(delta)])
        at += len(delta)
    return out


def _grouped(steps: list[tuple[float, str]]) -> tuple[tuple[float, str], ...]:
    if len(steps) <= MAX_STEPS:
        return tuple(steps)
    size = -(-len(steps) // MAX_STEPS)
    return tuple(
        (steps[min(i + size, len(steps)) - 1][0], "".join(d for _, d in steps[i : i + size]))
        for i in range(0, len(steps), size)
    )


def _exchange_replays(exchange: Exchange) -> list[ArgumentReplay]:
    """The complete calls of one streamed exchange, with their deltas."""
    decoder = StreamDecoder(exchange.dialect or "auto")
    growing: dict[tuple[int, int], list[tuple[float, str]]] = {}
    ready: list[tuple[tuple[int, int], ToolCall]] = []
    chunks = [*exchange.response.iter_chunks(), (b"", exchange.duration_ms)]
    for chunk, ms in chunks:
        events = decoder.feed(chunk) if chunk else decoder.close()
        for event in events:
            if isinstance(event, ToolCallDelta) and event.delta:
                growing.setdefault((event.choice, event.index), []).append((ms, event.delta))
            elif isinstance(event, ToolCallReady):
                ready.append(((event.choice, event.index), event.call))
    found = []
    for key, call in ready:
        steps = growing.get(key, [])
        if not steps or not call.id:
            continue
        masked = _masked([d for _, d in steps])
        found.append(
            ArgumentReplay(
                call_id=call.id,
                name=call.name,
                exchange=str(exchange.sidecar),
                steps=_grouped([(ms, d) for (ms, _), d in zip(steps, masked, strict=True)]),
                deltas=len(steps),
                arguments=call.arguments,
            )
        )
    return found


def _decode(directory: Path) -> list[ArgumentReplay]:
    return [
        replay
        for exchange in Cassette.load(directory)
        if is_streamed(exchange)
        for replay in _exchange_replays(exchange)
    ]


_cache: dict[Path, tuple[tuple[tuple[str, int, int], ...], list[ArgumentReplay]]] = {}
_lock = threading.Lock()


def _signature(directory: Path) -> tuple[tuple[str, int, int], ...]:
    """The directory's files, sizes and change times: what a cached reading is of."""
    try:
        with os.scandir(directory) as entries:
            return tuple(sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in entries))
    except OSError:
        return ()


def load_replays(directories: Iterable[Path]) -> tuple[Replays, list[str]]:
    """The replays of every call the cassettes ``directories`` streamed, by
    call id; and what could not be read (one line per cassette)."""
    replays: dict[str, list[ArgumentReplay]] = {}
    problems: list[str] = []
    for directory in directories:
        signature = _signature(directory)
        with _lock:
            cached = _cache.get(directory)
        if cached is None or cached[0] != signature:
            try:
                cached = (signature, _decode(directory))
            except CassetteError as exc:
                problems.append(exc.message)
                continue
            with _lock:
                _cache[directory] = cached
        for replay in cached[1]:
            replays.setdefault(replay.call_id, []).append(replay)
    return replays, problems


def replay_for(event: JournalEvent, replays: Replays) -> ArgumentReplay | None:
    """The replay of the call a ``tool_intent`` records: the same id, tool
    and arguments (an id alone may be reused by another run or provider);
    for arguments too long for the journal to keep, the same id and tool."""
    record = event.record
    if not isinstance(record, ToolIntent) or not event.call_id:
        return None
    for replay in replays.get(event.call_id, ()):
        if replay.name != record.name:
            continue
        if record.arguments is not None and record.arguments == replay.arguments:
            return replay
        if record.arguments is None and record.arguments_preview is not None:
            return replay
    return None


def scrubber(replay: ArgumentReplay) -> str:
    """The replay as a slider over its steps: the page's script shows the
    text so far and the step's delta; without script, the final text."""
    steps = json.dumps([[round(ms, 1), delta] for ms, delta in replay.steps], ensure_ascii=False)
    whole = "".join(delta for _, delta in replay.steps)
    last = len(replay.steps) - 1
    grouped = (
        f" (grouped into {len(replay.steps)} steps)" if replay.deltas > len(replay.steps) else ""
    )
    took = replay.steps[-1][0] - replay.steps[0][0]
    return (
        f'<div class=scrubber data-call="{ident(replay.call_id)}" data-steps="{ident(steps)}">'
        f"<div class=meta>arguments as they streamed: {replay.deltas} deltas{grouped} over "
        f"{took:.0f} ms, from <code>{text(Path(replay.exchange).name)}</code></div>"
        f'<div class=controls><button type=button class=back aria-label="previous delta">◀'
        f'</button><input type=range min=0 max="{last}" value="{last}" '
        f'aria-label="delta"><button type=button class=next aria-label="next delta">▶</button>'
        f"<button type=button class=play>play</button> <span class=pos>{last + 1} / "
        f"{last + 1}</span></div>"
        f"<pre class=grown><span class=before>{ident(whole)}</span><mark></mark></pre></div>"
    )
