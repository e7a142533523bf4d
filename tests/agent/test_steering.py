"""Steering a run while it streams (``Agent.steer``): the response is cut or
ended ``steered``, its successor continues the same turn with the steer's
text, a pending steer waits for the calls' results, and every steer is
journaled. The Agent over real HTTP against the emulation server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agent.test_agent_http import agent_for, close
from toolwire import Agent, TurnSteered, tool
from toolwire.errors import UsageError
from toolwire.events import ProviderNotice, TextDelta
from toolwire.journal import SQLiteJournal, SteerApplied, plan_resume
from toolwire.run import AgentEvent, RunFinished, RunResult
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

LONG = "The first plan, said slowly: " + "step by step, " * 30
NAME = "openai-responses"


def turns(*given: dict[str, Any]) -> Scenario:
    return Scenario.from_dict({"turns": list(given)})


async def steered_run(
    agent: Agent, text: str = "talk about B instead", *, when: type = TextDelta
) -> tuple[list[AgentEvent], RunResult]:
    """Run, steering once at the first event of type ``when``."""
    events: list[AgentEvent] = []
    sent = False
    try:
        async for event in agent.stream("plan A", run_id="steered"):
            events.append(event)
            if isinstance(event, when) and not sent:
                agent.steer("steered", text)
                sent = True
    finally:
        await close(agent)
    last = events[-1]
    assert isinstance(last, RunFinished)
    return events, last.result


async def test_a_steer_cuts_the_response_and_its_successor_is_the_same_turn(
    tmp_path: Path,
) -> None:
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    scenario = turns({"text": LONG, "chunk_size": 4, "delay": 0.02}, {"text": "On B, then."})
    with EmulationServer(scenario) as server:
        agent = agent_for(server, NAME, [], journal=journal, max_turns=1)
        events, result = await steered_run(agent)
        _, second = server.requests
    assert result.output == "On B, then." and result.outcome == "answered"
    assert result.turns == 1, "a steered response and its successor are one turn"
    said, steer = second["input"][-2:]
    assert steer == {"role": "user", "content": "talk about B instead"}
    assert said["role"] == "assistant" and LONG.startswith(said["content"])
    assert len(said["content"]) < len(LONG), "the response was cut, not read to its end"
    (event,) = [e for e in events if isinstance(e, TurnSteered)]
    assert (event.turn, event.how, [s.text for s in event.steers]) == (
        1,
        "cut",
        ["talk about B instead"],
    )
    log = journal.load_run(result.run_id)
    steers = [e for e in log.events if isinstance(e.record, SteerApplied)]
    assert [(e.turn, e.record.text, e.record.how) for e in steers] == [
        (1, "talk about B instead", "cut")
    ]
    kinds = [e.kind for e in log.events]
    assert kinds.index("steer") < len(kinds) - 1 - kinds[::-1].index("model_request")
    journal.close()


async def test_a_response_the_provider_steers_is_continued_as_one_turn(tmp_path: Path) -> None:
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    scenario = turns({"text": "Half", "steer": "accepted"}, {"text": " and the rest"})
    with EmulationServer(scenario) as server:
        agent = agent_for(server, NAME, [], max_turns=1, journal=journal)
        events: list[AgentEvent] = [e async for e in agent.stream("go")]
        await close(agent)
        _, second = server.requests
    result = events[-1].result  # type: ignore[union-attr]
    assert result.turns == 1 and result.output == " and the rest"
    notices = [e for e in events if isinstance(e, ProviderNotice)]
    assert [n.type for n in notices] == ["response.steer.accepted"]
    (event,) = [e for e in events if isinstance(e, TurnSteered)]
    assert (event.how, event.steers) == ("provider", ())
    assert second["input"][-1] == {"role": "assistant", "content": "Half"}
    # Both answers of the turn count in what the journal says the run used.
    plan = plan_resume(journal.load_run(result.run_id))
    assert plan.usage == result.usage and result.usage.output_tokens == 1 + 3
    journal.close()


async def test_a_steer_waits_for_the_calls_and_follows_their_results() -> None:
    effects: list[str] = []

    @tool(asynchronous=True)
    def book(room: str) -> str:
        """Book a room.

        Args:
            room: the room.
        """
        effects.append(room)
        return f"room {room} booked"

    call = {"name": "book", "arguments": {"room": "A"}, "fields": {"async": True}}
    scenario = turns(
        {"tool_calls": [call], "text": LONG, "chunk_size": 4, "delay": 0.01, "steer": "pending"},
        {"text": "booked, and now B"},
    )
    with EmulationServer(scenario) as server:
        agent = agent_for(server, NAME, [book])
        events, result = await steered_run(agent, "then book B")
        _, second = server.requests
    assert effects == ["A"], "the call ran once; the pending steer reran nothing"
    assert result.turns == 2 and result.output == "booked, and now B"
    *_, output, steer = second["input"]
    assert output["type"] == "function_call_output" and output["output"] == "room A booked"
    assert steer == {"role": "user", "content": "then book B"}
    (event,) = [e for e in events if isinstance(e, TurnSteered)]
    assert (event.turn, event.how) == (1, "pending")
    pending = [n for n in events if isinstance(n, ProviderNotice)]
    assert [n.type for n in pending] == ["response.steer.pending"]


async def test_a_failed_steer_is_a_warning_and_the_answer_stands() -> None:
    with EmulationServer(turns({"text": "as planned", "steer": "failed"})) as server:
        agent = agent_for(server, NAME, [])
        events = [e async for e in agent.stream("go")]
        await close(agent)
    (notice,) = [e for e in events if isinstance(e, ProviderNotice)]
    assert notice.warning and "steering_not_supported" in notice.message
    assert events[-1].result.output == "as planned"  # type: ignore[union-attr]


class _StopAtTheSteer:
    """An observer told of the steer after the journal: the run stops right
    after the steer was journaled, before its successor was asked."""

    async def turn_steered(self, run_id: str, turn: int, steered: TurnSteered) -> None:
        raise RuntimeError("stopped before the successor")


async def test_a_run_resumed_after_the_steer_says_it_to_the_successor(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    scenario = turns({"text": LONG, "chunk_size": 4, "delay": 0.02}, {"text": "On B."})
    with EmulationServer(scenario) as server:
        agent = agent_for(
            server, NAME, [], journal=SQLiteJournal(path), observers=[_StopAtTheSteer()]
        )
        with pytest.raises(RuntimeError):
            await steered_run(agent)
        journal = SQLiteJournal(path)
        plan = plan_resume(journal.load_run("steered"))
        assert plan.response is not None and plan.response.finish_reason == "steered"
        assert [s.text for s in plan.response.steers] == ["talk about B instead"]
        again = agent_for(server, NAME, [], journal=journal)
        result = await again.resume("steered")
        await close(again)
        last = server.requests[-1]
    assert result.output == "On B." and result.turns == 1
    assert last["input"][-1] == {"role": "user", "content": "talk about B instead"}
    journal.close()


async def test_only_a_live_run_can_be_steered() -> None:
    with EmulationServer(turns({"text": "done"})) as server:
        agent = agent_for(server, NAME, [])
        with pytest.raises(UsageError, match="not running"):
            agent.steer("nobody", "hello")
        await agent.run("go", run_id="over")
        with pytest.raises(UsageError, match="not running"):
            agent.steer("over", "too late")
        await close(agent)


@pytest.mark.parametrize("name", ["openai-chat", "anthropic", "gemini"])
async def test_toolwire_cuts_for_a_steer_on_any_provider(name: str) -> None:
    scenario = turns({"text": LONG, "chunk_size": 4, "delay": 0.02}, {"text": "On B."})
    with EmulationServer(scenario) as server:
        agent = agent_for(server, name, [], max_turns=1)
        events, result = await steered_run(agent)
        count = len(server.requests)
    assert (result.output, result.turns, count) == ("On B.", 1, 2)
    (event,) = [e for e in events if isinstance(e, TurnSteered)]
    assert event.how == "cut"
    said = result.messages[-3]
    assert LONG.startswith(said.text) and len(said.text) < len(LONG)  # type: ignore[union-attr]
    assert result.messages[-2].text == "talk about B instead"  # type: ignore[union-attr]
