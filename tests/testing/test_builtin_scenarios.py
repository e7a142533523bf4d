"""The built-in scenarios: which tools each fits, and what a mismatch says."""

from __future__ import annotations

import pytest

import toolwire
from toolwire.providers import OpenAIChat
from toolwire.testing import EmulationServer, Scenario, builtin_names


@toolwire.tool(read_only=True)
def get_weather(city: str) -> dict[str, object]:
    """The README's get_weather."""
    return {"city": city, "condition": "light rain", "temperature_c": 24}


def run(scenario: str, tools: list[toolwire.Tool]) -> toolwire.RunResult:
    with EmulationServer(Scenario.builtin(scenario)) as server:
        provider = OpenAIChat(base_url=server.url_for("openai-chat"), api_key="test-key")
        return toolwire.Agent(provider, model="m", tools=tools, journal=False).run_sync("?")


def test_builtin_names() -> None:
    assert builtin_names() == ["quickstart", "weather"]


def test_quickstart_fits_the_readmes_tool_and_the_sample_one() -> None:
    from toolwire.examples import get_weather as sample_get_weather

    assert run("quickstart", [get_weather]).output == "It is light rain in Hangzhou."
    assert run("quickstart", [sample_get_weather]).output == "It is light rain in Hangzhou."


def test_a_scenario_at_odds_with_the_tools_says_which_and_why() -> None:
    with pytest.raises(toolwire.ProviderError) as caught:
        run("weather", [get_weather])
    assert caught.value.status_code == 400
    message = caught.value.message
    assert "scenario 'weather' cannot answer this request" in message
    assert "condition_zh" in message
