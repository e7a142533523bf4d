"""A run's waterfall: where its time went, model answers and tool calls as
bars on one time axis (an SVG drawn on the server: no script, no inline
style, which the pages' content security policy forbids).

A bar ends when its record was written (a response, a failure, a tool's
outcome) and starts ``elapsed`` seconds before, the duration the record
holds; without one, it starts at its request or intent record.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolwire.journal import (
    JournalEvent,
    ModelFailed,
    ModelRequest,
    ModelResponse,
    RunLog,
    ToolIntent,
    ToolOutcome,
)
from toolwire.view._html import duration, text

__all__ = ["MOST_BARS", "waterfall"]

MOST_BARS = 400
"""The most bars drawn (a longer run says how many were left out)."""
_WIDTH, _LABELS, _ROW = 1000, 220, 18
_COLOURS = {"model": "#5b7bd5", "failed": "#c5473f", "tool": "#3f9a62", "tool-failed": "#c5473f"}


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    kind: str
    start: float
    end: float


def _elapsed(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _bar(label: str, kind: str, end: float, elapsed: object, began: float | None) -> Bar:
    took = _elapsed(elapsed)
    start = end - took if took is not None else (began if began is not None else end)
    return Bar(label, kind, min(start, end), end)


def bars(events: tuple[JournalEvent, ...]) -> list[Bar]:
    """The model answers and tool calls of a run, in the order they ended."""
    requests: dict[tuple[int | None, int | None], float] = {}
    intents: dict[tuple[int | None, str | None], float] = {}
    found: list[Bar] = []
    for event in events:
        record, key = event.record, (event.turn, event.attempt)
        if isinstance(record, ModelRequest):
            requests[key] = event.at
        elif isinstance(record, (ModelResponse, ModelFailed)):
            kind = "model" if isinstance(record, ModelResponse) else "failed"
            label = f"turn {event.turn} model" + (
                f" (attempt {event.attempt})" if event.attempt and event.attempt > 1 else ""
            )
            found.append(_bar(label, kind, event.at, record.elapsed, requests.pop(key, None)))
        elif isinstance(record, ToolIntent):
            intents[(event.turn, event.call_id)] = event.at
        elif isinstance(record, ToolOutcome):
            result = record.result or {}
            kind = "tool" if result.get("ok") else "tool-failed"
            began = intents.pop((event.turn, event.call_id), None)
            label = f"turn {event.turn} {result.get('name', 'tool')}"
            found.append(_bar(label, kind, event.at, result.get("elapsed"), began))
    return found


def waterfall(log: RunLog) -> str:
    """The run's waterfall as an SVG in a fold (empty for a run with no step)."""
    drawn = bars(log.events)
    if not drawn:
        return ""
    left_out = len(drawn) - MOST_BARS
    drawn = drawn[:MOST_BARS]
    origin = min(log.events[0].at, *(b.start for b in drawn))
    span = max(max(b.end for b in drawn) - origin, 1e-6)
    scale = (_WIDTH - _LABELS - 10) / span
    rows = []
    for row, bar in enumerate(drawn):
        y = row * _ROW
        x = _LABELS + (bar.start - origin) * scale
        width = max((bar.end - bar.start) * scale, 1.0)
        took = duration(bar.end - bar.start)
        rows.append(
            f'<text x="0" y="{y + 13}" font-size="12">{text(bar.label)}</text>'
            f'<rect x="{x:.1f}" y="{y + 3}" width="{width:.1f}" height="{_ROW - 6}" '
            f'fill="{_COLOURS[bar.kind]}" data-kind="{bar.kind}">'
            f"<title>{text(bar.label)}: {took}</title></rect>"
        )
    height = len(drawn) * _ROW + 4
    more = f"<p class=meta>{left_out} more not drawn</p>" if left_out > 0 else ""
    return (
        f"<details open class=waterfall><summary>waterfall: {duration(span)}</summary>"
        f'<svg class=waterfall viewBox="0 0 {_WIDTH} {height}" width="100%" '
        f'role="img" aria-label="model and tool time">{"".join(rows)}</svg>{more}</details>'
    )
