"""What runs cost, and what stops them in time.

:class:`Prices` turns a model request's normalized usage into a
:class:`Cost` (from ``genai-prices``' data, or your own :class:`Rates`).
The agent records each request's usage and cost in the journal, totals them
in :attr:`~toolwire.run.RunResult.cost`, and shows them in ``toolwire runs``.
:class:`UsageLimits` stop a run (and a :class:`Budget` the runs sharing it)
as soon as its streams cross them, counting the whole run over every process
that runs it (:class:`RunTotals`); a cost limit on a model that has no price
is refused when the run starts (:func:`check_priced`).
"""

from __future__ import annotations

from toolwire.cost._limits import Budget, RunMeter, UsageLimits
from toolwire.cost._prices import Prices, default_prices
from toolwire.cost._rates import Cost, Rates, cost_from_dict, format_usd
from toolwire.cost._totals import RunTotals
from toolwire.cost._unpriced import check_priced

__all__ = [
    "Budget",
    "Cost",
    "Prices",
    "Rates",
    "RunMeter",
    "RunTotals",
    "UsageLimits",
    "check_priced",
    "cost_from_dict",
    "default_prices",
    "format_usd",
]
