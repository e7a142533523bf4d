"""Costs and rates: what a request cost, and the dollars per million tokens
that price it (the value types :mod:`toolwire.cost._prices` and the
``genai-prices`` calculator share)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, cast

from toolwire.errors import UsageError
from toolwire.types import Usage

__all__ = ["Calculator", "Cost", "Parts", "Rates", "cost_from_dict", "format_usd"]

_MILLION = Decimal(1_000_000)
_ZERO = Decimal(0)

Parts = tuple[int, int, int, int, int]
"""A request's usage as priced: (all input, cache reads, cache writes, all
output, reasoning)."""

Calculator = Callable[[str, Parts, "str | None", "str | None", datetime, int], "Cost | None"]
"""``(model, parts, provider, base_url, at, written_1h) -> Cost | None``:
prices from a data set (``written_1h``: how many of the cache writes were
at the 1 h tier)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Cost:
    """What model requests cost, in US dollars.

    ``input`` is what the input tokens cost (fresh, cache reads and cache
    writes, each at its rate), ``output`` what the output tokens cost
    (reasoning included); ``total`` is their sum plus any per-request fee.
    """

    total: Decimal
    input: Decimal = _ZERO
    output: Decimal = _ZERO

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            total=self.total + other.total,
            input=self.input + other.input,
            output=self.output + other.output,
        )

    def __str__(self) -> str:
        return format_usd(self.total)

    def to_dict(self) -> dict[str, float]:
        """JSON-ready dollars (the journal's shape)."""
        return {
            "total": float(self.total),
            "input": float(self.input),
            "output": float(self.output),
        }


def cost_from_dict(data: Any) -> Cost | None:
    """A :class:`Cost` from its :meth:`Cost.to_dict`; ``None`` for anything else
    (an unknown cost, or a record that is not one)."""
    if not isinstance(data, dict):
        return None
    values: dict[str, Decimal] = {}
    for name in ("total", "input", "output"):
        value = data.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if not math.isfinite(value) or value < 0:
            return None
        values[name] = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    return Cost(**values)


def format_usd(amount: Decimal | float | None) -> str:
    """``$0.0123``: four significant digits under a dollar, cents above; ``-``
    for an unknown amount."""
    if amount is None:
        return "-"
    value = float(amount)
    if value == 0:
        return "$0"
    if value >= 1:
        return f"${value:,.2f}"
    decimals = 3 - math.floor(math.log10(value))
    return "$" + f"{value:.{decimals}f}".rstrip("0").rstrip(".")


def _decimal(value: Decimal | float | int | str, what: str) -> Decimal:
    try:
        number = value if isinstance(value, Decimal) else Decimal(str(value))
    except ArithmeticError:
        raise UsageError(f"{what} is not a number: {value!r}") from None
    if not number.is_finite() or number < 0:
        raise UsageError(f"{what} must be a finite number >= 0, not {value!r}")
    return number


@dataclass(frozen=True, slots=True, kw_only=True)
class Rates:
    """Your own prices for a model, in US dollars per million tokens.

    Args:
        input: fresh (uncached) input tokens.
        output: output tokens.
        cached_input: input tokens read from the prompt cache (default: ``input``).
        cache_write: input tokens written to the prompt cache (default: ``input``);
            at the 5-minute tier where the provider has two (Anthropic: 1.25x input).
        cache_write_1h: input tokens written at the 1-hour cache tier
            (``Usage.cache_write_1h_tokens``; Anthropic: 2x input; default:
            ``cache_write``).
        reasoning: reasoning tokens, a part of the output (default: ``output``).
        per_request: dollars per request, whatever its tokens.
        tiers: ``(threshold, Rates)`` pairs: when a request's input tokens
            exceed ``threshold``, that tier's rates apply to *all* its tokens
            (the highest tier reached wins), as providers bill long contexts.

    Raises:
        UsageError: a rate is negative or not a number.
    """

    input: Decimal | float | int | str
    output: Decimal | float | int | str
    cached_input: Decimal | float | int | str | None = None
    cache_write: Decimal | float | int | str | None = None
    cache_write_1h: Decimal | float | int | str | None = None
    reasoning: Decimal | float | int | str | None = None
    per_request: Decimal | float | int | str = 0
    tiers: tuple[tuple[int, Rates], ...] = field(default=())

    def __post_init__(self) -> None:
        for name in (
            "input",
            "output",
            "cached_input",
            "cache_write",
            "cache_write_1h",
            "reasoning",
            "per_request",
        ):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _decimal(value, f"Rates.{name}"))
        for threshold, _ in self.tiers:
            if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 0:
                raise UsageError(f"a tier's threshold must be a token count, not {threshold!r}")
        object.__setattr__(self, "tiers", tuple(sorted(self.tiers, key=lambda tier: tier[0])))

    def cost(self, usage: Usage) -> Cost | None:
        """What ``usage`` costs at these rates (``None`` when it cannot be known)."""
        parts = _parts(usage)
        if parts is None:
            return None
        return self.price(parts, usage.cache_write_1h_tokens or 0)

    def _tier(self, total_input: int) -> Rates:
        rates = self
        for threshold, tier in self.tiers:
            if total_input > threshold:
                rates = tier
        return rates

    def price(self, parts: Parts, written_1h: int = 0) -> Cost:
        """What a request's :data:`Parts` cost at these rates (the tier its input
        reaches): ``written_1h`` of its cache writes at the ``cache_write_1h``
        rate (where there is one), the others at the ``cache_write`` rate."""
        total_input, cache_read, cache_write, output, reasoning = parts
        rates = self._tier(total_input)
        cost = rates._priced(total_input, cache_read, cache_write, output, reasoning)
        written_1h = min(max(written_1h, 0), cache_write)
        if not written_1h or rates.cache_write_1h is None:
            return cost
        # The 1 h writes were priced at the 5 min rate: add the difference.
        base = cast(Decimal, rates.input if rates.cache_write is None else rates.cache_write)
        extra = written_1h * (cast(Decimal, rates.cache_write_1h) - base) / _MILLION
        return Cost(total=cost.total + extra, input=cost.input + extra, output=cost.output)

    def _priced(
        self, total_input: int, cache_read: int, cache_write: int, output: int, reasoning: int
    ) -> Cost:
        # Every rate is a Decimal once constructed (``__post_init__``).
        fresh_rate, output_rate = cast(Decimal, self.input), cast(Decimal, self.output)
        cached, written, reasoned = self.cached_input, self.cache_write, self.reasoning
        fresh = total_input - cache_read - cache_write
        input_cost = (
            fresh * fresh_rate
            + cache_read * cast(Decimal, fresh_rate if cached is None else cached)
            + cache_write * cast(Decimal, fresh_rate if written is None else written)
        ) / _MILLION
        output_cost = (
            (output - reasoning) * output_rate
            + reasoning * cast(Decimal, output_rate if reasoned is None else reasoned)
        ) / _MILLION
        fee = cast(Decimal, self.per_request)
        return Cost(total=input_cost + output_cost + fee, input=input_cost, output=output_cost)


def _parts(usage: Usage) -> Parts | None:
    """(all input, cache reads, cache writes, all output, reasoning), or
    ``None`` when the usage cannot be priced: input or output unknown, or
    parts larger than their whole."""
    if usage.input_tokens is None or usage.output_tokens is None:
        return None
    total_input, output = usage.input_tokens, usage.output_tokens
    cache_read = usage.cached_tokens or 0
    cache_write = usage.cache_write_tokens or 0
    reasoning = usage.reasoning_tokens or 0
    if min(total_input, output, cache_read, cache_write, reasoning) < 0:
        return None
    if cache_read + cache_write > total_input or reasoning > output:
        return None
    return total_input, cache_read, cache_write, output, reasoning
