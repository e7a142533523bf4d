"""A run's totals in its journal: written with each turn, read by a resume.

The records that change what a run has used (a model request, its answer or
failure, a batch of tool intents, the run's end) carry the run's
:class:`~toolwire.cost.RunTotals` as they stand after that step, under
``"totals"``: :func:`totals_record` writes that entry and
:func:`totals_from_record` reads it (the one place that knows its shape).
A resumed run goes on from the last one (:func:`run_totals`). A journal
written before the records carried totals has its totals derived from its
usage records instead (:func:`derived_totals`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from toolwire.cost import Cost, RunTotals, cost_from_dict
from toolwire.journal._kinds import (
    TOTALED,
    ModelFailed,
    ModelRequest,
    ModelResponse,
    ModelSampled,
    RunFailed,
    RunFinished,
    RunResumed,
    RunStarted,
    RunSuspended,
)
from toolwire.journal._records import JournalError, JournalEvent
from toolwire.types import Usage

__all__ = ["derived_totals", "run_totals", "totals_from_record", "totals_record"]

TOTALS_VERSION = 1
"""1: usage, cost, known_cost, model_requests, tool_calls, wall_time."""

_USAGE_FIELDS = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cached_tokens",
    "cache_write_tokens",
)
_ENDS = (RunFinished, RunFailed, RunSuspended)


def totals_record(totals: RunTotals) -> dict[str, Any]:
    """The ``"totals"`` entry of a record (JSON-ready)."""
    cost = totals.cost
    return {
        "version": TOTALS_VERSION,
        "usage": totals.usage.to_dict(),
        "cost": cost.to_dict() if cost is not None else None,
        "known_cost": str(totals.known_cost),
        "model_requests": totals.model_requests,
        "tool_calls": totals.tool_calls,
        "wall_time": totals.wall_time,
    }


def totals_from_record(data: Any) -> RunTotals:
    """The totals a record's ``"totals"`` entry holds.

    Raises:
        JournalError: it is not what :func:`totals_record` writes.
    """
    if not isinstance(data, dict) or data.get("version") != TOTALS_VERSION:
        raise JournalError(f"a record's totals are not toolwire's: {str(data)[:200]}")
    usage = data.get("usage")
    cost = data.get("cost")
    wall_time = data.get("wall_time")
    if not isinstance(usage, dict) or not isinstance(wall_time, (int, float)):
        raise JournalError("a record's totals have no usage or wall time")
    if isinstance(wall_time, bool) or not math.isfinite(wall_time) or wall_time < 0:
        raise JournalError(f"a record's totals have a wall time of {wall_time!r}")
    known = cost_from_dict(cost)
    if cost is not None and known is None:
        raise JournalError(f"a record's totals have a cost of {str(cost)[:200]}")
    return RunTotals(
        usage=Usage(**{name: _count(usage.get(name), name, none=True) for name in _USAGE_FIELDS}),
        cost=known,
        known_cost=_dollars(data.get("known_cost")),
        model_requests=_count(data.get("model_requests"), "model_requests"),
        tool_calls=_count(data.get("tool_calls"), "tool_calls"),
        wall_time=float(wall_time),
    )


def _count(value: Any, name: str, *, none: bool = False) -> Any:
    if value is None and none:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise JournalError(f"a record's totals have {name} {value!r}")
    return value


def _dollars(value: Any) -> Decimal:
    try:
        amount = Decimal(value) if isinstance(value, str) else None
    except ArithmeticError:
        amount = None
    if amount is None or not amount.is_finite() or amount < 0:
        raise JournalError(f"a record's totals have a known cost of {value!r}")
    return amount


def run_totals(events: Sequence[JournalEvent]) -> RunTotals:
    """What the run of ``events`` has used: the last totals recorded, or,
    in a journal written before records carried them, its usage records'
    sum (:func:`derived_totals`).

    Raises:
        JournalError: recorded totals are not toolwire's.
    """
    for event in reversed(events):
        record = event.record
        if isinstance(record, TOTALED) and record.totals is not None:
            return totals_from_record(record.totals)
    return derived_totals(events)


def derived_totals(events: Sequence[JournalEvent]) -> RunTotals:
    """The totals of a run whose records carry none: each request counted,
    the usage and cost of each answer and of each failure that recorded
    them summed, the calls of each answer counted, and the time from each
    start (or resumption) to the last record before the next summed. A
    completion a tool asked of the run's model counts as a request too."""
    usage, cost, known = Usage(), Cost(total=Decimal(0)), Decimal(0)
    unknown = requests = calls = 0
    wall_time = 0.0
    began: float | None = None
    last = 0.0
    for event in events:
        record = event.record
        if isinstance(record, (RunStarted, RunResumed)):
            if began is not None:  # the process before died: until its last record
                wall_time += max(0.0, last - began)
            began = event.at
        elif began is not None and isinstance(record, _ENDS):
            wall_time += max(0.0, event.at - began)
            began = None
        last = event.at
        if isinstance(record, (ModelRequest, ModelSampled)):
            requests += 1
        if (
            isinstance(record, ModelResponse)
            or (isinstance(record, ModelFailed) and record.priced)
            or (isinstance(record, ModelSampled) and record.usage is not None)
        ):
            used = _usage(record.usage)
            if used is not None:
                usage = usage + used
            priced = cost_from_dict(record.cost)
            if priced is None:
                unknown += 1
            else:
                cost, known = cost + priced, known + priced.total
            if isinstance(record, ModelResponse):
                calls += record.call_count
    if began is not None:
        wall_time += max(0.0, last - began)
    return RunTotals(
        usage=usage,
        cost=None if unknown else cost,
        known_cost=known,
        model_requests=requests,
        tool_calls=calls,
        wall_time=wall_time,
    )


def _usage(data: Any) -> Usage | None:
    """A recorded usage, leniently: a count that is not one is left out."""
    if not isinstance(data, dict):
        return None
    counts: dict[str, Any] = {
        name: value
        for name in _USAGE_FIELDS
        if isinstance(value := data.get(name), int) and not isinstance(value, bool) and value >= 0
    }
    return Usage(**counts)
