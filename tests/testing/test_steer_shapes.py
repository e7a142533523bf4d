"""The emulation server's steering and asynchronous-call frames, read by the
official openai SDK and validated against its own types: a steer accepted,
pending (its ``required_input`` naming the answer's calls) or failed, and a
call marked ``async`` streamed before the text that follows it."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from openai.types.responses import (
    FunctionTool,
    ResponseFunctionToolCall,
    ResponseSteerAcceptedEvent,
    ResponseSteerEvent,
    ResponseSteerFailedEvent,
    ResponseSteerPendingEvent,
)

from toolwire.stream import jsonio
from toolwire.stream.codecs.openai_responses_notices import steer_request
from toolwire.testing import EmulationServer, Scenario
from toolwire.tools import Toolbox, tool

CALL = {"name": "book", "arguments": {"room": "A"}, "fields": {"async": True}}


def frames(server: EmulationServer) -> list[dict[str, Any]]:
    """The payloads of one streamed answer, as sent."""
    url = server.url_for("openai-responses") + "/responses"
    body = {"model": "m", "input": "go", "stream": True}
    response = httpx.post(url, json=body, headers={"authorization": "Bearer x"}, timeout=30)
    lines = response.text.splitlines()
    return [jsonio.loads(line[6:]) for line in lines if line.startswith("data: ")]


@pytest.mark.parametrize(
    ("steer", "kind", "model"),
    [
        ("accepted", "response.steer.accepted", ResponseSteerAcceptedEvent),
        ("pending", "response.steer.pending", ResponseSteerPendingEvent),
        ("failed", "response.steer.failed", ResponseSteerFailedEvent),
    ],
)
def test_each_steer_event_is_the_sdks_shape(steer: str, kind: str, model: Any) -> None:
    turn: dict[str, Any] = {"text": "so far", "steer": steer}
    if steer == "pending":
        turn["tool_calls"] = [{"name": "book", "arguments": {"room": "A"}}]
    with EmulationServer(Scenario.from_dict({"turns": [turn]})) as server:
        sent = frames(server)
    (event,) = [f for f in sent if f["type"] == kind]
    model.model_validate(event, strict=False)
    last = next(f for f in reversed(sent) if f["type"].startswith("response.") and "response" in f)
    if steer == "accepted":
        assert last["response"]["incomplete_details"] == {"reason": "steered"}
    if steer == "pending":
        call = next(i for i in last["response"]["output"] if i["type"] == "function_call")
        assert event["required_input"] == [
            {"type": "function_call_output", "call_id": call["call_id"], "name": "book"}
        ]
        assert sent[-1] is event, "pending comes after response.completed"


def test_the_sdk_streams_an_async_call_before_the_text() -> None:
    scenario = Scenario.from_dict({"turns": [{"tool_calls": [CALL], "text": "meanwhile"}]})
    with EmulationServer(scenario) as server:
        client = openai.OpenAI(base_url=server.url_for("openai-responses"), api_key="x")
        with client.responses.stream(model="m", input="book A") as stream:
            final = stream.get_final_response()
    first, second = final.output
    assert isinstance(first, ResponseFunctionToolCall) and first.async_ is True
    assert second.type == "message"


def test_an_async_tool_and_a_steer_are_sent_as_the_sdk_reads_them() -> None:
    @tool(asynchronous=True)
    def book(room: str) -> str:
        """Book a room.

        Args:
            room: the room.
        """
        return room

    (schema,) = Toolbox([book]).schemas("openai-responses")
    assert FunctionTool.model_validate(schema).async_ is True
    event = steer_request("resp_1", ["go left"])
    assert ResponseSteerEvent.model_validate(event).previous_response_id == "resp_1"
