"""Batch results carry each run's cost, and the summary their total."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from toolwire import Agent, OpenAIChat, run_batch, tool
from toolwire.batch import load_results
from toolwire.cost import Prices, Rates
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

SCENARIO = Scenario.from_dict(
    {"turns": [{"tool_calls": [{"name": "ping", "arguments": {}}]}, {"text": "pong"}]}
)


@tool(read_only=True)
def ping() -> str:
    """Answer pong."""
    return "pong"


class PricedFactory:
    """Agents priced at a dollar per input token and two per output token."""

    def __init__(self, base_url: str, model: str = "gpt-4.1-mini") -> None:
        self.base_url = base_url
        self.model = model

    def __call__(self) -> Agent:
        prices = Prices({"gpt-4.1-mini": Rates(input=1_000_000, output=2_000_000)}, data=False)
        provider = OpenAIChat(api_key="test-key", base_url=self.base_url)
        return Agent(provider, model=self.model, tools=[ping], prices=prices, journal=False)


async def test_each_line_has_its_runs_cost_and_the_summary_their_total(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    async with EmulationServer(SCENARIO) as server:
        factory = PricedFactory(server.url_for("openai-chat"))
        summary = await run_batch(
            ["a", "bb"], factory, mode="local", results_path=results, progress=False
        )
    lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    totals = []
    for line in lines:
        usage, cost = line["usage"], line["cost"]
        assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
        assert cost["input"] == usage["input_tokens"]
        assert cost["output"] == 2 * usage["output_tokens"]
        assert cost["total"] == cost["input"] + cost["output"]
        totals.append(Decimal(cost["total"]))
    assert summary.cost == sum(totals)
    assert [r.cost for r in load_results(results)] == [line["cost"] for line in lines]


async def test_an_unknown_price_is_an_unknown_cost(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    async with EmulationServer(SCENARIO) as server:
        factory = PricedFactory(server.url_for("openai-chat"), model="no-such-model")
        summary = await run_batch(
            ["a"], factory, mode="local", results_path=results, progress=False
        )
    (record,) = load_results(results)
    assert record.ok and record.cost is None and summary.cost is None
