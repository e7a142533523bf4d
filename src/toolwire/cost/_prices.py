"""What a model request costs: prices from pydantic's ``genai-prices`` data, or your own.

Theory of operation: toolwire's :class:`~toolwire.types.Usage` counts every
input token in ``input_tokens`` (cache reads in ``cached_tokens`` and cache
writes in ``cache_write_tokens`` are parts of it, whatever the provider's own
convention), and reasoning tokens as a part of ``output_tokens``. That is
exactly the shape ``genai-prices`` prices: its ``input_tokens`` is the total
too, and it bills each part at its own rate (fresh input, cache reads, cache
writes, the 1 h tier's writes at their own rate where the usage counts them,
output, reasoning where the data has a rate for it) with the tiers of
the data (a tier reached by the request's input applies to all its tokens).
Passing Anthropic's own ``input_tokens`` (fresh tokens only) there would
bill cached tokens twice or not at all; passing a cumulative stream figure
more than once would count input twice: toolwire passes one request's final
normalized usage, once.

A cost is known or it is not: a model the data does not have, a usage
without input or output counts, or counts that contradict each other
(more cached tokens than input tokens) give ``None``, never a guess. Your own
:class:`Rates` take precedence over the data, per model.

``genai-prices`` is an optional dependency (``pip install 'toolwire[cost]'``,
Python 3.11+); without it, only the rates you give are known.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone

from toolwire.cost._rates import (
    Calculator,
    Cost,
    Parts,
    Rates,
    _parts,
    cost_from_dict,
)
from toolwire.errors import UsageError
from toolwire.types import Usage

__all__ = ["Cost", "Prices", "Rates", "cost_from_dict", "default_prices"]


class Prices:
    """Prices models' requests: your own :class:`Rates` first, then
    ``genai-prices``' data (when it is installed and ``data`` is true).

    Args:
        rates: your prices by model id (as the agent names the model);
            they take precedence over the data.
        data: look models up in ``genai-prices``' data too.
        at: price every request as of this moment (the data holds dated
            price changes); ``None`` prices each request as of when it is
            made. Give one for reproducible figures (reports, tests).

    Example::

        prices = Prices({"my-finetune": Rates(input=3, output=15, cached_input=0.3)})
        prices.cost("my-finetune", usage)  # Cost(total=Decimal(...), ...)
    """

    def __init__(
        self,
        rates: Mapping[str, Rates] | None = None,
        *,
        data: bool = True,
        at: datetime | None = None,
    ) -> None:
        self.rates = dict(rates or {})
        for model, given in dict[str, object](self.rates).items():
            if not isinstance(given, Rates):
                kind = type(given).__name__
                raise UsageError(f"the prices of {model!r} must be Rates, not {kind}")
        if at is not None and at.tzinfo is None:
            raise UsageError("Prices(at=...) must be an aware datetime (with a time zone)")
        self.at = at
        self.data = data
        self._loaded: list[Calculator | None] = []

    def __repr__(self) -> str:
        source = "genai-prices" if self.data else "no data"
        return f"Prices(rates={sorted(self.rates)!r}, {source}, at={self.at!r})"

    @property
    def has_data(self) -> bool:
        """Whether ``genai-prices``' data is consulted (installed and asked for)."""
        return self._calc() is not None

    def _calc(self) -> Calculator | None:
        """The data's pricing function, loaded on first use (the data takes
        about a second to import): ``None`` without ``genai-prices``."""
        if not self._loaded:
            from toolwire.cost._genai import genai_calculator

            self._loaded.append(genai_calculator() if self.data else None)
        return self._loaded[0]

    def knows(
        self, model: str, *, provider: str | None = None, base_url: str | None = None
    ) -> bool:
        """Whether requests to ``model`` have a price: your :class:`Rates`
        for it, or the data's (arguments as for :meth:`cost`)."""
        if model in self.rates:
            return True
        calc = self._calc()
        if calc is None:
            return False
        when = self.at or datetime.now(timezone.utc)
        return calc(model, _PROBE, provider, base_url, when, 0) is not None

    def cost(
        self,
        model: str,
        usage: Usage | None,
        *,
        provider: str | None = None,
        base_url: str | None = None,
        at: datetime | None = None,
    ) -> Cost | None:
        """What one request to ``model`` with ``usage`` cost; ``None`` when
        unknown (no usage, a model without prices, inconsistent counts).

        Args:
            model: the model id the request named.
            usage: the request's final usage (not a sum over requests: tiers
                depend on one request's input).
            provider: toolwire's provider name (``openai``, ``anthropic``,
                ``gemini``...), used when ``base_url`` names no provider the
                data knows (a gateway or a local server).
            base_url: the provider's base URL (``api.groq.com`` is Groq even
                through the OpenAI-compatible provider).
            at: when the request was made (``Prices(at=...)`` wins).
        """
        if usage is None:
            return None
        own = self.rates.get(model)
        if own is not None:
            return own.cost(usage)
        calc = self._calc()
        if calc is None:
            return None
        parts = _parts(usage)
        if parts is None:
            return None
        when = self.at or at or datetime.now(timezone.utc)
        return calc(model, parts, provider, base_url, when, usage.cache_write_1h_tokens or 0)


_PROBE: Parts = (1000, 0, 0, 1000, 0)
"""The usage :meth:`Prices.knows` prices: a model the data has prices it."""

_DEFAULT: list[Prices] = []


def default_prices() -> Prices:
    """The process's shared :class:`Prices` over ``genai-prices``' data alone."""
    if not _DEFAULT:
        _DEFAULT.append(Prices())
    return _DEFAULT[0]
