"""OpenAI's 2025-26 items end to end: the Agent over real HTTP against the
emulation server, in Chat Completions and Responses."""

from __future__ import annotations

from typing import Any

import pytest

from tests.agent.test_agent_http import agent_for, collect
from toolwire import tool
from toolwire.errors import UsageError
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

OPENAI = ["openai-chat", "openai-responses"]
PATCH = '*** Begin Patch\n*** Update File: app.py\n-print("hi")\n+print("héllo")\n*** End Patch'


def patch_tool(applied: list[str]) -> Any:
    @tool(freeform={"syntax": "lark", "definition": 'start: "*** Begin Patch" /(.|\\n)*/'})
    def apply_patch(input: str) -> str:
        """Apply a patch in the V4A format.

        Args:
            input: the patch.
        """
        applied.append(input)
        return f"applied {len(input.splitlines())} lines"

    return apply_patch


@pytest.mark.parametrize("name", OPENAI)
async def test_a_custom_tool_is_declared_streamed_run_and_answered(name: str) -> None:
    applied: list[str] = []
    scenario = Scenario.from_dict(
        {
            "turns": [
                {
                    "tool_calls": [{"name": "apply_patch", "arguments": PATCH, "custom": True}],
                    "chunk_size": 7,
                },
                {"text": "Done: {result:0}"},
            ]
        }
    )
    with EmulationServer(scenario) as server:
        _, result = await collect(agent_for(server, name, [patch_tool(applied)]), "fix app.py")
        first, second = server.requests
    assert applied == [PATCH]
    assert result.output == "Done: applied 5 lines"
    if name == "openai-responses":
        (declared,) = first["tools"]
        assert declared["type"] == "custom" and declared["format"]["type"] == "grammar"
        kinds = [item.get("type") for item in second["input"]]
        assert kinds[-2:] == ["custom_tool_call", "custom_tool_call_output"]
        assert second["input"][-2]["input"] == PATCH
    else:
        (declared,) = first["tools"]
        assert declared["type"] == "custom"
        assert declared["custom"]["format"]["grammar"]["syntax"] == "lark"
        call = second["messages"][-2]["tool_calls"][0]
        assert call["type"] == "custom" and call["custom"]["input"] == PATCH
        assert second["messages"][-1]["role"] == "tool"


def test_a_freeform_tool_takes_one_string_named_input() -> None:
    with pytest.raises(UsageError, match="input: str"):

        @tool(freeform=True)
        def bad(patch: str) -> str:
            """Bad."""
            return patch

    with pytest.raises(UsageError, match="grammar"):

        @tool(freeform={"syntax": "peg", "definition": "x"})
        def also_bad(input: str) -> str:
            """Also bad."""
            return input
