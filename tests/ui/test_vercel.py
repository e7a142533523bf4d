"""toolwire.ui.vercel: the UI message stream app over a real agent, its model
the emulation server on loopback, its journal a real SQLite file."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

import toolwire
from toolwire.journal import recorded_decisions
from toolwire.testing import EmulationServer
from toolwire.ui import vercel

from ._demo import EXTERNAL_TURNS, PAID, make_agent, make_external_agent, sse_data, start_model


@pytest.fixture
def model() -> Iterator[EmulationServer]:
    server = start_model()
    try:
        yield server
    finally:
        server.stop()


def call(agent: toolwire.Agent, method: str, path: str, body: Any = None) -> httpx.Response:
    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=vercel.app(agent))
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://ui") as client:
                return await client.request(method, path, json=body)
        finally:
            await agent.aclose()  # its connections belong to this event loop

    return anyio.run(go)


def chat(agent: toolwire.Agent, chat_id: str, messages: list[Any]) -> list[dict[str, Any]]:
    body = {"id": chat_id, "messages": messages, "trigger": "submit-message", "messageId": None}
    response = call(agent, "POST", "/", body)
    assert response.status_code == 200, response.text
    assert response.headers["x-vercel-ai-ui-message-stream"] == "v1"
    assert response.text.endswith("data: [DONE]\n\n")
    return sse_data(response.text)


USER = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "weather, then pay ann"}]}


def of(chunks: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [c for c in chunks if c["type"] == kind]


def approve(messages: list[Any], approved: bool = True) -> list[Any]:
    """What ``addToolApprovalResponse`` does to the waiting part."""
    answered = copy.deepcopy(messages)
    for part in answered[-1]["parts"]:
        if part.get("state") == "approval-requested":
            part["state"] = "approval-responded"
            part["approval"]["approved"] = approved
    return answered


def test_a_run_streams_text_reasoning_tool_input_and_output_and_asks_for_approval(
    model: EmulationServer, tmp_path: Path
) -> None:
    agent = make_agent(model, tmp_path / "j.sqlite3")
    chat_id = uuid.uuid4().hex
    chunks = chat(agent, chat_id, [USER])

    assert chunks[0] == {
        "type": "start",
        "messageId": chat_id,
        "messageMetadata": {"runId": chat_id, "resumed": False},
    }
    assert chunks[-1]["type"] == "finish" and chunks[-1]["finishReason"] == "tool-calls"
    assert "".join(c["delta"] for c in of(chunks, "text-delta")) == "Checking the weather."
    assert "".join(c["delta"] for c in of(chunks, "reasoning-delta")) == (
        "two cities, then the payment"
    )
    available = of(chunks, "tool-input-available")
    assert [(c["toolName"], c["input"]) for c in available] == [
        ("get_weather", {"city": "Paris"}),
        ("get_weather", {"city": "Rome"}),
        ("send_payment", {"to": "ann", "amount_cents": 1250}),
    ]
    started = [c["toolCallId"] for c in of(chunks, "tool-input-start")]
    assert started == [c["toolCallId"] for c in available]
    outputs = {c["toolCallId"]: c["output"] for c in of(chunks, "tool-output-available")}
    assert outputs == {started[0]: "sunny in Paris", started[1]: "sunny in Rome"}
    assert [c["id"] for c in of(chunks, "data-usage")] == ["usage-1", "usage-2"]
    assert of(chunks, "data-usage")[0]["data"]["usage"]["input_tokens"] > 0

    (waiting,) = agent.pending(chat_id)
    (request,) = of(chunks, "tool-approval-request")
    assert request["toolCallId"] == waiting.call_id == started[2]
    assert request["approvalId"] == f"{waiting.digest}/{waiting.call_id}"
    assert request["approvalDescriptor"]["digest"] == waiting.digest


def test_a_reloaded_page_gets_its_messages_from_the_journal_and_its_approval_resumes_the_run(
    model: EmulationServer, tmp_path: Path
) -> None:
    journal = tmp_path / "j.sqlite3"
    chat_id = uuid.uuid4().hex
    chat(make_agent(model, journal), chat_id, [USER])
    PAID.clear()

    # Another process, the page reloaded: the messages come from the journal.
    agent = make_agent(model, journal)
    messages = call(agent, "GET", f"/{chat_id}").json()
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert messages[-1]["id"] == chat_id  # the stream continues this message
    parts = [p for p in messages[-1]["parts"] if p["type"] == "dynamic-tool"]
    assert [(p["toolName"], p["state"]) for p in parts] == [
        ("get_weather", "output-available"),
        ("get_weather", "output-available"),
        ("send_payment", "approval-requested"),
    ]
    assert call(agent, "GET", f"/{chat_id}/stream").status_code == 204

    chunks = chat(agent, chat_id, approve(messages))
    assert chunks[0]["messageId"] == chat_id and chunks[0]["messageMetadata"]["resumed"]
    (response,) = of(chunks, "tool-approval-response")
    assert response["approved"] is True and response["approvalId"] == parts[2]["approval"]["id"]
    (output,) = of(chunks, "tool-output-available")
    assert output["toolCallId"] == parts[2]["toolCallId"]
    assert output["output"] == "sent 1250 to ann"
    assert "".join(c["delta"] for c in of(chunks, "text-delta")) == "Done: sent 1250 to ann"
    assert chunks[-1]["finishReason"] == "stop"
    assert PAID == [("ann", 1250)]
    (decision,) = recorded_decisions(agent.journal.load_run(chat_id))  # type: ignore[union-attr]
    assert decision.decision == "allow" and decision.principal == "ui 127.0.0.1"


def test_an_approval_refused_on_the_page_is_a_denial(
    model: EmulationServer, tmp_path: Path
) -> None:
    agent = make_agent(model, tmp_path / "j.sqlite3")
    chat_id = uuid.uuid4().hex
    chat(agent, chat_id, [USER])
    messages = call(agent, "GET", f"/{chat_id}").json()
    PAID.clear()
    chunks = chat(agent, chat_id, approve(messages, approved=False))

    assert PAID == []
    assert of(chunks, "tool-approval-response")[0]["approved"] is False
    assert len(of(chunks, "tool-output-denied")) == 1


def test_a_page_that_sends_no_answer_is_asked_again(model: EmulationServer, tmp_path: Path) -> None:
    agent = make_agent(model, tmp_path / "j.sqlite3")
    chat_id = uuid.uuid4().hex
    first = of(chat(agent, chat_id, [USER]), "tool-approval-request")
    again = chat(agent, chat_id, [USER])
    assert [c["type"] for c in again] == ["start", "tool-approval-request", "finish"]
    assert of(again, "tool-approval-request") == first
    assert len(agent.pending(chat_id)) == 1


def test_an_approval_naming_other_arguments_is_refused(
    model: EmulationServer, tmp_path: Path
) -> None:
    agent = make_agent(model, tmp_path / "j.sqlite3")
    chat_id = uuid.uuid4().hex
    chat(agent, chat_id, [USER])
    messages = approve(call(agent, "GET", f"/{chat_id}").json())
    for part in messages[-1]["parts"]:
        if part.get("state") == "approval-responded":
            part["approval"]["id"] = "sha256:" + "0" * 64 + "/" + part["toolCallId"]
    PAID.clear()
    chunks = chat(agent, chat_id, messages)
    assert chunks[-1]["type"] == "error" and "refused" in chunks[-1]["errorText"]
    assert PAID == [] and len(agent.pending(chat_id)) == 1


def test_a_body_without_messages_is_refused(model: EmulationServer, tmp_path: Path) -> None:
    response = call(make_agent(model, tmp_path / "j.sqlite3"), "POST", "/", {"id": "x"})
    assert response.status_code == 422


def test_the_pages_messages_become_the_conversation() -> None:
    messages = [
        USER,
        {
            "id": "a1",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {"type": "text", "text": "Checking."},
                {
                    "type": "dynamic-tool",
                    "toolName": "get_weather",
                    "toolCallId": "c1",
                    "state": "output-available",
                    "input": {"city": "Paris"},
                    "output": "sunny",
                },
                {"type": "step-start"},
                {"type": "text", "text": "Sunny."},
            ],
        },
        {"id": "u2", "role": "user", "parts": [{"type": "text", "text": "thanks"}]},
    ]
    conversation = [m.to_dict() for m in vercel.from_ui(messages)]
    assert [m["kind"] for m in conversation] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
        "user",
    ]
    assert conversation[1]["tool_calls"][0]["arguments"] == {"city": "Paris"}
    assert conversation[2]["content"] == "sunny" and conversation[3]["text"] == "Sunny."


def test_an_external_tools_output_given_on_the_page_resumes_the_run(tmp_path: Path) -> None:
    model = start_model(EXTERNAL_TURNS)
    try:
        agent = make_external_agent(model, tmp_path / "j.sqlite3")
        chat_id = uuid.uuid4().hex
        first = chat(agent, chat_id, [USER])
        assert first[-1]["finishReason"] == "tool-calls"
        assert of(first, "tool-approval-request") == []  # a result is asked for, not a yes
        messages = call(agent, "GET", f"/{chat_id}").json()
        (part,) = [p for p in messages[-1]["parts"] if p["type"] == "dynamic-tool"]
        assert part["state"] == "input-available"
        part["state"], part["output"] = "output-available", "teal"  # what addToolOutput does
        resumed = chat(agent, chat_id, messages)
    finally:
        model.stop()
    assert "".join(c["delta"] for c in of(resumed, "text-delta")) == "You picked teal."
