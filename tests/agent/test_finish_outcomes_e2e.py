"""A client-executed tool search, a steered response and a refusal end to end:
the Agent over real HTTP against the emulation server."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.agent.test_agent_http import agent_for, collect
from toolwire import tool
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

SEARCH = {
    "type": "tool_search_call",
    "id": "ts_1",
    "call_id": "call_ts",
    "execution": "client",
    "status": "completed",
    "arguments": {"query": "calendar"},
}
FOUND = [{"type": "function", "name": "book", "parameters": {"type": "object"}}]


def searching() -> Scenario:
    item = {"dialect": "openai-responses", "item": SEARCH, "after": "calls"}
    return Scenario.from_dict({"turns": [{"provider_items": [item]}, {"text": "found them"}]})


async def test_a_client_tool_search_is_answered_by_the_tool_search_hook() -> None:
    asked: list[Any] = []

    @tool(name="tool_search")
    def tool_search(query: str) -> list[dict[str, Any]]:
        """Find the tools that fit a query.

        Args:
            query: what the tools are for.
        """
        asked.append(query)
        return FOUND

    with EmulationServer(searching()) as server:
        _, result = await collect(agent_for(server, "openai-responses", [tool_search]), "book")
        _, second = server.requests
    assert asked == ["calendar"]
    assert result.output == "found them" and result.turns == 2
    call_item, output = second["input"][-2:]
    assert call_item == SEARCH
    assert output == {
        "type": "tool_search_output",
        "call_id": "call_ts",
        "execution": "client",
        "status": "completed",
        "tools": FOUND,
    }


async def test_without_a_hook_the_model_reads_why_and_the_run_goes_on() -> None:
    with EmulationServer(searching()) as server:
        _, result = await collect(agent_for(server, "openai-responses", []), "book")
        _, second = server.requests
    assert result.turns == 2 and result.output == "found them"  # not finish=stop at turn 1
    output, told = second["input"][-2:]
    assert (output["type"], output["tools"]) == ("tool_search_output", [])
    assert told["role"] == "user" and told["content"].startswith("The tool search call_ts")
    assert "refused" in told["content"]
    assert result.tool_calls[0].result.error == "denied"


async def test_a_steered_response_is_continued_not_answered() -> None:
    scenario = Scenario.from_dict(
        {
            "turns": [
                {"text": "Half", "provider_finish": {"openai-responses": "steered"}},
                {"text": " and the rest"},
            ]
        }
    )
    with EmulationServer(scenario) as server:
        _, result = await collect(agent_for(server, "openai-responses", []), "go")
        _, second = server.requests
    assert result.turns == 1 and result.output.endswith("and the rest")  # one turn
    assert json.dumps(second["input"]).count("Half") == 1  # the steered turn sent back once
