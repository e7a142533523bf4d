"""Steering over a Responses WebSocket: the steer is sent to the provider
(``response.steer``) while the response streams, and the provider's own
successor carries it, or holds it for the request that answers its calls.
The Agent over a real socket against the emulation server, which pauses the
response halfway until the steer arrives (no timing is relied on)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.agent.test_agent_http import close
from tests.agent.test_steering import _StopAtTheSteer
from toolwire import Agent, OpenAIResponses, TurnStarted, TurnSteered, tool
from toolwire.events import ProviderNotice, TextDelta
from toolwire.journal import SQLiteJournal, plan_resume
from toolwire.run import AgentEvent, RunFinished, RunResult
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

LONG = "The first plan, said slowly: " + "step by step, " * 30


def _agent(server: EmulationServer, tools: list[Any], **options: Any) -> Agent:
    provider = OpenAIResponses(
        transport="websocket", base_url=server.url_for("openai-responses"), api_key="sk-test"
    )
    return Agent(provider, model="gpt-test", tools=tools, **options)


async def _steered(agent: Agent, text: str, *, when: type) -> tuple[list[AgentEvent], RunResult]:
    """Run, steering once at the first event of type ``when``."""
    events: list[AgentEvent] = []
    try:
        async for event in agent.stream("plan A", run_id="steered"):
            events.append(event)
            if isinstance(event, when) and len([e for e in events if isinstance(e, when)]) == 1:
                agent.steer("steered", text)
    finally:
        await close(agent)
    last = events[-1]
    assert isinstance(last, RunFinished)
    return events, last.result


def _scenario(*turns: dict[str, Any]) -> Scenario:
    return Scenario.from_dict({"turns": list(turns)})


async def test_a_steer_sent_on_the_socket_is_carried_by_the_providers_successor(
    tmp_path: Path,
) -> None:
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    scenario = _scenario({"text": LONG, "chunk_size": 8}, {"text": "On B, then."})
    with EmulationServer(scenario, socket_pause_in=1) as server:
        agent = _agent(server, [], journal=journal, max_turns=1)
        events, result = await _steered(agent, "talk about B instead", when=TextDelta)
        (log,) = server.sockets
    assert result.output == "On B, then." and result.turns == 1
    (asked,) = server.requests  # the socket's one request: nothing went over HTTP
    assert asked["type"] == "response.create"
    create, steer = log["messages"]  # the successor was not asked for: the server began it
    assert log["responses"] == 2
    assert create["type"] == "response.create"
    assert steer["type"] == "response.steer" and steer["previous_response_id"].startswith("resp_")
    assert steer["input"] == [
        {"type": "message", "role": "user", "content": "talk about B instead"}
    ]
    (event,) = [e for e in events if isinstance(e, TurnSteered)]
    assert (event.how, [s.text for s in event.steers]) == ("provider", ["talk about B instead"])
    notices = [e.type for e in events if isinstance(e, ProviderNotice)]
    assert notices == ["response.steer.accepted"]
    plan = plan_resume(journal.load_run(result.run_id))
    assert plan.usage == result.usage, "both answers of the turn count"
    journal.close()


async def test_a_run_stopped_at_a_socket_steer_says_it_on_its_own_socket(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    scenario = _scenario({"text": LONG, "chunk_size": 8}, {"text": "On B."})
    with EmulationServer(scenario, socket_pause_in=1) as server:
        agent = _agent(server, [], journal=SQLiteJournal(path), observers=[_StopAtTheSteer()])
        with pytest.raises(RuntimeError):
            await _steered(agent, "talk about B instead", when=TextDelta)
    journal = SQLiteJournal(path)
    plan = plan_resume(journal.load_run("steered"))
    assert plan.response is not None and plan.response.finish_reason == "steered"
    assert [s.text for s in plan.response.steers] == ["talk about B instead"]
    with EmulationServer(scenario) as server:  # another process's socket: nothing held there
        again = _agent(server, [], journal=journal)
        result = await again.resume("steered")
        await close(again)
        (resumed,) = server.sockets
    assert result.output == "On B." and result.turns == 1
    (create,) = resumed["messages"]  # the whole context, the steer in it
    assert "previous_response_id" not in create
    assert create["input"][-1] == {"role": "user", "content": "talk about B instead"}
    assert create["input"][-2]["role"] == "assistant"
    journal.close()


async def test_a_pending_steer_is_held_by_the_provider_and_not_sent_again() -> None:
    effects: list[str] = []

    @tool
    def book(room: str) -> str:
        """Book a room.

        Args:
            room: the room.
        """
        effects.append(room)
        return f"room {room} booked"

    call = {"name": "book", "arguments": {"room": "A"}}
    scenario = _scenario({"tool_calls": [call], "chunk_size": 4}, {"text": "booked, and now B"})
    with EmulationServer(scenario, socket_pause_in=1) as server:
        agent = _agent(server, [book])
        # Given before the response began: sent as soon as it streams.
        events, result = await _steered(agent, "then book B", when=TurnStarted)
        (log,) = server.sockets
    assert effects == ["A"] and result.output == "booked, and now B" and result.turns == 2
    create, steer, second = log["messages"]
    assert (create["type"], steer["type"]) == ("response.create", "response.steer")
    # The continuation carries the result only: the provider prepends the steer it holds.
    assert second["previous_response_id"] and [i["type"] for i in second["input"]] == [
        "function_call_output"
    ]
    (event,) = [e for e in events if isinstance(e, TurnSteered)]
    assert (event.turn, event.how, [s.text for s in event.steers]) == (
        1,
        "pending",
        ["then book B"],
    )
    notices = [e.type for e in events if isinstance(e, ProviderNotice)]
    assert notices == ["response.steer.accepted", "response.steer.pending"]


async def test_a_response_the_provider_ends_steered_is_followed_by_its_own_successor() -> None:
    scenario = _scenario({"text": "Half", "steer": "accepted"}, {"text": " and the rest"})
    with EmulationServer(scenario) as server:
        agent = _agent(server, [], max_turns=1)
        events = [e async for e in agent.stream("go")]
        await close(agent)
        (log,) = server.sockets
    result = events[-1].result  # type: ignore[union-attr]
    assert result.turns == 1 and result.output == " and the rest"
    assert [m["type"] for m in log["messages"]] == ["response.create"]
    assert log["responses"] == 2
    (event,) = [e for e in events if isinstance(e, TurnSteered)]
    assert (event.how, event.steers) == ("provider", ())


async def test_a_steer_on_a_socket_dropped_mid_run_is_said_over_http(tmp_path: Path) -> None:
    # The socket closes after the first response, whose steer went pending:
    # the provider's hold is lost with it, so the steer goes whole over HTTP.
    @tool
    def book(room: str) -> str:
        """Book a room.

        Args:
            room: the room.
        """
        return f"room {room} booked"

    call = {"name": "book", "arguments": {"room": "A"}}
    scenario = _scenario({"tool_calls": [call], "chunk_size": 4}, {"text": "ok"})
    with EmulationServer(scenario, socket_pause_in=1, socket_close_after=1) as server:
        agent = _agent(server, [book])
        _, result = await _steered(agent, "then book B", when=TurnStarted)
        over_socket, over_http = server.requests
    assert result.output == "ok"
    assert over_socket["type"] == "response.create" and "type" not in over_http
    assert over_http["input"][-1] == {"role": "user", "content": "then book B"}


class _SteerAgain:
    """An observer that steers the run once more when its first steer took
    effect, before the successor is asked (in the run's own task)."""

    def __init__(self, text: str) -> None:
        self.text, self.agent = text, None

    async def turn_steered(self, run_id: str, turn: int, steered: TurnSteered) -> None:
        if self.agent is not None and steered.steers[0].text != self.text:
            self.agent.steer(run_id, self.text)


async def test_a_refused_steer_is_said_to_the_successor_and_later_ones_cut() -> None:
    # The server refuses every steer: the first is warned of and said by
    # toolwire itself to the successor; the run's later steers cut the stream.
    scenario = _scenario(
        {"text": LONG, "chunk_size": 8}, {"text": LONG, "chunk_size": 8}, {"text": "On C."}
    )
    again = _SteerAgain("no, C")
    with EmulationServer(scenario, socket_pause_in=1, socket_refuse_steers=True) as server:
        agent = again.agent = _agent(server, [], journal=False, max_turns=1, observers=[again])
        events, result = await _steered(agent, "talk about B instead", when=TextDelta)
        first, second = server.sockets  # the cut left the first socket mid-response
    assert (result.output, result.turns) == ("On C.", 1)
    create, steer, told_b = first["messages"]
    assert (create["type"], steer["type"]) == ("response.create", "response.steer")
    assert told_b["input"][-1] == {"role": "user", "content": "talk about B instead"}
    (told_c,) = second["messages"]  # the later steer was not sent on the socket
    assert told_c["input"][-1] == {"role": "user", "content": "no, C"}
    notices = [e.type for e in events if isinstance(e, ProviderNotice)]
    assert notices == ["response.steer.failed"]
    steered = [(e.how, [s.text for s in e.steers]) for e in events if isinstance(e, TurnSteered)]
    assert steered == [("cut", ["talk about B instead"]), ("cut", ["no, C"])]
