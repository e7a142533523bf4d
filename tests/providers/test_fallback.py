"""Model fallback: a chain whose primary answers 503 completes on the next
provider (another dialect), both attempts journaled; one that fails after
its answer began is not asked of another provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, Backoff, HttpRetryPolicy, HttpxTransport, ReadError
from toolwire.errors import BadRequest, Overloaded, ProviderError
from toolwire.journal import ModelAttempt, SQLiteJournal
from toolwire.providers import Anthropic, Fallback, OpenAIChat
from toolwire.providers.fallback import falls_back
from toolwire.testing import FAULT_HEADER, EmulationServer, Scenario

pytestmark = pytest.mark.anyio


def weather() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "fallback-weather",
            "turns": [
                {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
                {"text": "It is {result:get_weather.sky} in Paris."},
            ],
        }
    )


def get_weather(city: str) -> dict[str, Any]:
    """Current weather of a city.

    Args:
        city: the city name.
    """
    return {"city": city, "sky": "rainy"}


def transport() -> HttpxTransport:
    # The 503s are retried once, at once: the chain goes on after the retries.
    return HttpxTransport(retry=HttpRetryPolicy(retries=1, backoff=Backoff(initial_delay=0.0)))


async def close(agent: Agent) -> None:
    await agent.aclose()
    assert agent.transport is not None
    await agent.transport.aclose()


def attempts(path: Path) -> list[tuple[int | None, ModelAttempt]]:
    journal = SQLiteJournal(path)
    try:
        [run] = journal.list_runs()
        events = journal.load_run(run.run_id).events
    finally:
        journal.close()
    return [(e.turn, e.record) for e in events if isinstance(e.record, ModelAttempt)]


async def test_a_503_goes_on_to_the_next_provider_in_its_own_dialect(tmp_path: Path) -> None:
    fault = {FAULT_HEADER: json.dumps({"status": 503, "message": "busy"})}
    with EmulationServer(weather()) as primary_server, EmulationServer(weather()) as second:
        primary = OpenAIChat(
            base_url=primary_server.url_for("openai-chat"), api_key="k", headers=fault
        )
        secondary = Anthropic(base_url=second.url_for("anthropic-messages"), api_key="k")
        chain = Fallback([primary, (secondary, "claude-sonnet-4-5")])
        agent = Agent(
            chain,
            model="gpt-4.1",
            tools=[get_weather],
            journal=tmp_path / "runs.sqlite3",
            transport=transport(),
        )
        result = await agent.run("Weather in Paris?")
        await close(agent)
        asked_primary, asked_second = list(primary_server.requests), list(second.requests)
    assert result.output == "It is rainy in Paris."
    # Each turn: two requests to the primary (one retry), then the secondary's.
    assert len(asked_primary) == 4 and len(asked_second) == 2
    assert [t["name"] for t in asked_second[0]["tools"]] == ["get_weather"]
    assert asked_second[0]["tools"][0]["input_schema"]["properties"]["city"]["type"] == "string"
    assert asked_second[0]["model"] == "claude-sonnet-4-5"
    # The second turn carries the first turn's call and its result, in Anthropic's shape.
    blocks = [b["type"] for m in asked_second[1]["messages"] for b in m["content"]]
    assert blocks[-2:] == ["tool_use", "tool_result"]
    tried = attempts(tmp_path / "runs.sqlite3")
    assert [(turn, r.position, r.provider, r.dialect) for turn, r in tried] == [
        (1, 0, primary.name, "openai-chat"),
        (1, 1, secondary.name, "anthropic-messages"),
        (2, 0, primary.name, "openai-chat"),
        (2, 1, secondary.name, "anthropic-messages"),
    ]
    first, answered = tried[0][1], tried[1][1]
    assert first.error is not None and first.error["status_code"] == 503
    assert first.error["type"] == Overloaded.type_name
    assert first.model == "gpt-4.1" and answered.model == "claude-sonnet-4-5"
    assert answered.error is None


async def test_a_stream_cut_after_its_first_events_is_not_asked_again(tmp_path: Path) -> None:
    cut = {FAULT_HEADER: json.dumps({"cut_at_fraction": 0.6})}
    with EmulationServer(weather()) as primary_server, EmulationServer(weather()) as second:
        primary = OpenAIChat(
            base_url=primary_server.url_for("openai-chat"), api_key="k", headers=cut
        )
        secondary = Anthropic(base_url=second.url_for("anthropic-messages"), api_key="k")
        agent = Agent(
            Fallback([primary, secondary]),
            model="gpt-4.1",
            tools=[get_weather],
            journal=tmp_path / "runs.sqlite3",
            transport=transport(),
            stream_retries=0,
        )
        seen: list[str] = []
        with pytest.raises(ReadError):
            async for event in agent.stream("Weather in Paris?"):
                seen.append(type(event).__name__)
        await close(agent)
        asked_second = list(second.requests)
    assert asked_second == []
    assert "ToolCallStarted" in seen  # the answer had begun when it was cut
    [(_, record)] = attempts(tmp_path / "runs.sqlite3")
    assert record.position == 0 and record.error is not None
    assert record.error["type"] == ReadError.type_name


async def test_an_error_the_chain_does_not_fall_back_on_is_raised(tmp_path: Path) -> None:
    fault = {FAULT_HEADER: json.dumps({"status": 400, "message": "bad"})}
    with EmulationServer(weather()) as server:
        primary = OpenAIChat(base_url=server.url_for("openai-chat"), api_key="k", headers=fault)
        secondary = OpenAIChat(base_url=server.url_for("openai-chat"), api_key="k")
        agent = Agent(
            Fallback([primary, secondary]),
            model="m",
            tools=[get_weather],
            journal=False,
            transport=transport(),
        )
        with pytest.raises(ProviderError) as raised:
            await agent.run("Weather in Paris?")
        await close(agent)
        asked = list(server.requests)
    assert raised.value.status_code == 400 and len(asked) == 1


def test_what_falls_back() -> None:
    assert falls_back(Overloaded("x", status_code=503))
    assert falls_back(ProviderError("x", status_code=500))
    assert falls_back(ProviderError("x", status_code=400, code="content_filter"))
    assert not falls_back(ProviderError("x", status_code=401))
    assert not falls_back(BadRequest("x"))
    chain = Fallback([OpenAIChat(base_url="http://127.0.0.1:9/v1", api_key="k")], on=(ReadError,))
    assert chain.falls_back(ReadError("cut")) and not chain.falls_back(Overloaded("x"))
