"""The chat adapters' demo agent: a scripted model (the emulation server)
that thinks, says a word, checks the weather in two cities at once, then asks
to send a payment, which needs approval, and answers with the result.

Used by the adapters' tests, by the npm tier's server (``tests/ui/serve.py``)
and by the example page's test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import toolwire
from toolwire.providers import Gemini, OpenAIChat
from toolwire.testing import EmulationServer, Scenario

PAID: list[tuple[str, int]] = []

TURNS: list[dict[str, Any]] = [
    {
        "reasoning": "two cities, then the payment",
        "text": "Checking the weather.",
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "Paris"}},
            {"name": "get_weather", "arguments": {"city": "Rome"}},
        ],
        "chunk_size": 6,
    },
    {"tool_calls": [{"name": "send_payment", "arguments": {"to": "ann", "amount_cents": 1250}}]},
    {"text": "Done: {result:0}"},
]


@toolwire.tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city.
    """
    return f"sunny in {city}"


@toolwire.tool(requires_approval=True)
def send_payment(to: str, amount_cents: int) -> str:
    """Send money.

    Args:
        to: who receives it.
        amount_cents: how much, in cents.
    """
    PAID.append((to, amount_cents))
    return f"sent {amount_cents} to {to}"


def start_model(turns: list[dict[str, Any]] | None = None) -> EmulationServer:
    """The scripted model, started on loopback."""
    scenario = {"name": "chat", "turns": turns or TURNS}
    return EmulationServer(Scenario.from_dict(scenario)).start()


def make_agent(
    model: EmulationServer, journal: Path | str, *, dialect: str = "openai-chat"
) -> toolwire.Agent:
    """The demo agent on ``model``, journaled to ``journal``."""
    provider: Any
    if dialect == "gemini":
        provider = Gemini(base_url=model.url_for("gemini"), api_key="test-key")
    else:
        provider = OpenAIChat(base_url=model.url_for("openai-chat"), api_key="sk-demo")
    return toolwire.Agent(
        provider, model="demo", tools=[get_weather, send_payment], journal=journal
    )


def sse_data(text: str) -> list[Any]:
    """The JSON of each ``data:`` line of a server-sent event stream."""
    return [
        json.loads(line[len("data: ") :])
        for line in text.splitlines()
        if line.startswith("data: ") and line != "data: [DONE]"
    ]


@toolwire.tool(external=True)
def pick_color(palette: str) -> str:
    """A person picks a color, in the page.

    Args:
        palette: which palette to pick from.
    """
    raise AssertionError("an external tool's body never runs")


EXTERNAL_TURNS: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "pick_color", "arguments": {"palette": "sea"}}]},
    {"text": "You picked {result:0}."},
]


def make_external_agent(model: EmulationServer, journal: Path | str) -> toolwire.Agent:
    """An agent whose one tool's result comes from the page."""
    provider = OpenAIChat(base_url=model.url_for("openai-chat"), api_key="sk-demo")
    return toolwire.Agent(provider, model="demo", tools=[pick_color], journal=journal)
