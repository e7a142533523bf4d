"""Kept streams built event by event, for the tests of what a reopened
stream must be: a Responses background response's (every event numbered by
its ``sequence_number``) and a Gemini interaction's (every event with an
``event_id``), each a call paying bob 1,250 cents or a text answer, so that a
test says exactly what goes on the wire."""

from __future__ import annotations

import json
from typing import Any

PAYMENT = '{"to":"bob","amount_cents":1250}'
"""The arguments of the turn's one call: 1,250 cents to bob."""

THEFT = '{"to":"mallory","amount_cents":99900}'
"""The arguments of another stream's call."""


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def sse(events: list[dict[str, Any]]) -> list[bytes]:
    """Each payload as one SSE event (named after its type)."""
    out = []
    for payload in events:
        name = payload.get("type") or payload.get("event_type")
        out.append(f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode())
    return out


# -- Responses ------------------------------------------------------------------------


def response_events(
    response_id: str,
    *,
    call_id: str | None = None,
    arguments: str = PAYMENT,
    text: str = "",
    ended_call_id: str | None = None,
    deltas: bool = True,
) -> list[dict[str, Any]]:
    """A Responses stream: a message of ``text`` (if any), then a ``pay``
    call (if ``call_id``: its arguments in deltas of 6 characters, unless
    not ``deltas``: then only whole at its end; its ``output_item.done``
    names ``ended_call_id``, the same by default), then the end; its events
    numbered from 0."""
    response = {"id": response_id, "object": "response", "model": "gpt-4.1-mini"}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        {"type": "response.in_progress", "response": {**response, "status": "in_progress"}},
    ]
    index = 0
    if text:
        item = {"type": "message", "id": f"msg_{response_id}", "role": "assistant"}
        events.append({"type": "response.output_item.added", "output_index": 0, "item": item})
        for piece in pieces(text, 6):
            events.append(
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": piece,
                }
            )
        events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
        index = 1
    if call_id is not None:
        call = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": "pay"}
        events.append(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**call, "arguments": "", "status": "in_progress"},
            }
        )
        if deltas:
            for piece in pieces(arguments, 6):
                events.append(
                    {
                        "type": "response.function_call_arguments.delta",
                        "item_id": call["id"],
                        "output_index": index,
                        "delta": piece,
                    }
                )
            events.append(
                {
                    "type": "response.function_call_arguments.done",
                    "item_id": call["id"],
                    "output_index": index,
                    "arguments": arguments,
                }
            )
        ended = {**call, "call_id": ended_call_id or call_id}
        events.append(
            {
                "type": "response.output_item.done",
                "output_index": index,
                "item": {**ended, "arguments": arguments, "status": "completed"},
            }
        )
    usage = {"input_tokens": 20, "output_tokens": 10, "total_tokens": 30}
    done = {**response, "status": "completed", "usage": usage}
    events.append({"type": "response.completed", "response": done})
    return [{**e, "sequence_number": n} for n, e in enumerate(events)]


# -- Gemini Interactions --------------------------------------------------------------


def interaction_events(
    interaction_id: str,
    *,
    call_id: str | None = None,
    arguments: list[str] | None = None,
    text: str = "",
    first_step: int = 0,
) -> list[dict[str, Any]]:
    """An Interactions stream: a ``model_output`` step of ``text`` (if any),
    then a ``pay`` call step (if ``call_id``: its ``arguments`` deltas, by
    default the payment in pieces of 6 characters), then the end; steps
    numbered from ``first_step``, every event with an id of its own."""
    events: list[dict[str, Any]] = [
        {
            "event_type": "interaction.created",
            "interaction": {"id": interaction_id, "status": "in_progress", "model": "m"},
        }
    ]
    index = first_step
    if text:
        events.append(
            {"event_type": "step.start", "index": index, "step": {"type": "model_output"}}
        )
        for piece in pieces(text, 6):
            events.append(
                {
                    "event_type": "step.delta",
                    "index": index,
                    "delta": {"type": "text", "text": piece},
                }
            )
        events.append({"event_type": "step.stop", "index": index})
        index += 1
    if call_id is not None:
        step = {"type": "function_call", "id": call_id, "name": "pay", "arguments": {}}
        events.append({"event_type": "step.start", "index": index, "step": step})
        for piece in arguments or pieces(PAYMENT, 6):
            events.append(
                {
                    "event_type": "step.delta",
                    "index": index,
                    "delta": {"type": "arguments_delta", "arguments": piece},
                }
            )
        events.append({"event_type": "step.stop", "index": index})
    status = "requires_action" if call_id is not None else "completed"
    events.append(
        {
            "event_type": "interaction.status_update",
            "interaction_id": interaction_id,
            "status": status,
        }
    )
    usage = {"total_input_tokens": 20, "total_output_tokens": 10, "total_tokens": 30}
    done = {"id": interaction_id, "status": status, "model": "m", "usage": usage}
    events.append({"event_type": "interaction.completed", "interaction": done})
    return [{**e, "event_id": f"{interaction_id}-e{n}"} for n, e in enumerate(events)]
