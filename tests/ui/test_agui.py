"""toolwire.ui.agui: the AG-UI app over a real agent, its model the emulation
server on loopback, its journal a real SQLite file; each event read back
through ag-ui-protocol's own types."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from ag_ui.core import Event
from pydantic import TypeAdapter

import toolwire
from toolwire.errors import UsageError
from toolwire.journal import recorded_decisions
from toolwire.testing import EmulationServer
from toolwire.ui import agui

from ._demo import EXTERNAL_TURNS, PAID, make_agent, make_external_agent, sse_data, start_model

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


@pytest.fixture
def model() -> Iterator[EmulationServer]:
    server = start_model()
    try:
        yield server
    finally:
        server.stop()


def post(agent: toolwire.Agent, body: dict[str, Any], **headers: str) -> list[dict[str, Any]]:
    """POST ``body`` to the agent's AG-UI app; every event, each checked
    against ag-ui-protocol's types."""

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=agui.app(agent))
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://ui") as client:
                return await client.post("/", json=body, headers=headers)
        finally:
            await agent.aclose()  # its connections belong to this event loop

    import anyio

    response = anyio.run(go)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_data(response.text)
    for event in events:
        EVENTS.validate_python(event)
    return events


def run_input(thread: str, run: str, **extra: Any) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": "u1", "role": "user", "content": "weather, then pay ann"}],
        **extra,
    }


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def arguments_sent(events: list[dict[str, Any]]) -> dict[str, Any]:
    """Each call's arguments, from its TOOL_CALL_ARGS, by call id."""
    text: dict[str, str] = {}
    for event in of(events, "TOOL_CALL_ARGS"):
        text[event["toolCallId"]] = text.get(event["toolCallId"], "") + event["delta"]
    return {call: json.loads(value) for call, value in text.items()}


@pytest.mark.parametrize("dialect", ["openai-chat", "gemini"])
def test_a_run_streams_text_parallel_calls_with_arguments_and_ends_in_an_interrupt(
    model: EmulationServer, tmp_path: Path, dialect: str
) -> None:
    # Gemini sends each call's arguments whole: TOOL_CALL_ARGS carries them all the same.
    agent = make_agent(model, tmp_path / "j.sqlite3", dialect=dialect)
    thread = uuid.uuid4().hex
    events = post(agent, run_input(thread, "r1"))

    kinds = [e["type"] for e in events]
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
    assert events[0]["threadId"] == thread and events[0]["runId"] == "r1"
    assert "".join(e["delta"] for e in of(events, "TEXT_MESSAGE_CONTENT")) == (
        "Checking the weather."
    )
    assert "".join(e["delta"] for e in of(events, "REASONING_MESSAGE_CONTENT")) == (
        "two cities, then the payment"
    )
    starts = of(events, "TOOL_CALL_START")
    assert [s["toolCallName"] for s in starts] == ["get_weather", "get_weather", "send_payment"]
    ids = [s["toolCallId"] for s in starts]
    assert [e["toolCallId"] for e in of(events, "TOOL_CALL_END")] == ids
    sent = arguments_sent(events)
    assert [sent[i] for i in ids] == [
        {"city": "Paris"},
        {"city": "Rome"},
        {"to": "ann", "amount_cents": 1250},
    ]
    results = {e["toolCallId"]: e["content"] for e in of(events, "TOOL_CALL_RESULT")}
    assert results == {ids[0]: "sunny in Paris", ids[1]: "sunny in Rome"}
    steps = [(e["type"], e["stepName"]) for e in events if e["type"].startswith("STEP_")]
    assert steps == [
        ("STEP_STARTED", "turn 1"),
        ("STEP_FINISHED", "turn 1"),
        ("STEP_STARTED", "turn 2"),
        ("STEP_FINISHED", "turn 2"),
    ]

    # The interrupt names the pending call and its digest, as the journal has them.
    (waiting,) = agent.pending(thread)
    (interrupt,) = events[-1]["outcome"]["interrupts"]
    assert events[-1]["outcome"]["type"] == "interrupt"
    assert interrupt["toolCallId"] == ids[2] == waiting.call_id
    assert interrupt["id"] == f"{waiting.digest}/{waiting.call_id}"
    assert interrupt["metadata"]["toolwire"]["digest"] == waiting.digest
    assert interrupt["metadata"]["toolwire"]["arguments"] == {"to": "ann", "amount_cents": 1250}


def test_a_reload_rebuilds_the_conversation_and_the_interrupt_from_the_journal(
    model: EmulationServer, tmp_path: Path
) -> None:
    journal = tmp_path / "j.sqlite3"
    thread = uuid.uuid4().hex
    first = post(make_agent(model, journal), run_input(thread, "r1"))
    # Another agent (another process, as after a restart), no messages sent.
    again = post(make_agent(model, journal), run_input(thread, "r2", messages=[]))

    assert [e["type"] for e in again] == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
    assert again[-1]["outcome"] == first[-1]["outcome"]
    messages = again[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "assistant"]
    calls = messages[-1]["toolCalls"]
    assert [c["function"]["name"] for c in calls] == ["send_payment"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"to": "ann", "amount_cents": 1250}


def test_an_approval_sent_back_runs_the_call_and_is_journaled_with_who_gave_it(
    model: EmulationServer, tmp_path: Path
) -> None:
    agent = make_agent(model, tmp_path / "j.sqlite3")
    thread = uuid.uuid4().hex
    (interrupt,) = post(agent, run_input(thread, "r1"))[-1]["outcome"]["interrupts"]
    PAID.clear()
    resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]
    events = post(agent, run_input(thread, "r2", resume=resume))

    assert events[0]["type"] == "RUN_STARTED" and events[0]["runId"] == "r2"
    (result,) = of(events, "TOOL_CALL_RESULT")
    assert result["toolCallId"] == interrupt["toolCallId"]
    assert result["content"] == "sent 1250 to ann"
    assert events[-1]["type"] == "RUN_FINISHED" and "outcome" not in events[-1]
    assert events[-1]["result"] == "Done: sent 1250 to ann"
    assert PAID == [("ann", 1250)]
    (decision,) = recorded_decisions(agent.journal.load_run(thread))  # type: ignore[union-attr]
    assert decision.decision == "allow" and decision.principal == "ag-ui 127.0.0.1"


def test_a_call_left_unanswered_is_denied(model: EmulationServer, tmp_path: Path) -> None:
    agent = make_agent(model, tmp_path / "j.sqlite3")
    thread = uuid.uuid4().hex
    post(agent, run_input(thread, "r1"))
    PAID.clear()
    # An answer that says nothing, for an interrupt not asked for, approves nothing.
    resume = [{"interruptId": "other", "status": "resolved", "payload": {"approved": True}}]
    events = post(agent, run_input(thread, "r2", resume=resume))

    assert PAID == []
    (result,) = of(events, "TOOL_CALL_RESULT")
    assert "not approved" in result["content"]
    (decision,) = recorded_decisions(agent.journal.load_run(thread))  # type: ignore[union-attr]
    assert decision.decision == "deny"


def test_an_approval_of_other_arguments_is_refused_and_nothing_runs(
    model: EmulationServer, tmp_path: Path
) -> None:
    agent = make_agent(model, tmp_path / "j.sqlite3")
    thread = uuid.uuid4().hex
    (interrupt,) = post(agent, run_input(thread, "r1"))[-1]["outcome"]["interrupts"]
    PAID.clear()
    forged = "sha256:" + "0" * 64 + "/" + interrupt["toolCallId"]
    resume = [{"interruptId": forged, "status": "resolved", "payload": {"approved": True}}]
    events = post(agent, run_input(thread, "r2", resume=resume))

    assert events[-1]["type"] == "RUN_ERROR" and events[-1]["code"] == "digest"
    assert PAID == [] and len(agent.pending(thread)) == 1
    # The page can still answer with the interrupt it was given.
    resume[0]["interruptId"] = interrupt["id"]
    assert post(agent, run_input(thread, "r3", resume=resume))[-1]["type"] == "RUN_FINISHED"
    assert PAID == [("ann", 1250)]


def test_the_next_message_on_a_finished_thread_starts_the_threads_next_run(
    tmp_path: Path,
) -> None:
    model = start_model([{"text": "one"}, {"text": "two"}])
    try:
        agent = make_agent(model, tmp_path / "j.sqlite3")
        thread = uuid.uuid4().hex
        first = post(agent, run_input(thread, "r1"))
        history = [
            {"id": "u1", "role": "user", "content": "say one"},
            {"id": "a1", "role": "assistant", "content": first[-1]["result"]},
            {"id": "u2", "role": "user", "content": "say two"},
        ]
        second = post(agent, run_input(thread, "r2", messages=history))
    finally:
        model.stop()
    assert first[-1]["result"] == "one" and second[-1]["result"] == "two"
    assert second[0]["metadata"]["toolwire"]["runId"] == f"{thread}~2"


def test_a_body_that_is_not_a_run_input_is_refused(model: EmulationServer, tmp_path: Path) -> None:
    async def go() -> httpx.Response:
        app = agui.app(make_agent(model, tmp_path / "j.sqlite3"))
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://ui"
        ) as client:
            return await client.post("/", json={"messages": "no"})

    import anyio

    response = anyio.run(go)
    assert response.status_code == 422 and "RunAgentInput" in response.json()["error"]


def test_an_agent_without_a_journal_is_refused(model: EmulationServer) -> None:
    agent = toolwire.Agent(
        toolwire.OpenAIChat(base_url=model.url_for("openai-chat"), api_key="k"),
        model="demo",
        journal=False,
    )
    with pytest.raises(UsageError, match="journal"):
        agui.app(agent)


def test_an_external_tools_result_comes_back_in_the_resume(tmp_path: Path) -> None:
    model = start_model(EXTERNAL_TURNS)
    try:
        agent = make_external_agent(model, tmp_path / "j.sqlite3")
        thread = uuid.uuid4().hex
        (interrupt,) = post(agent, run_input(thread, "r1"))[-1]["outcome"]["interrupts"]
        assert interrupt["reason"] == "tool_result"
        assert interrupt["metadata"]["toolwire"]["awaiting"] == "result"
        resume = [
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"result": "teal"}}
        ]
        events = post(agent, run_input(thread, "r2", resume=resume))
    finally:
        model.stop()
    assert events[-1]["result"] == "You picked teal."
    (decision,) = recorded_decisions(agent.journal.load_run(thread))  # type: ignore[union-attr]
    assert decision.decision == "result" and decision.principal == "ag-ui 127.0.0.1"
