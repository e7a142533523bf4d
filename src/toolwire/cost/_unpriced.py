"""A cost limit is enforced or refused: never ignored without a word.

A request whose cost is unknown counts as nothing toward a cost limit, so a
limit on a model that has no price would let the run spend without bound.
:func:`check_priced` is asked when a run starts, before any request: a cost
limit (the run's or a budget's) on a model with no price raises
:class:`~toolwire.errors.CostLimitUnpriced`, saying why and how to give a
price, unless the limit says ``unpriced="allow"``; then the run goes on with
one :class:`~toolwire.errors.UnpricedCostWarning`.
"""

from __future__ import annotations

import warnings

from toolwire.cost._limits import Budget, UsageLimits
from toolwire.cost._prices import Prices
from toolwire.errors import CostLimitUnpriced, UnpricedCostWarning

__all__ = ["check_priced"]


def check_priced(
    *,
    model: str,
    prices: Prices | None,
    provider: str | None,
    base_url: str | None,
    limits: UsageLimits | None,
    budget: Budget | None,
) -> None:
    """Refuse a cost limit that cannot be enforced on ``model``.

    Raises:
        CostLimitUnpriced: a cost limit, and no price for the model.
    """
    scopes = [(limits, "run's")] if limits is not None else []
    if budget is not None:
        scopes.append((budget.limits, "budget's"))
    capped = [(found, scope) for found, scope in scopes if found.cost is not None]
    if not capped:
        return
    if prices is not None and prices.knows(model, provider=provider, base_url=base_url):
        return
    why = _why(model, prices, provider)
    for found, scope in capped:
        if found.unpriced != "allow":
            raise CostLimitUnpriced(
                f"the {scope} cost limit of ${found.cost} cannot be enforced: {why}. "
                f"Give the model's price (dollars per million tokens) with "
                f"Agent(prices=Prices({{{model!r}: Rates(input=..., output=...)}})), "
                "or accept a run whose cost is not counted with "
                "UsageLimits(cost=..., unpriced='allow')"
            )
    warnings.warn(
        f"the cost limit is not enforced: {why}; a request of unknown cost counts as nothing",
        UnpricedCostWarning,
        stacklevel=4,
    )


def _why(model: str, prices: Prices | None, provider: str | None) -> str:
    """Why requests to ``model`` have no price."""
    if prices is None:
        return "the agent prices nothing (prices=False)"
    if not prices.data:
        return f"no Rates were given for model {model!r} and the price data is off (data=False)"
    if not prices.has_data:
        return (
            f"no Rates were given for model {model!r} and genai-prices, the price data, "
            "is not installed (pip install 'toolwire[cost]', Python 3.11+)"
        )
    where = f" of provider {provider!r}" if provider else ""
    return f"the price data (genai-prices) has no model {model!r}{where}, and no Rates were given"
