"""Anthropic toolsets (``computer_toolset_20260801``, ``browser_toolset_20260801``):
each action a ``tool_use`` named after it with its ``toolset_name``, routed to
the toolset's one handler, or refused to the model when none is registered."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.types import ComputerToolset20260801Param, ToolsetToolUseBlock

import toolwire
from tests.agent.test_agent_http import agent_for, collect
from toolwire import StreamDecoder
from toolwire.errors import UsageError
from toolwire.messages import AssistantMessage
from toolwire.providers import Anthropic
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

CLICK = {"coordinate": [10, 20]}


def clicking(*toolsets: str) -> Scenario:
    calls = [
        {
            "name": "left_click",
            "arguments": CLICK,
            "provider_fields": {"anthropic-messages": {"toolset_name": toolset}},
        }
        for toolset in toolsets
    ]
    return Scenario.from_dict({"turns": [{"tool_calls": calls}, {"text": "{result:0}"}]})


def test_the_sdk_shapes() -> None:
    block = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "left_click",
        "input": CLICK,
        "caller": {"type": "direct"},
        "toolset_name": "computer",
    }
    from pydantic import TypeAdapter

    parsed = TypeAdapter(ToolsetToolUseBlock).validate_python(block)
    assert type(parsed).__name__ == "ComputerLeftClickToolUseBlock"
    entry: ComputerToolset20260801Param = {"type": "computer_toolset_20260801"}
    assert entry["type"] == "computer_toolset_20260801"


def test_a_toolset_action_decodes_to_its_call_and_goes_back_whole() -> None:
    block = {"type": "tool_use", "id": "toolu_1", "name": "left_click", "input": {}}
    events = [
        {"type": "message_start", "message": {"id": "m", "content": [], "usage": {}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {**block, "toolset_name": "computer"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"coordinate": [10, 20]}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
        {"type": "message_stop"},
    ]
    decoder = StreamDecoder("anthropic-messages")
    decoder.feed("".join(f"data: {json.dumps(e)}\n\n" for e in events).encode())
    decoder.close()
    (choice,) = decoder.result().choices
    (call,) = choice.tool_calls
    assert (call.name, call.arguments, choice.finish_reason) == ("left_click", CLICK, "tool_calls")
    marks = [i for i in choice.provider_state if i.get("asked") == "toolset"]
    assert [(m["call_id"], m["toolset"]) for m in marks] == [("toolu_1", "computer")]
    body = Anthropic(api_key="k").build_request(
        model="m", messages=[AssistantMessage.from_choice(choice)]
    )
    (sent,) = body.json["messages"][0]["content"]
    assert sent == {**block, "input": CLICK, "toolset_name": "computer"}


async def test_actions_go_to_their_toolsets_handler() -> None:
    done: list[tuple[str, dict[str, Any]]] = []

    @toolwire.toolset("computer")
    def computer(action: str, input: dict[str, Any]) -> str:
        """Act on the virtual desktop."""
        done.append((action, input))
        return f"{action} done"

    with EmulationServer(clicking("computer")) as server:
        agent = agent_for(server, "anthropic", [computer])
        _, result = await collect(agent, "click it")
        first, second = server.requests
    assert done == [("left_click", CLICK)]
    assert result.output == "left_click done"
    assert first["tools"] == [{"type": "computer_toolset_20260801"}]
    (use,) = second["messages"][1]["content"]
    assert (use["name"], use["toolset_name"]) == ("left_click", "computer")
    (answer,) = second["messages"][2]["content"]
    assert (answer["tool_use_id"], answer["content"]) == (use["id"], "left_click done")


async def test_an_action_of_a_toolset_with_no_handler_is_refused_to_the_model() -> None:
    @toolwire.toolset("computer")
    def computer(action: str, input: dict[str, Any]) -> str:
        """Act on the virtual desktop."""
        return "never for the browser"

    with EmulationServer(clicking("browser")) as server:
        _, result = await collect(agent_for(server, "anthropic", [computer]), "click it")
        _, second = server.requests
    (answer,) = second["messages"][2]["content"]
    assert answer["is_error"] is True
    assert "no handler for the 'browser' toolset" in answer["content"]
    assert "'left_click' action was refused" in answer["content"]
    assert result.tool_calls[0].result.error == "denied"


def test_a_toolset_name_is_checked() -> None:
    with pytest.raises(UsageError, match="invalid toolset name"):
        toolwire.toolset("Computer Use")
    with pytest.raises(UsageError, match="invalid toolset version"):
        toolwire.toolset("computer", version="2026-08-01")
