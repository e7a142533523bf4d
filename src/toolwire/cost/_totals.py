"""What a whole run has used, over every process that ran it.

A run may stop and continue in another process (after an approval, a crash,
a lost worker): its usage limits count the whole run, not the part one
process saw. :class:`RunTotals` is that whole, as the run's
:class:`~toolwire.cost.RunMeter` keeps it: the journal records it with each
turn, and a resumed run's meter starts from the last one recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from toolwire.cost._rates import Cost
from toolwire.types import Usage

__all__ = ["RunTotals"]

_ZERO = Cost(total=Decimal(0))


@dataclass(frozen=True, slots=True, kw_only=True)
class RunTotals:
    """A run's totals so far: what its usage limits count."""

    usage: Usage = field(default_factory=Usage)
    """Token usage of every model request (a broken or cut stream's too:
    what it revealed)."""
    cost: Cost | None = _ZERO
    """What the requests cost; ``None`` once the cost of one is unknown."""
    known_cost: Decimal = Decimal(0)
    """The sum of the costs that are known: what a cost limit counts (the
    same as ``cost.total`` while every cost is known)."""
    model_requests: int = 0
    """Model requests sent (retries included)."""
    tool_calls: int = 0
    """Tool calls counted against the tool-call limit."""
    wall_time: float = 0.0
    """Seconds the run has run, in every process (the time it waited,
    suspended or with no process, between them does not count)."""
