"""What runs cost, end to end: agents against the emulation server in each
dialect, the journal's records, ``toolwire runs list|show``, and the spans.

Every figure is checked against a hand computation from ``genai-prices``'
data as of a pinned date (``Prices(at=...)``), never today's prices."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolwire import Agent, tool
from toolwire.cli import main
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.cost import Cost, Prices, Rates
from toolwire.journal import SQLiteJournal
from toolwire.providers import Anthropic
from toolwire.run import RunResult
from toolwire.testing import EmulationServer, Scenario
from toolwire.types import Usage

from .test_prices import ANTHROPIC_CACHED_STREAM

genai_prices = pytest.importorskip("genai_prices")  # the [cost] extra: Python 3.11+

pytestmark = pytest.mark.anyio

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)
M = Decimal(1_000_000)
PROVIDER_IDS = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "bedrock": "aws",
    "bedrock-invoke": "aws",
}


@tool(read_only=True)
def get_weather(city: str) -> dict[str, Any]:
    """Current weather of a city.

    Args:
        city: the city name.
    """
    return {"city": city, "condition": "rain"}


WEATHER = Scenario.from_dict(
    {
        "name": "cost",
        "turns": [
            {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
            {"reasoning": "The tool said rain.", "text": "It rains in Paris: {result:0}"},
        ],
    }
)


def hand_cost(provider_id: str, model: str, usage: Usage) -> Decimal:
    """One request's cost from the data's rates (no cache in these runs)."""
    from genai_prices.data_snapshot import get_snapshot

    _, info = get_snapshot().find_provider_model(model, None, provider_id, None)
    rates = info.get_prices(AT)
    assert usage.input_tokens is not None and usage.output_tokens is not None
    input_rate, output_rate = rates.input_mtok, rates.output_mtok
    # Under every tier: the runs are small.
    input_rate = getattr(input_rate, "base", input_rate)
    output_rate = getattr(output_rate, "base", output_rate)
    return (usage.input_tokens * input_rate + usage.output_tokens * output_rate) / M


def agent_for(server: EmulationServer, name: str, journal: Path, **options: Any) -> Agent:
    _, dialect, model = PROVIDERS[name]
    provider = make_provider(name, base_url=server.url_for(dialect), api_key="test-key")
    return Agent(provider, model=model, tools=[get_weather], journal=journal, **options)


def responses_of(journal: Path, run_id: str) -> list[dict[str, Any]]:
    store = SQLiteJournal(journal, read_only=True)
    try:
        return [e.data for e in store.load_run(run_id).events if e.kind == "model_response"]
    finally:
        store.close()


@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_a_runs_cost_is_the_sum_of_its_requests_at_the_datas_rates(
    name: str, tmp_path: Path
) -> None:
    journal = tmp_path / "journal.sqlite3"
    with EmulationServer(WEATHER) as server:
        agent = agent_for(server, name, journal, prices=Prices(at=AT))
        try:
            result = await agent.run("Weather in Paris?")
        finally:
            await agent.aclose()
    assert result.ok and result.turns == 2
    provider_id = PROVIDER_IDS.get(name, "google")
    records = responses_of(journal, result.run_id)
    expected = Decimal(0)
    for record in records:
        usage = Usage(**{k: v for k, v in record["usage"].items() if v is not None})
        one = hand_cost(provider_id, agent.model, usage)
        assert Decimal(repr(record["cost"]["total"])) == one  # each request in the journal
        expected += one
    assert len(records) == 2 and expected > 0
    assert result.cost is not None and result.cost.total == expected
    store = SQLiteJournal(journal, read_only=True)
    try:
        (summary,) = store.list_runs()
    finally:
        store.close()
    assert summary.cost == result.cost.to_dict()


async def test_anthropic_cache_reads_and_writes_cost_what_the_data_says(tmp_path: Path) -> None:
    body = tmp_path / "cached.sse"
    body.write_bytes(ANTHROPIC_CACHED_STREAM)
    with EmulationServer(Scenario.replay_file(body)) as server:
        provider = Anthropic(api_key="test-key", base_url=server.url_for("anthropic-messages"))
        agent = Agent(provider, model="claude-sonnet-4-5", journal=False, prices=Prices(at=AT))
        try:
            result = await agent.run("hi")
        finally:
            await agent.aclose()
    from genai_prices.data_snapshot import get_snapshot

    _, info = get_snapshot().find_provider_model("claude-sonnet-4-5", None, "anthropic", None)
    p = info.get_prices(AT)
    expected = (
        12 * p.input_mtok.base
        + 30_000 * p.cache_read_mtok.base
        + 2_000 * p.cache_write_mtok.base
        + 300 * p.output_mtok.base
    ) / M
    assert result.cost is not None and result.cost.total == expected
    assert result.usage.input_tokens == 32_012  # counted once, cache parts included
    # Billing every input token at the full rate would be another figure.
    assert expected < (32_012 * p.input_mtok.base + 300 * p.output_mtok.base) / M


async def test_an_unknown_model_has_an_unknown_cost_everywhere(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    with EmulationServer(WEATHER) as server:
        provider = make_provider(
            "openai-chat", base_url=server.url_for("openai-chat"), api_key="test-key"
        )
        agent = Agent(
            provider, model="my-own-model", tools=[get_weather], journal=journal,
            prices=Prices(at=AT),
        )  # fmt: skip
        try:
            result = await agent.run("Weather in Paris?")
        finally:
            await agent.aclose()
    assert result.ok and result.cost is None
    assert [r["cost"] for r in responses_of(journal, result.run_id)] == [None, None]
    listed = CliRunner().invoke(main, ["runs", "list", "--journal", str(journal)])
    assert listed.exit_code == 0, listed.output
    (row,) = [line for line in listed.output.splitlines() if "my-own-model" in line]
    assert row.rstrip().endswith("-")
    assert "+ 1 unknown" in listed.output


async def test_runs_list_and_show_give_cost_and_tokens_with_a_total(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    prices = Prices({"gpt-4.1-mini": Rates(input=1_000, output=2_000)}, data=False)
    results: list[RunResult] = []
    with EmulationServer(WEATHER) as server:
        for _ in range(2):
            agent = agent_for(server, "openai-chat", journal, prices=prices)
            try:
                results.append(await agent.run("Weather in Paris?"))
            finally:
                await agent.aclose()
    costs = [r.cost for r in results]
    assert all(isinstance(c, Cost) for c in costs)
    listed = CliRunner().invoke(main, ["runs", "list", "--journal", str(journal)])
    assert listed.exit_code == 0, listed.output
    out = listed.output
    assert "cost" in out.splitlines()[0] and "tokens" in out.splitlines()[0]
    for result in results:
        assert result.cost is not None
        row = next(line for line in out.splitlines() if line.startswith(result.run_id[:12]))
        usage = result.usage
        assert f"{usage.input_tokens}/{usage.output_tokens}" in row
        assert row.rstrip().endswith(str(result.cost))
    total = sum((r.cost.total for r in results if r.cost is not None), Decimal(0))
    in_total = sum(r.usage.input_tokens or 0 for r in results)
    out_total = sum(r.usage.output_tokens or 0 for r in results)
    (total_row,) = [line for line in out.splitlines() if line.startswith("total")]
    assert f"{in_total}/{out_total}" in total_row and str(Cost(total=total)) in total_row
    shown = CliRunner().invoke(main, ["runs", "show", results[0].run_id, "--journal", str(journal)])
    assert shown.exit_code == 0, shown.output
    turn_lines = [line for line in shown.output.splitlines() if "  model " in line]
    assert len(turn_lines) == 2 and all("$" in line for line in turn_lines)
    assert f"cost {results[0].cost}" in shown.output
    as_json = CliRunner().invoke(
        main, ["runs", "show", results[0].run_id, "--json", "--journal", str(journal)]
    )
    turns = json.loads(as_json.output)["turns"]
    assert [t["answer"]["cost"]["total"] > 0 for t in turns] == [True, True]


async def test_a_journal_without_costs_still_reads(tmp_path: Path) -> None:
    # A journal an older toolwire wrote has no cost anywhere.
    journal = tmp_path / "journal.sqlite3"
    with EmulationServer(WEATHER) as server:
        agent = agent_for(server, "openai-chat", journal)
        try:
            result = await agent.run("Weather in Paris?")
        finally:
            await agent.aclose()
    db = sqlite3.connect(journal)
    db.execute("UPDATE runs SET summary = json_remove(summary, '$.cost')")
    db.execute("UPDATE events SET data = json_remove(data, '$.cost')")
    db.commit()
    db.close()
    for args in (["list"], ["show", result.run_id], ["show", result.run_id, "--json"]):
        shown = CliRunner().invoke(main, ["runs", *args, "--journal", str(journal)])
        assert shown.exit_code == 0, shown.output
    listed = CliRunner().invoke(main, ["runs", "list", "--journal", str(journal)])
    assert "+ 1 unknown" in listed.output


async def test_spans_carry_each_requests_cost_and_the_runs(spans: Any) -> None:
    from toolwire.otel import Tracer

    prices = Prices({"gpt-4.1-mini": Rates(input=1_000, output=2_000)}, data=False)
    with EmulationServer(WEATHER) as server:
        provider = make_provider(
            "openai-chat", base_url=server.url_for("openai-chat"), api_key="test-key"
        )
        agent = Agent(
            provider, model="gpt-4.1-mini", tools=[get_weather], journal=False, prices=prices,
            observers=[Tracer(spans.provider)],
        )  # fmt: skip
        try:
            result = await agent.run("Weather in Paris?")
        finally:
            await agent.aclose()
    assert result.cost is not None
    chats = spans.named("chat ")
    assert len(chats) == 2
    per_request = [span.attributes["toolwire.cost.usd"] for span in chats]
    assert sum(per_request) == pytest.approx(float(result.cost.total))
    run = spans.one("invoke_agent")
    assert run.attributes["toolwire.cost.usd"] == float(result.cost.total)


async def test_a_resumed_run_keeps_the_cost_of_its_recorded_part(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    prices = Prices({"gpt-4.1-mini": Rates(input=1_000, output=2_000)}, data=False)
    with EmulationServer(WEATHER) as server:
        agent = agent_for(server, "openai-chat", journal, prices=prices)
        try:
            result = await agent.run("Weather in Paris?")
            again = await agent.resume(result.run_id)  # finished: read from the journal
        finally:
            await agent.aclose()
    assert result.cost is not None and again.cost == result.cost
