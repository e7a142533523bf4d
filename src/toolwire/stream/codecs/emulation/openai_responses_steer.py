"""What the emulation server's Responses answers say of a steer (a
scenario turn's ``steer``): the shapes of openai-python's
``ResponseSteerAcceptedEvent``, ``ResponseSteerPendingEvent`` and
``ResponseSteerFailedEvent``.

``accepted``: acknowledged as soon as the response is created, and the
response ends ``incomplete`` with reason ``steered`` (the successor is the
next request's answer); ``pending``: after ``response.completed``, the
stubs of the answers owed, one per call of the answer; ``failed``: refused
as soon as the response is created (``steering_not_supported``).
"""

from __future__ import annotations

from typing import Any

from toolwire.stream.codecs.emulation._base import Reply, hex_token

__all__ = ["STEERED", "steer_after_created", "steer_after_end"]

STEERED = "steered"
"""The ``incomplete_details.reason`` of a steered response."""


def _steer(reply: Reply, response_id: str) -> dict[str, Any]:
    return {
        "id": "steer_" + hex_token(reply.seed + ":steer", 24),
        "previous_response_id": response_id,
    }


def steer_after_created(reply: Reply, response_id: str) -> tuple[str, dict[str, Any]] | None:
    """The steer event sent right after ``response.created``, if any."""
    if reply.steer == "accepted":
        return "response.steer.accepted", {"steer": _steer(reply, response_id)}
    if reply.steer == "failed":
        error = {
            "code": "steering_not_supported",
            "message": "The model does not support steering.",
            "type": "invalid_request_error",
        }
        steer = {**_steer(reply, response_id), "input": ""}
        return "response.steer.failed", {"error": error, "steer": steer}
    return None


def steer_after_end(
    reply: Reply, response_id: str, items: list[dict[str, Any]]
) -> tuple[str, dict[str, Any]] | None:
    """The steer event sent after the response's last event, if any."""
    if reply.steer != "pending":
        return None
    stubs: list[dict[str, Any]] = []
    for item in items:
        if item.get("type") == "function_call":
            stubs.append(
                {"type": "function_call_output", "call_id": item["call_id"], "name": item["name"]}
            )
        elif item.get("type") == "custom_tool_call":
            stubs.append({"type": "custom_tool_call_output", "call_id": item["call_id"]})
    fields = {
        "reason": "waiting_for_required_input",
        "required_input": stubs,
        "steer": _steer(reply, response_id),
    }
    return "response.steer.pending", fields
