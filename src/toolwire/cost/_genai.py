"""Prices from ``genai-prices``' data, read once per model.

``genai-prices``' ``calc_price`` prices any usage with any of its units, but
costs about half a millisecond a call: more than the rest of an agent turn.
So each model's prices are read once as :class:`~toolwire.cost.Rates` (fresh
input, cache reads, cache writes at each TTL tier, output, reasoning, a
per-request fee, with their tiers) and *checked*: the rates must give
exactly ``calc_price``'s figure at probe usages that vary each count on
its own, in every tier. Both are linear in the counts within a tier, so
agreeing there is agreeing everywhere. Prices that change with the moment
(dated changes, time-of-day discounts) are read for each set in force when
a request is made; a model the check rejects is priced by ``calc_price``
every time.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any

from toolwire.cost._rates import Calculator, Cost, Parts, Rates
from toolwire.stream.codecs import registered

__all__ = ["Calculator", "genai_calculator", "provider_id"]

_OTHER_IDS = {"vertex": "google", "xai": "x-ai"}
"""Provider names of no dialect's provider that genai-prices calls otherwise."""


def provider_id(provider: str) -> str:
    """genai-prices' id of the provider toolwire calls ``provider``: its
    dialect's :attr:`~toolwire.stream.codecs.ProviderInfo.price_provider`
    where ``provider`` is one of a registered dialect's provider's names
    (``gemini`` is ``google``, ``bedrock`` is ``aws``), else the name itself."""
    for dialect in registered():
        if dialect.provider is not None and provider in dialect.provider.names:
            return dialect.provider.price_provider
    return _OTHER_IDS.get(provider, provider)


_RATE_KEYS = {
    "input_mtok": "input",
    "output_mtok": "output",
    "cache_read_mtok": "cached_input",
    "cache_write_mtok": "cache_write",
    "cache_write_1h_mtok": "cache_write_1h",
    "output_reasoning_mtok": "reasoning",
}
_MISSING = object()


def genai_calculator() -> Calculator | None:
    """The pricing function over ``genai-prices``' data, or ``None`` when the
    package is not installed."""
    try:
        import genai_prices
        from genai_prices.data_snapshot import get_snapshot
    except ImportError:
        return None

    found: dict[tuple[str, str | None, str | None], Any] = {}
    fast: dict[tuple[str, str, int], tuple[Any, Rates | None]] = {}

    def usage_of(parts: Parts, written_1h: int = 0) -> Any:
        total_input, cache_read, cache_write, output, reasoning = parts
        return genai_prices.Usage(
            input_tokens=total_input,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
            # A part of the cache writes, as toolwire's Usage counts it.
            cache_write_1h_tokens=min(max(written_1h, 0), cache_write) or None,
            output_tokens=output,
            output_reasoning_tokens=reasoning,
        )

    def lookup(model: str, provider: str | None, base_url: str | None) -> Any:
        key = (model, provider, base_url)
        hit = found.get(key, _MISSING)
        if hit is _MISSING:
            snapshot = get_snapshot()
            hit = None
            if base_url:
                hit = _find(snapshot, model, provider_api_url=base_url)
            if hit is None and provider:
                hit = _find(snapshot, model, provider_id=provider_id(provider))
            found[key] = hit
        return hit

    def calc(
        model: str,
        parts: Parts,
        provider: str | None,
        base_url: str | None,
        at: datetime,
        written_1h: int = 0,
    ) -> Cost | None:
        hit = lookup(model, provider, base_url)
        if hit is None:
            return None
        source, info = hit
        # The prices in force at ``at`` (dated changes, time-of-day discounts):
        # the same object for every moment it is in force.
        in_force = info.get_prices(at)
        key = (source.id, info.id, id(in_force))
        entry = fast.get(key)
        if entry is None:
            entry = fast[key] = (in_force, _checked_rates(info, source, usage_of, at))
        rates = entry[1]
        if rates is not None:
            return rates.price(parts, written_1h)
        try:
            usage = usage_of(parts, written_1h)
            price = info.calc_price(usage, source, genai_request_timestamp=at)
        except ValueError:  # counts it refuses
            return None
        return Cost(total=price.total_price, input=price.input_price, output=price.output_price)

    return calc


def _find(snapshot: Any, model: str, **where: str) -> Any:
    """``(provider, model)`` of the data, or ``None`` when it has neither."""
    provider_id = where.get("provider_id")
    api_url = where.get("provider_api_url")
    try:
        return snapshot.find_provider_model(model, None, provider_id, api_url)
    except LookupError:
        return None


def _checked_rates(
    info: Any, provider: Any, usage_of: Callable[[Parts, int], Any], at: datetime
) -> Rates | None:
    """The model's prices as :class:`Rates`, when they are fixed and give
    ``calc_price``'s figures at every probe; ``None`` otherwise."""
    rates = _as_rates(info.get_prices(at))
    if rates is None:
        return None
    # Just above each tier's threshold (and above 0), each count bumped on its
    # own, the 1 h cache writes (a part of the writes) last.
    for start in (0, *(threshold for threshold, _ in rates.tiers)):
        base = (start + 41, 19, 7, 21, 9, 0)
        for bump in range(7):
            probe = list(base)
            if bump < 6:
                probe[bump] += 3
            parts: Parts = (probe[0], probe[1], probe[2], probe[3], probe[4])
            usage = usage_of(parts, probe[5])
            try:
                expected = info.calc_price(usage, provider, genai_request_timestamp=at)
            except ValueError:
                return None
            mine = rates.price(parts, probe[5])
            if (mine.total, mine.input, mine.output) != (
                expected.total_price,
                expected.input_price,
                expected.output_price,
            ):
                return None
    return rates


def _as_rates(prices: Any) -> Rates | None:
    """A ``ModelPrice`` as :class:`Rates` (``None`` without input and output prices)."""
    flat: dict[str, Decimal] = {}
    tiered: dict[str, Any] = {}
    for key, name in _RATE_KEYS.items():
        value = getattr(prices, key, None)
        if isinstance(value, Decimal):
            flat[name] = value
        elif value is not None:
            tiered[name] = value
    fee = getattr(prices, "requests_kcount", None)
    if fee is not None and not isinstance(fee, Decimal):
        return None
    per_request = fee / 1000 if fee is not None else Decimal(0)
    if not {"input", "output"} <= flat.keys() | tiered.keys():
        return None
    starts = sorted({tier.start for value in tiered.values() for tier in value.tiers})

    def at_tier(start: int | None) -> Rates:
        chosen = dict(flat)
        for name, value in tiered.items():
            price = value.base
            for tier in value.tiers:
                if start is not None and tier.start <= start:
                    price = tier.price
            chosen[name] = price
        return Rates(per_request=per_request, **chosen)  # type: ignore[arg-type]

    base = at_tier(None)
    if not starts:
        return base
    return Rates(
        input=base.input,
        output=base.output,
        cached_input=base.cached_input,
        cache_write=base.cache_write,
        cache_write_1h=base.cache_write_1h,
        reasoning=base.reasoning,
        per_request=per_request,
        tiers=tuple((start, at_tier(start)) for start in starts),
    )
