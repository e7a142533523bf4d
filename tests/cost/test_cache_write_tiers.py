"""Cache writes at the 1 h tier cost that tier's rate in ``genai-prices``'
data, by default: Anthropic bills them at 2x input where 5 min writes are
1.25x. The figures are checked against a hand computation from the same
data as of a pinned date, and against ``calc_price`` for every model."""

from __future__ import annotations

import random
from datetime import datetime, timezone
from decimal import Decimal

import pytest

from toolwire.cost import Prices
from toolwire.stream.decoder import StreamDecoder
from toolwire.types import Usage

genai_prices = pytest.importorskip("genai_prices")  # the [cost] extra: Python 3.11+

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)
M = Decimal(1_000_000)

STREAM = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1",'
    b'"type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],'
    b'"usage":{"input_tokens":100,"cache_read_input_tokens":0,'
    b'"cache_creation_input_tokens":3000,"cache_creation":'
    b'{"ephemeral_5m_input_tokens":1000,"ephemeral_1h_input_tokens":2000},'
    b'"output_tokens":1}}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    b'"content_block":{"type":"text","text":""}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"ok"}}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
    b'"usage":{"output_tokens":10}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)


def _prices_of(model: str) -> object:
    from genai_prices.data_snapshot import get_snapshot

    _, info = get_snapshot().find_provider_model(model, None, "anthropic", None)
    return info.get_prices(AT)


def test_an_anthropic_1h_cache_write_is_priced_at_the_1h_rate_by_default() -> None:
    decoder = StreamDecoder("anthropic-messages")
    decoder.feed(STREAM)
    decoder.close()
    usage = decoder.result().usage
    assert usage is not None
    assert (usage.input_tokens, usage.cache_write_tokens, usage.cache_write_1h_tokens) == (
        3100,
        3000,
        2000,
    )
    p = _prices_of("claude-sonnet-4-5")
    fresh, write_5m, write_1h, out = (
        price.base / M
        for price in (p.input_mtok, p.cache_write_mtok, p.cache_write_1h_mtok, p.output_mtok)
    )
    assert write_1h == 2 * fresh and write_5m == Decimal("1.25") * fresh  # the tiers differ
    cost = Prices(at=AT).cost("claude-sonnet-4-5", usage, provider="anthropic")
    assert cost is not None
    assert cost.input == 100 * fresh + 1000 * write_5m + 2000 * write_1h
    assert cost.total == cost.input + 10 * out
    # The same writes all at the 5 min tier cost less: the tier is not ignored.
    at_5m = Prices(at=AT).cost(
        "claude-sonnet-4-5",
        Usage(input_tokens=3100, output_tokens=10, cache_write_tokens=3000),
        provider="anthropic",
    )
    assert at_5m is not None and at_5m.total == cost.total - 2000 * (write_1h - write_5m)


def test_a_model_without_a_1h_rate_prices_those_writes_as_its_other_writes() -> None:
    usage = Usage(input_tokens=3000, output_tokens=0, cache_write_tokens=3000)
    one_hour = Usage(
        input_tokens=3000, output_tokens=0, cache_write_tokens=3000, cache_write_1h_tokens=2000
    )
    prices = Prices(at=AT)
    assert prices.cost("gpt-4o", one_hour, provider="openai") == prices.cost(
        "gpt-4o", usage, provider="openai"
    )


@pytest.mark.parametrize("provider_id", ["anthropic", "aws", "google"])
def test_1h_writes_of_every_model_are_priced_as_calc_price_prices_them(provider_id: str) -> None:
    from genai_prices.data_snapshot import get_snapshot

    (provider,) = [p for p in get_snapshot().providers if p.id == provider_id]
    prices = Prices(at=AT)
    rng = random.Random(provider_id)
    for info in provider.models:
        total = rng.choice([9_000, 250_000])
        write = rng.randrange(1, total // 4)
        written_1h = rng.randrange(write + 1)
        usage = Usage(
            input_tokens=total,
            cache_write_tokens=write,
            cache_write_1h_tokens=written_1h,
            output_tokens=50,
        )
        cost = prices.cost(info.id, usage, provider=provider_id)
        try:
            expected = genai_prices.calc_price(
                genai_prices.Usage(
                    input_tokens=total,
                    cache_write_tokens=write,
                    cache_write_1h_tokens=written_1h,
                    output_tokens=50,
                ),
                info.id,
                provider_id=provider_id,
                genai_request_timestamp=AT,
            )
        except (LookupError, ValueError):  # an id that names no model of its own
            assert cost is None, info.id
            continue
        assert cost is not None, info.id
        assert (cost.total, cost.input) == (expected.total_price, expected.input_price), info.id
