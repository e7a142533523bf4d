"""Prices: each kind of token at its own rate, tiers, your own rates, unknown
models, and the peers' known miscounts as regression tests.

Figures from ``genai-prices`` are checked against a hand computation from the
same data as of a pinned date, so no test depends on today's date."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from decimal import Decimal

import pytest

from toolwire.cost import Cost, Prices, Rates, cost_from_dict
from toolwire.errors import UsageError
from toolwire.stream.decoder import StreamDecoder
from toolwire.types import Usage

genai_prices = pytest.importorskip("genai_prices")  # the [cost] extra: Python 3.11+

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)
M = Decimal(1_000_000)


def rates_of(provider: str, model: str) -> object:
    """The data's prices of ``model`` as of :data:`AT` (what a hand computation reads)."""
    from genai_prices.data_snapshot import get_snapshot

    _, info = get_snapshot().find_provider_model(model, None, provider, None)
    return info.get_prices(AT)


def per_token(price: object) -> Decimal:
    assert isinstance(price, Decimal), price  # a flat price (tiers are tested apart)
    return price / M


def test_openai_cached_tokens_are_billed_at_the_cache_rate() -> None:
    # pydantic-ai #5360: cached tokens billed at the full input rate.
    p = rates_of("openai", "gpt-4.1-mini")
    usage = Usage(input_tokens=10_000, cached_tokens=8_000, output_tokens=500)
    cost = Prices(at=AT).cost("gpt-4.1-mini", usage, provider="openai")
    expected_input = 2_000 * per_token(p.input_mtok) + 8_000 * per_token(p.cache_read_mtok)
    expected_output = 500 * per_token(p.output_mtok)
    assert cost == Cost(
        total=expected_input + expected_output, input=expected_input, output=expected_output
    )
    full_rate = 10_000 * per_token(p.input_mtok) + expected_output
    assert cost is not None and cost.total < full_rate


ANTHROPIC_CACHED_STREAM = b"".join(
    f"event: {kind}\ndata: {json.dumps(body)}\n\n".encode()
    for kind, body in [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [],
                    "stop_reason": None,
                    "usage": {
                        "input_tokens": 12,
                        "cache_creation_input_tokens": 2_000,
                        "cache_read_input_tokens": 30_000,
                        "output_tokens": 1,
                    },
                },
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "hi"},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            # The final usage repeats the cumulative input figures (as the API
            # does now): they replace the first ones, never add to them.
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {
                    "input_tokens": 12,
                    "cache_creation_input_tokens": 2_000,
                    "cache_read_input_tokens": 30_000,
                    "output_tokens": 300,
                },
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
)


def test_anthropic_streamed_cache_reads_and_writes_are_counted_once() -> None:
    # litellm #11789: Anthropic streaming with caching reported at about 7x;
    # pydantic-ai #2770: input tokens counted twice when streaming.
    decoder = StreamDecoder("anthropic-messages")
    decoder.feed(ANTHROPIC_CACHED_STREAM)
    decoder.close()
    usage = decoder.result().usage
    assert usage is not None
    assert (usage.input_tokens, usage.cached_tokens, usage.cache_write_tokens) == (
        32_012,
        30_000,
        2_000,
    )
    assert usage.output_tokens == 300
    p = rates_of("anthropic", "claude-sonnet-4-5")
    tier = p.input_mtok.base, p.cache_read_mtok.base, p.cache_write_mtok.base, p.output_mtok.base
    fresh, read, write, out = (price / M for price in tier)  # under the 200k tier
    expected = 12 * fresh + 30_000 * read + 2_000 * write + 300 * out
    cost = Prices(at=AT).cost("claude-sonnet-4-5", usage, provider="anthropic")
    assert cost is not None and cost.total == expected
    assert cost.input == 12 * fresh + 30_000 * read + 2_000 * write


def test_tiers_apply_to_all_tokens_once_the_input_crosses_them() -> None:
    p = rates_of("anthropic", "claude-sonnet-4-5")
    (tier,) = p.input_mtok.tiers
    (out_tier,) = p.output_mtok.tiers
    prices = Prices(at=AT)
    below = prices.cost(
        "claude-sonnet-4-5", Usage(input_tokens=tier.start, output_tokens=10), provider="anthropic"
    )
    above = prices.cost(
        "claude-sonnet-4-5",
        Usage(input_tokens=tier.start + 1, output_tokens=10),
        provider="anthropic",
    )
    assert below is not None and above is not None
    assert below.total == (tier.start * p.input_mtok.base + 10 * p.output_mtok.base) / M
    assert above.total == ((tier.start + 1) * tier.price + 10 * out_tier.price) / M


def test_gemini_reasoning_is_billed_as_output() -> None:
    p = rates_of("google", "gemini-2.5-flash")
    usage = Usage(input_tokens=1_000, cached_tokens=400, output_tokens=250, reasoning_tokens=200)
    cost = Prices(at=AT).cost("gemini-2.5-flash", usage, provider="gemini")
    expected = (
        600 * per_token(p.input_mtok)
        + 400 * per_token(p.cache_read_mtok)
        + 250 * per_token(p.output_mtok)
    )
    assert cost is not None and cost.total == expected


def test_the_base_url_names_the_provider_before_the_provider_name() -> None:
    usage = Usage(input_tokens=1_000, output_tokens=100)
    prices = Prices(at=AT)
    groq = prices.cost(
        "llama-3.3-70b-versatile",
        usage,
        provider="openai",
        base_url="https://api.groq.com/openai/v1",
    )
    assert groq is not None
    # A loopback server names no provider: the provider's name decides.
    local = prices.cost("gpt-4.1-mini", usage, provider="openai", base_url="http://127.0.0.1:9")
    direct = prices.cost("gpt-4.1-mini", usage, provider="openai")
    assert local == direct and local is not None


@pytest.mark.parametrize(
    "usage",
    [
        None,
        Usage(output_tokens=10),
        Usage(input_tokens=10),
        Usage(input_tokens=10, cached_tokens=11, output_tokens=1),
        Usage(input_tokens=10, cached_tokens=6, cache_write_tokens=6, output_tokens=1),
        Usage(input_tokens=10, output_tokens=1, reasoning_tokens=2),
    ],
)
def test_a_usage_that_cannot_be_priced_has_an_unknown_cost(usage: Usage | None) -> None:
    assert Prices(at=AT).cost("gpt-4.1-mini", usage, provider="openai") is None


def test_an_unknown_model_has_an_unknown_cost() -> None:
    usage = Usage(input_tokens=10, output_tokens=1)
    prices = Prices(at=AT)
    assert prices.cost("no-such-model-7", usage, provider="openai") is None
    assert prices.cost("gpt-4.1-mini", usage, provider="no-such-provider") is None
    assert prices.cost("gpt-4.1-mini", usage) is None  # no provider, no URL: unknown
    assert Prices(data=False).cost("gpt-4.1-mini", usage, provider="openai") is None


def test_your_rates_win_over_the_data_each_token_at_its_rate() -> None:
    rates = Rates(
        input="2", output=8, cached_input=0.5, cache_write=Decimal("2.5"), reasoning=10,
        per_request="0.001",
    )  # fmt: skip
    prices = Prices({"gpt-4.1-mini": rates}, data=False)
    usage = Usage(
        input_tokens=1_000,
        cached_tokens=300,
        cache_write_tokens=100,
        output_tokens=500,
        reasoning_tokens=200,
    )
    cost = prices.cost("gpt-4.1-mini", usage)
    expected_in = (600 * 2 + 300 * Decimal("0.5") + 100 * Decimal("2.5")) / M
    expected_out = (300 * 8 + 200 * 10) / M
    assert cost == Cost(
        total=expected_in + expected_out + Decimal("0.001"), input=expected_in, output=expected_out
    )


def test_your_tiers_apply_above_their_threshold() -> None:
    rates = Rates(input=1, output=2, tiers=((100, Rates(input=3, output=4)),))
    prices = Prices({"m": rates}, data=False)
    assert prices.cost("m", Usage(input_tokens=100, output_tokens=1)) == Cost(
        total=Decimal(102) / M, input=Decimal(100) / M, output=Decimal(2) / M
    )
    assert prices.cost("m", Usage(input_tokens=101, output_tokens=1)) == Cost(
        total=Decimal(307) / M, input=Decimal(303) / M, output=Decimal(4) / M
    )


@pytest.mark.parametrize("bad", [-1, "x", float("nan"), float("inf")])
def test_rates_must_be_numbers(bad: object) -> None:
    with pytest.raises(UsageError):
        Rates(input=bad, output=1)  # type: ignore[arg-type]


def test_prices_refuse_a_naive_date_and_foreign_rates() -> None:
    with pytest.raises(UsageError, match="aware"):
        Prices(at=datetime(2026, 1, 1))
    with pytest.raises(UsageError, match="Rates"):
        Prices({"m": {"input": 1}})  # type: ignore[dict-item]


def test_a_cost_survives_its_json_shape() -> None:
    cost = Cost(total=Decimal("0.005415"), input=Decimal("0.004665"), output=Decimal("0.00075"))
    assert cost_from_dict(json.loads(json.dumps(cost.to_dict()))) == cost
    assert (cost + cost).total == Decimal("0.010830")
    bad_records = ({"total": "1"}, {"total": -1.0}, {"total": True}, {"total": float("inf")})
    for bad in (None, [], *bad_records):
        assert cost_from_dict(bad) is None
    assert str(cost) == "$0.005415"


@pytest.mark.parametrize("provider_id", ["openai", "anthropic", "google", "deepseek", "groq"])
def test_every_model_of_the_data_is_priced_as_calc_price_prices_it(provider_id: str) -> None:
    # toolwire reads each model's rates once (calc_price is slow); whatever
    # path a model takes, its figures are calc_price's own.
    import random

    from genai_prices.data_snapshot import get_snapshot

    (provider,) = [p for p in get_snapshot().providers if p.id == provider_id]
    prices = Prices(at=AT)
    rng = random.Random(provider_id)
    for info in provider.models:
        for _ in range(4):
            total = rng.choice([50, 9_000, 150_000, 250_000, 1_500_000])
            read, write = rng.randrange(total // 2), rng.randrange(total // 4)
            output = rng.randrange(1, 20_000)
            reasoning = rng.randrange(output)
            usage = Usage(
                input_tokens=total,
                cached_tokens=read,
                cache_write_tokens=write,
                output_tokens=output,
                reasoning_tokens=reasoning,
            )
            cost = prices.cost(info.id, usage, provider=provider_id)
            try:
                expected = genai_prices.calc_price(
                    genai_prices.Usage(
                        input_tokens=total,
                        cache_read_tokens=read,
                        cache_write_tokens=write,
                        output_tokens=output,
                        output_reasoning_tokens=reasoning,
                    ),
                    info.id,
                    provider_id=provider_id,
                    genai_request_timestamp=AT,
                )
            except (LookupError, ValueError):  # an id that names no model of its own
                assert cost is None, info.id
                continue
            assert cost is not None, info.id
            assert cost.total == expected.total_price, info.id
            assert (cost.input, cost.output) == (expected.input_price, expected.output_price)


def test_an_xai_reasoning_turn_costs_what_xai_billed() -> None:
    # xAI's completion_tokens leave reasoning out: toolwire used to copy them
    # as output_tokens, so reasoning (196) exceeded output (26) and the turn
    # had no price. Its output now counts reasoning, and the price is xAI's
    # own bill, cost_in_usd_ticks (ten-billionths of a dollar).
    from tests.conftest import CORPUS

    body = (CORPUS / "xai" / "grok3mini_reasoning_then_whole_call.sse").read_bytes()
    decoder = StreamDecoder("openai-chat")
    decoder.feed(body)
    decoder.close()
    usage = decoder.result().usage
    assert usage is not None and usage.output_tokens == 26 + 196
    cost = Prices(at=AT).cost("grok-3-mini", usage, base_url="https://api.x.ai/v1")
    assert cost is not None, "the reasoning turn is priced"
    billed = Decimal(usage.raw["cost_in_usd_ticks"]) / 10**10
    assert abs(cost.total - billed) <= Decimal("0.0000001"), (cost.total, billed)
