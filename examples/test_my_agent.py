"""Testing your own agent offline with toolwire's pytest fixture.

    pytest examples/test_my_agent.py

The ``toolwire_server`` fixture ships with toolwire (a pytest plugin): it
starts the emulation server on a free loopback port with your scenario.
"""

from __future__ import annotations

import toolwire
from toolwire.providers import Anthropic, OpenAIChat
from toolwire.testing import Scenario


@toolwire.tool(read_only=True)
def get_weather(city: str) -> dict[str, str]:
    """Current weather of a city.

    Args:
        city: the city's name.
    """
    return {"city": city, "condition": "light rain"}


SCENARIO = Scenario.from_dict(
    {
        "name": "my-agent",
        "turns": [
            {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
            {"text": "It is {result:get_weather.condition} in Paris."},
        ],
    }
)


def test_my_agent_answers_from_the_tool(toolwire_server) -> None:  # type: ignore[no-untyped-def]
    server = toolwire_server(SCENARIO)
    provider = OpenAIChat(base_url=server.url_for("openai-chat"), api_key="test")
    agent = toolwire.Agent(provider, model="test", tools=[get_weather])
    result = agent.run_sync("Weather in Paris?")
    assert result.output == "It is light rain in Paris."
    assert [r.call.arguments for r in result.tool_calls] == [{"city": "Paris"}]


def test_my_agent_survives_a_rate_limit(toolwire_server) -> None:  # type: ignore[no-untyped-def]
    turns = [dict(SCENARIO.turns[0].model_dump(), faults=[{"status": 429, "retry_after": 0}])]
    server = toolwire_server(
        Scenario.from_dict({"name": "busy", "turns": [*turns, SCENARIO.turns[1].model_dump()]})
    )
    provider = Anthropic(base_url=server.url_for("anthropic"), api_key="test")
    agent = toolwire.Agent(provider, model="test", tools=[get_weather])
    assert agent.run_sync("Weather in Paris?").output == "It is light rain in Paris."
