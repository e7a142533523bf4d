"""OpenAI's 2025-26 items end to end: the Agent over real HTTP against the
emulation server, in Chat Completions and Responses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent.test_agent_http import agent_for, collect
from toolwire import tool
from toolwire.errors import StreamErrorEvent, UsageError
from toolwire.testing import EmulationServer, Scenario
from toolwire.tools import Approval, ApprovalRequest

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


MCP_REQUEST = {
    "type": "mcp_approval_request",
    "id": "mcpr_1",
    "name": "create_issue",
    "arguments": '{"title": "Crash on start"}',
    "server_label": "tracker",
}


def responses_items(*items: dict[str, Any]) -> list[dict[str, Any]]:
    """A turn's OpenAI Responses output items, after its calls."""
    return [{"dialect": "openai-responses", "item": item, "after": "calls"} for item in items]


def test_a_turns_items_are_still_read_as_responses_provider_items() -> None:
    with pytest.warns(DeprecationWarning, match="provider_items"):
        old = Scenario.from_dict({"turns": [{"items": [MCP_REQUEST]}]})
    assert old == Scenario.from_dict({"turns": [{"provider_items": responses_items(MCP_REQUEST)}]})


@pytest.mark.parametrize("allow", [True, False])
async def test_an_mcp_approval_request_goes_to_the_approval_callback(allow: bool) -> None:
    asked: list[tuple[str, str, dict[str, Any], Any]] = []

    def approve(request: ApprovalRequest) -> Approval:
        asked.append(
            (request.call_id, request.tool_name, request.arguments, request.metadata["mcp_server"])
        )
        return Approval.allow() if allow else Approval.deny("not on a Friday")

    scenario = Scenario.from_dict(
        {
            "turns": [
                {"provider_items": responses_items(MCP_REQUEST)},
                {"text": "The tracker said: {result:0}"},
            ]
        }
    )
    with EmulationServer(scenario) as server:
        agent = agent_for(server, "openai-responses", [], approve=approve)
        _, result = await collect(agent, "file the crash")
        _, second = server.requests
    assert asked == [("mcpr_1", "create_issue", {"title": "Crash on start"}, "tracker")]
    request_item, answer = second["input"][-2:]
    assert request_item == MCP_REQUEST
    assert answer["type"] == "mcp_approval_response"
    assert answer["approval_request_id"] == "mcpr_1"
    assert answer["approve"] is allow
    if allow:
        assert result.output == "The tracker said: approved"
    else:
        assert "not on a Friday" in answer["reason"]
        assert result.output.startswith("The tracker said: denied")


@pytest.mark.parametrize("allow", [True, False])
async def test_without_an_approval_callback_an_mcp_request_suspends_the_run(
    allow: bool, tmp_path: Path
) -> None:
    # As a requires_approval tool does: the run waits, nothing is denied for want of a callback.
    from tests.journal._support import make_agent
    from toolwire.journal import Decision, SQLiteJournal, pending_calls

    scenario = Scenario.from_dict(
        {"turns": [{"provider_items": responses_items(MCP_REQUEST)}, {"text": "{result:0}"}]}
    )
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    with EmulationServer(scenario) as server:
        agent = make_agent(server, [], journal=journal, provider="openai-responses")
        try:
            result = await agent.run("file it", run_id="run-mcp")
            assert result.outcome == "suspended" and len(server.requests) == 1
            (pending,) = result.pending
            assert (pending.call_id, pending.name, pending.awaiting, pending.arguments) == (
                "mcpr_1",
                "create_issue",
                "approval",
                {"title": "Crash on start"},
            )
            assert pending_calls(journal.load_run("run-mcp")) == (pending,)
            decision = (
                Decision.allow(pending, principal="ops")
                if allow
                else Decision.deny(pending, "not this one", principal="ops")
            )
            resumed = await agent.resume("run-mcp", approvals=[decision])
        finally:
            await agent.aclose()
        _, second = server.requests
    answer = second["input"][-1]
    assert answer["type"] == "mcp_approval_response" and answer["approve"] is allow
    assert resumed.outcome == "answered"
    assert resumed.output.startswith("approved" if allow else "denied")


SHELL_CALL = {
    "type": "shell_call",
    "id": "sh_1",
    "call_id": "call_sh",
    "status": "completed",
    "action": {"commands": ["ls -la"], "timeout_ms": 1000, "max_output_length": 4096},
}


async def test_a_shell_call_is_refused_by_default_in_its_own_output_shape() -> None:
    scenario = Scenario.from_dict(
        {"turns": [{"provider_items": responses_items(SHELL_CALL)}, {"text": "ok"}]}
    )
    with EmulationServer(scenario) as server:
        _, result = await collect(agent_for(server, "openai-responses", []), "list files")
        _, second = server.requests
    call_item, output = second["input"][-2:]
    assert call_item == SHELL_CALL
    assert output["type"] == "shell_call_output" and output["call_id"] == "call_sh"
    (content,) = output["output"]
    assert content["outcome"] == {"type": "exit", "exit_code": 1}
    assert "refused" in content["stderr"]
    assert result.tool_calls[0].result.error == "denied"


async def test_a_shell_call_runs_the_applications_shell_tool() -> None:
    ran: list[Any] = []

    @tool(name="shell")
    def shell(action: dict[str, Any]) -> str:
        """Run shell commands in a sandbox.

        Args:
            action: the commands to run.
        """
        ran.append(action["commands"])
        return "a.txt\nb.txt"

    scenario = Scenario.from_dict(
        {"turns": [{"provider_items": responses_items(SHELL_CALL)}, {"text": "{result:0}"}]}
    )
    with EmulationServer(scenario) as server:
        _, result = await collect(agent_for(server, "openai-responses", [shell]), "list files")
        _, second = server.requests
    assert ran == [["ls -la"]]
    assert json.loads(result.output)[0]["stdout"] == "a.txt\nb.txt"  # the server's echo
    (content,) = second["input"][-1]["output"]
    assert content["stdout"] == "a.txt\nb.txt" and content["outcome"]["exit_code"] == 0


def lookup_tool(seen: list[str]) -> Any:
    @tool(read_only=True)
    def lookup(city: str) -> str:
        """Look a city up.

        Args:
            city: the city.
        """
        seen.append(city)
        return f"{city}: sunny"

    return lookup


async def test_gemini_thought_signatures_go_back_over_the_compatible_endpoint() -> None:
    """Gemini 3 answers HTTP 400 to a call sent back without its signature."""
    extra = {"google": {"thought_signature": "Q2lR...c2ln"}}
    call = {"name": "lookup", "arguments": {"city": "Paris"}, "fields": {"extra_content": extra}}
    scenario = Scenario.from_dict({"turns": [{"tool_calls": [call]}, {"text": "{result:0}"}]})
    seen: list[str] = []
    with EmulationServer(scenario) as server:
        agent = agent_for(server, "openai-chat", [lookup_tool(seen)])
        _, result = await collect(agent, "weather in Paris?")
        _, second = server.requests
    assert seen == ["Paris"] and result.output == "Paris: sunny"
    (sent,) = second["messages"][-2]["tool_calls"]
    assert sent["extra_content"] == extra


async def test_state_items_caller_and_namespace_go_back_in_place() -> None:
    state = [
        {
            "type": "tool_search_call",
            "id": "ts_1",
            "call_id": None,
            "execution": "server",
            "status": "completed",
            "arguments": {"query": "weather"},
        },
        {
            "type": "tool_search_output",
            "id": "tso_1",
            "call_id": None,
            "execution": "server",
            "status": "completed",
            "tools": [],
        },
        {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAA..."},
    ]
    fields = {"namespace": "weather", "caller": {"type": "direct"}}
    call = {"name": "lookup", "arguments": {"city": "Oslo"}, "fields": fields}
    scenario = Scenario.from_dict(
        {
            "turns": [
                {"tool_calls": [call], "provider_items": responses_items(*state)},
                {"text": "{result:0}"},
            ]
        }
    )
    seen: list[str] = []
    with EmulationServer(scenario) as server:
        agent = agent_for(server, "openai-responses", [lookup_tool(seen)])
        _, result = await collect(agent, "weather in Oslo?")
        _, second = server.requests
    assert result.output == "Oslo: sunny"
    sent = second["input"][1:]
    assert [item.get("type") for item in sent] == [
        "function_call",
        "tool_search_call",
        "tool_search_output",
        "compaction",
        "function_call_output",
    ]
    assert sent[0]["namespace"] == "weather" and sent[0]["caller"] == {"type": "direct"}
    assert sent[1:4] == state


async def test_an_in_band_error_chunk_fails_the_turn_and_runs_no_call(tmp_path: Path) -> None:
    """OpenRouter's error object beside ordinary choices, after HTTP 200."""
    head = {"id": "gen-1", "model": "m", "object": "chat.completion.chunk"}
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "lookup", "arguments": '{"city": "Rome"}'},
    }
    chunks = [
        {**head, "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]},
        {
            **head,
            "error": {"code": 502, "message": "Upstream error"},
            "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
        },
    ]
    body = tmp_path / "inband.sse"
    body.write_text("".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n")
    seen: list[str] = []
    with EmulationServer(Scenario.replay_file(body)) as server:
        agent = agent_for(server, "openai-chat", [lookup_tool(seen)])
        with pytest.raises(StreamErrorEvent) as caught:
            await agent.run("weather in Rome?")
        await agent.aclose()
    assert caught.value.status_code == 502 and caught.value.message == "Upstream error"
    assert seen == []


async def test_an_mcp_approval_is_journaled_and_not_asked_again_on_resume(
    tmp_path: Path,
) -> None:
    from tests.journal._support import CrashAt, expect_crash, make_agent
    from toolwire.journal import JournalObserver, SQLiteJournal

    asked: list[str] = []

    def approve(request: ApprovalRequest) -> Approval:
        asked.append(request.call_id)
        return Approval.allow()

    scenario = Scenario.from_dict(
        {
            "turns": [
                {"provider_items": responses_items(MCP_REQUEST)},
                {"text": "The tracker said: {result:0}"},
            ]
        }
    )
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    with EmulationServer(scenario) as server:
        # The process dies once the approval is answered, before the answer is sent.
        first = make_agent(
            server,
            [],
            journal=False,
            observers=[JournalObserver(journal), CrashAt("model_request", nth=2)],
            provider="openai-responses",
            approve=approve,
        )
        await expect_crash(first.run("file the crash", run_id="run-1"))
        await first.aclose()
        second = make_agent(
            server, [], journal=journal, provider="openai-responses", approve=approve
        )
        try:
            result = await second.resume("run-1")
        finally:
            await second.aclose()
        requests = list(server.requests)
    assert asked == ["mcpr_1"], "the approval was asked once, and reused on resume"
    assert result.output == "The tracker said: approved"
    answer = requests[-1]["input"][-1]
    assert answer["type"] == "mcp_approval_response" and answer["approve"] is True
    kinds = [(e.kind, e.call_id) for e in journal.load_run("run-1").events if e.call_id]
    assert kinds == [("approval", "mcpr_1"), ("tool_intent", "mcpr_1"), ("tool_outcome", "mcpr_1")]
