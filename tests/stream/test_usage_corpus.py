"""Every usage figure decoded from the conformance corpus adds up.

Where a usage has a total, input + output = total, and reasoning is a part
of the output, whatever the provider's own convention. xAI's Chat
Completions leave reasoning out of ``completion_tokens`` (prompt +
completion + reasoning = total): toolwire adds it to ``output_tokens``, so
its reasoning turns are priced and counted toward an output budget.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.conftest import TRACES, Trace
from toolwire import StreamDecoder
from toolwire.cost import Prices, Rates
from toolwire.types import Usage


def usage_of(trace: Trace, chunk: int) -> Usage | None:
    decoder = StreamDecoder(trace.decoder_api)
    for start in range(0, len(trace.body), chunk):
        decoder.feed(trace.body[start : start + chunk])
    decoder.close()
    return decoder.result().usage


WITH_USAGE = [t for t in TRACES if usage_of(t, len(t.body) or 1) is not None]


def test_most_recordings_report_usage() -> None:
    assert len(WITH_USAGE) >= 140, len(WITH_USAGE)


@pytest.mark.parametrize("trace", WITH_USAGE, ids=lambda t: t.name)
@pytest.mark.parametrize("chunk", [1 << 30, 7], ids=["whole", "split"])
def test_input_and_output_make_the_total(trace: Trace, chunk: int) -> None:
    usage = usage_of(trace, chunk)
    assert usage is not None
    counts = usage.to_dict()
    assert all(v is None or (type(v) is int and v >= 0) for v in counts.values()), counts
    if usage.total_tokens is not None:
        assert (usage.input_tokens or 0) + (usage.output_tokens or 0) == usage.total_tokens
    if usage.reasoning_tokens is not None:
        assert usage.output_tokens is not None
        assert usage.reasoning_tokens <= usage.output_tokens
    if usage.cached_tokens is not None:
        assert usage.input_tokens is not None
        assert usage.cached_tokens <= usage.input_tokens


# (input, output with reasoning, total, reasoning) of the recordings whose
# provider leaves reasoning out of its completion count, or counts more
# reasoning than output.
NORMALIZED = {
    # completion_tokens 26 + reasoning_tokens 196; total_tokens 513.
    "xai/grok3mini_reasoning_then_whole_call": (291, 222, 513, 196),
    # completion_tokens 26 + reasoning_tokens 227; total_tokens 560.
    "xai/vercel_openaicompat_xai_grok3mini_reasoning_call": (307, 253, 560, 227),
    # OpenRouter's MiniMax: 43 + 10 = 53 is the total, yet reasoning_tokens
    # is 11: the part is cut to its whole.
    "minimax/pydanticai_openrouter_minimax_inband_error_after_length": (43, 10, 53, 10),
}


@pytest.mark.parametrize("name", sorted(NORMALIZED))
def test_reasoning_is_part_of_the_output(name: str) -> None:
    (trace,) = [t for t in TRACES if t.name == name]
    usage = usage_of(trace, 1 << 30)
    assert usage is not None
    got = (usage.input_tokens, usage.output_tokens, usage.total_tokens, usage.reasoning_tokens)
    assert got == NORMALIZED[name]


def test_every_other_openai_usage_is_the_providers_own() -> None:
    # Only the recordings above are changed: everywhere else the completion
    # count already includes reasoning, and is the output count as sent.
    for trace in WITH_USAGE:
        if trace.decoder_api != "openai-chat" or trace.name in NORMALIZED:
            continue
        usage = usage_of(trace, 1 << 30)
        assert usage is not None
        assert usage.output_tokens == usage.raw.get("completion_tokens"), trace.name


def test_an_xai_reasoning_turn_is_priced_with_its_reasoning() -> None:
    # A dollar per million input tokens, two per million output tokens.
    prices = Prices({"grok-3-mini": Rates(input=1, output=2)}, data=False)
    for name in ("xai/grok3mini_reasoning_then_whole_call",):
        (trace,) = [t for t in TRACES if t.name == name]
        usage = usage_of(trace, 1 << 30)
        assert usage is not None
        cost = prices.cost("grok-3-mini", usage)
        assert cost is not None, "the reasoning turn is priced"
        assert cost.total == (Decimal(291) * 1 + Decimal(222) * 2) / 1_000_000
