"""The list's chart: tokens (and cost, when recorded) of the runs shown,
over the time they started, as an SVG drawn on the server."""

from __future__ import annotations

from typing import Any

from toolwire.journal import RunSummary
from toolwire.view._html import ident, money, text

__all__ = ["usage_chart"]

_WIDTH, _HEIGHT, _PAD = 1000, 120, 4


def _tokens(summary: RunSummary) -> int | None:
    usage = summary.usage or {}
    counts = [usage.get(k) for k in ("input_tokens", "output_tokens")]
    known = [c for c in counts if isinstance(c, int) and not isinstance(c, bool)]
    return sum(known) if known else None


def _cost(summary: RunSummary) -> float | None:
    cost: Any = getattr(summary, "cost", None)
    if not isinstance(cost, dict):
        return None
    try:
        return float(cost["total"])
    except (KeyError, TypeError, ValueError):
        return None


def _points(values: list[tuple[float, float]], first: float, span: float, top: float) -> str:
    return " ".join(
        f"{_PAD + (at - first) / span * (_WIDTH - 2 * _PAD):.1f},"
        f"{_HEIGHT - _PAD - value / top * (_HEIGHT - 2 * _PAD):.1f}"
        for at, value in values
    )


def usage_chart(runs: list[RunSummary]) -> str:
    """Tokens per run (a bar each) and cost (a line) over start time; empty
    when no run shown has usage."""
    tokens = [(s.started_at, n, s) for s in runs if (n := _tokens(s)) is not None]
    if not tokens:
        return ""
    first = min(at for at, _, _ in tokens)
    span = max(max(at for at, _, _ in tokens) - first, 1e-6)
    top = max(max(n for _, n, _ in tokens), 1)
    bars = []
    for at, count, summary in tokens:
        x = _PAD + (at - first) / span * (_WIDTH - 2 * _PAD)
        height = max(count / top * (_HEIGHT - 2 * _PAD), 1.0)
        bars.append(
            f'<rect x="{x - 2:.1f}" y="{_HEIGHT - _PAD - height:.1f}" width="4" '
            f'height="{height:.1f}" fill="#5b7bd5"><title>{ident(summary.run_id[:12])}: '
            f"{count} tokens</title></rect>"
        )
    costs = [(s.started_at, c) for s in runs if (c := _cost(s)) is not None]
    line = ""
    if len(costs) > 1:
        peak = max(max(c for _, c in costs), 1e-9)
        line = (
            f'<polyline fill="none" stroke="#c98a1a" stroke-width="1.5" '
            f'points="{_points(sorted(costs), first, span, peak)}"/>'
        )
    cost_note = (
        f" · cost (line) up to {money({'total': max(c for _, c in costs)})}" if costs else ""
    )
    return (
        f"<details open class=chart><summary>tokens per run (bars) up to {text(top)}"
        f"{cost_note}, over start time</summary>"
        f'<svg viewBox="0 0 {_WIDTH} {_HEIGHT}" width="100%" role="img" '
        f'aria-label="tokens and cost over time">{"".join(bars)}{line}</svg></details>'
    )
