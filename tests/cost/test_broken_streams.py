"""A broken stream sent again is billed too: what it revealed before it broke
is priced, journaled with its failure, and counted toward the run's limits."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path

import pytest

from toolwire import ModelRetrying, RunFinished, TextDelta, UsageLimitExceeded
from toolwire.cost import Prices, Rates, UsageLimits
from toolwire.run import RunResult
from toolwire.testing import EmulationServer, Scenario

from .test_limits import LONG_TEXT, Tools, agent_for, stream_until_error, the_only_run

pytestmark = pytest.mark.anyio

CUT = 2000
"""Bytes of the first answer sent before the connection drops: mid-text."""


def cut_then_whole() -> Scenario:
    """A long answer whose first stream breaks, then a call, then an answer."""
    return Scenario.from_dict(
        {
            "name": "cut",
            "turns": [
                {
                    "text": LONG_TEXT,
                    "tool_calls": [{"name": "lookup", "arguments": {"key": "a"}}],
                    "chunk_size": 8,
                    "faults": [{"cut_after_bytes": CUT}],
                },
                {"text": "done"},
            ],
        }
    )


async def test_a_retried_broken_stream_is_priced_and_journaled(tmp_path: Path) -> None:
    # A dollar per output token, input free: a cost is an output count.
    prices = Prices({"gpt-4.1-mini": Rates(input=0, output=1_000_000)}, data=False)
    tools = Tools()
    journal = tmp_path / "journal.sqlite3"
    broken: list[str] = []
    with EmulationServer(cut_then_whole()) as server:
        agent = agent_for(server, "openai-chat", tools, journal, prices=prices, stream_retries=1)
        retried = False
        result: RunResult | None = None
        try:
            async for event in agent.stream("go"):
                retried = retried or isinstance(event, ModelRetrying)
                if isinstance(event, TextDelta) and not retried:
                    broken.append(event.text)
                if isinstance(event, RunFinished):
                    result = event.result
        finally:
            await agent.aclose()
    assert result is not None and result.ok and retried and tools.ran == ["lookup:a"]
    seen = "".join(broken)
    assert 0 < len(seen) < len(LONG_TEXT), "the first stream broke mid-text"
    # The broken attempt: its streamed text, about four characters a token.
    broken_cost = Decimal(math.ceil(len(seen) / 4))
    answered = result.usage.output_tokens
    assert answered is not None
    assert result.cost is not None and result.cost.total == broken_cost + answered
    _, log = the_only_run(journal)
    (failed,) = [e for e in log.events if e.kind == "model_failed"]
    assert failed.data["usage"]["output_tokens"] == broken_cost
    assert Decimal(str(failed.data["cost"]["total"])) == broken_cost


async def test_a_broken_streams_usage_counts_toward_the_limits() -> None:
    tools = Tools()
    with EmulationServer(cut_then_whole()) as server:
        # The emulated OpenAI reports usage at the end: the broken stream's
        # input is its request's size, about four bytes a token.
        agent = agent_for(
            server, "openai-chat", tools, stream_retries=1, limits=UsageLimits(input_tokens=1)
        )
        _, error = await stream_until_error(agent)
        requests = len(server.requests)
    assert isinstance(error, UsageLimitExceeded) and error.limit == "input_tokens"
    assert error.value > 1 and "estimated" not in error.message
    assert requests == 1, "the retry was never sent"
    assert tools.ran == []
