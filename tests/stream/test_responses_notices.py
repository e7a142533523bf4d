"""What a Responses stream reports about the response: ``configuration_update``
items, ``input_transformations``, steering acknowledgements and a pending
steer's ``required_input``, and asynchronous calls (``async: true``). Shapes
checked against openai-python's own types."""

from __future__ import annotations

import json
from typing import Any

from openai.types.responses import (
    Response,
    ResponseConfigurationUpdateItem,
    ResponseFunctionToolCall,
    ResponseSteerAcceptedEvent,
    ResponseSteerFailedEvent,
    ResponseSteerPendingEvent,
)

from toolwire import StreamDecoder
from toolwire.events import ProviderNotice, ToolCallReady
from toolwire.messages import AssistantMessage, ToolResultMessage, UserMessage
from toolwire.stream.codecs import openai_responses
from toolwire.types import StreamResult


def decode(
    *events: dict[str, Any], end: dict[str, Any] | None = None
) -> tuple[list[Any], StreamResult]:
    frames = [{"type": "response.created", "response": {"id": "resp_1"}}, *events]
    frames.append(
        end or {"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}}
    )
    decoder = StreamDecoder("openai-responses")
    out: list[Any] = []
    for n, event in enumerate(frames):
        event = {**event, "sequence_number": n}
        out += decoder.feed(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
    out += decoder.close()
    return out, decoder.result()


def done(index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "response.output_item.added", "output_index": index, "item": item},
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


def kept(result: StreamResult) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in i.items() if k != "from_dialect"}
        for i in result.choices[0].provider_state
    ]


# -- configuration_update ----------------------------------------------------------

UPDATE = {
    "type": "configuration_update",
    "id": "cu_1",
    "reasoning": {"effort": "low"},
    "text": {"format": {"type": "text"}},
}


def test_a_configuration_update_is_state_sent_back_and_a_notice() -> None:
    ResponseConfigurationUpdateItem.model_validate(UPDATE)
    events, result = decode(*done(0, UPDATE))
    (notice,) = [e for e in events if isinstance(e, ProviderNotice)]
    assert (notice.type, notice.warning, notice.payload) == ("configuration_update", False, UPDATE)
    assert "reasoning effort 'low'" in notice.message and "text format 'text'" in notice.message
    assert result.notices == (notice,) and result.unknown_items == ()
    assert kept(result) == [UPDATE]
    assistant = AssistantMessage.from_choice(result.choices[0])
    _, items = openai_responses.encode_input([UserMessage("hi"), assistant, UserMessage("more")])
    assert items[1] == UPDATE  # in its place, before the next message


# -- input_transformations ---------------------------------------------------------

DROPPED = [{"id": "rs_1", "action": "removed", "reason": "model_mismatch", "type": "reasoning"}]


def test_dropped_reasoning_is_a_warning_and_kept() -> None:
    response = {"id": "resp_1", "status": "completed", "input_transformations": DROPPED}
    Response.model_validate(
        {
            **response,
            "created_at": 0,
            "model": "m",
            "object": "response",
            "output": [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }
    )
    events, result = decode(end={"type": "response.completed", "response": response})
    (notice,) = [e for e in events if isinstance(e, ProviderNotice)]
    assert notice.warning and "rs_1 (model_mismatch)" in notice.message
    assert {"type": "input_transformations", "items": DROPPED} in kept(result)
    assistant = AssistantMessage.from_choice(result.choices[0])
    _, items = openai_responses.encode_input([assistant])
    assert items == []  # the server's account, not an input item


# -- steering ----------------------------------------------------------------------

STEER = {"id": "steer_1", "previous_response_id": "resp_1"}
ACCEPTED = {"type": "response.steer.accepted", "steer": STEER}
FAILED = {
    "type": "response.steer.failed",
    "steer": {"input": "stop", "previous_response_id": "resp_1"},
    "error": {
        "code": "too_many_pending_steers",
        "message": "Slow down.",
        "type": "invalid_request_error",
    },
}
STUBS = [
    {"type": "function_call_output", "call_id": "call_a", "name": "lookup"},
    {"type": "mcp_approval_response", "approval_request_id": "mcpr_1"},
]
PENDING = {
    "type": "response.steer.pending",
    "steer": STEER,
    "reason": "waiting_for_required_input",
    "required_input": STUBS,
}


def test_the_steer_events_are_the_sdks() -> None:
    for model, event in (
        (ResponseSteerAcceptedEvent, ACCEPTED),
        (ResponseSteerFailedEvent, FAILED),
        (ResponseSteerPendingEvent, PENDING),
    ):
        model.model_validate({**event, "sequence_number": 1})


def test_steer_events_are_notices_and_a_pending_steer_keeps_what_is_owed() -> None:
    completed = {"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}}
    events, result = decode(ACCEPTED, FAILED, end=completed)
    notices = [e for e in events if isinstance(e, ProviderNotice)]
    assert [(n.type, n.warning) for n in notices] == [
        ("response.steer.accepted", False),
        ("response.steer.failed", True),
    ]
    assert "too_many_pending_steers" in notices[1].message
    assert result.unknown_items == ()


def test_a_pending_steer_after_the_end_is_kept_not_dropped() -> None:
    decoder = StreamDecoder("openai-responses")
    frames = [
        {"type": "response.created", "response": {"id": "resp_1"}},
        PENDING,
        {"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}},
    ]
    events: list[Any] = []
    for event in frames:
        events += decoder.feed(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
    events += decoder.close()
    result = decoder.result()
    (notice,) = [e for e in events if isinstance(e, ProviderNotice)]
    assert "2 answer(s) the client owes" in notice.message and "call_a" in notice.message
    (pending,) = [i for i in kept(result) if i["type"] == "steer_pending"]
    assert pending["required_input"] == STUBS and pending["steer"] == STEER
    assistant = AssistantMessage.from_choice(result.choices[0])
    _, items = openai_responses.encode_input([assistant])
    assert items == []  # owed answers are the client's to send, never the stub


# -- asynchronous calls ------------------------------------------------------------


def test_an_async_call_is_flagged_and_its_flag_goes_back() -> None:
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_a",
        "name": "lookup",
        "arguments": '{"q": "x"}',
        "status": "completed",
        "async": True,
    }
    assert ResponseFunctionToolCall.model_validate(item).async_ is True
    sync = {**item, "id": "fc_2", "call_id": "call_b", "async": None}
    events, result = decode(*done(0, item), *done(1, sync))
    ready = [e.call for e in events if isinstance(e, ToolCallReady)]
    assert [(c.id, c.asynchronous) for c in ready] == [("call_a", True), ("call_b", False)]
    assistant = AssistantMessage.from_choice(result.choices[0])
    answer = ToolResultMessage("call_a", "lookup", "found")
    _, items = openai_responses.encode_input([assistant, answer])
    assert items[0]["async"] is True and "async" not in items[1]
