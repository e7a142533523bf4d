"""``toolwire runs show --json``: one run as a JSON-ready timeline, and the
run's usage and cost summed from its responses while the run has no totals
of its own (still going, or ended by an error)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from toolwire.cost import Cost, cost_from_dict
from toolwire.journal import RunLog

__all__ = ["cost_sum", "timeline", "usage_sum"]


def cost_sum(log: RunLog) -> dict[str, Any] | None:
    """The run's cost from its responses (a run still going, or ended by an
    error); ``None`` when one of them has no known cost."""
    total = Cost(total=Decimal(0))
    for event in log.events:
        if event.kind == "model_response" or (
            event.kind == "model_failed" and "cost" in event.data
        ):
            cost = cost_from_dict(event.data.get("cost"))
            if cost is None:
                return None
            total = total + cost
    return total.to_dict()


def usage_sum(log: RunLog) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for event in log.events:
        usage = event.data.get("usage") if event.kind == "model_response" else None
        if isinstance(usage, dict):
            for key, value in usage.items():
                if isinstance(value, int):
                    total[key] = total.get(key, 0) + value
    return total


_CALL_KINDS = ("tool_intent", "approval", "answer", "tool_outcome")
"""The kinds of the records about one tool call."""


def timeline(log: RunLog) -> dict[str, Any]:
    """One run as a JSON-ready object: the run, then each turn with its model
    requests, answer and tool calls (``toolwire runs show --json``)."""
    turns: dict[int, dict[str, Any]] = {}
    calls: dict[tuple[int, str], dict[str, Any]] = {}
    for event in log.events:
        if event.turn is None:
            continue
        turn = turns.get(event.turn)
        if turn is None:
            turn = turns[event.turn] = {
                "turn": event.turn,
                "attempts": 0,
                "errors": [],
                "answer": None,
                "tool_calls": [],
            }
        if event.call_id is not None and event.kind in _CALL_KINDS:
            key = (event.turn, event.call_id)
            call = calls.get(key)
            if call is None:
                call = {"id": event.call_id, "name": event.data.get("name"), "starts": 0}
                calls[key] = call
                turn["tool_calls"].append(call)
            _add_call_record(call, event.kind, event.data)
        else:
            _add_turn_record(turn, event.kind, event.data, event.at)
    run = log.run.to_dict()
    if run["usage"] is None:
        run["usage"] = usage_sum(log)
    if run["cost"] is None and log.run.status in ("running", "limit", "failed", "cancelled"):
        run["cost"] = cost_sum(log)
    return {"run": run, "turns": [turns[n] for n in sorted(turns)]}


def _add_turn_record(turn: dict[str, Any], kind: str, data: dict[str, Any], at: float) -> None:
    """What a turn's model request, failure, answer or suspension adds to it."""
    if kind == "model_request":
        turn["attempts"] += 1
        turn.setdefault("requested_at", at)
    elif kind == "model_failed":
        turn["errors"].append({**data.get("error", {}), "elapsed": data.get("elapsed")})
    elif kind == "model_response":
        assistant = data.get("assistant") or {}
        turn["answer"] = {
            "elapsed": data.get("elapsed"),
            "finish_reason": data.get("finish_reason"),
            "usage": data.get("usage"),
            "cost": data.get("cost"),
            "text": assistant.get("text", ""),
            "tool_calls": len(assistant.get("tool_calls", [])),
        }
    elif kind == "run_suspended":
        turn["pending"] = data.get("pending", [])


def _add_call_record(call: dict[str, Any], kind: str, data: dict[str, Any]) -> None:
    """What a call's intent, approval, answer or outcome adds to it."""
    if kind == "tool_intent":
        call["starts"] += 1
        call["arguments"] = data.get("arguments", data.get("arguments_preview"))
        call["eager"] = data.get("eager", False)
        call["repaired"] = data.get("repaired", False)
    elif kind in ("approval", "answer"):
        call[kind] = {k: v for k, v in data.items() if k != "name"}
    else:
        result = data.get("result", {})
        call["name"] = result.get("name", call["name"])
        call.update(
            ok=result.get("ok"),
            error=result.get("error"),
            attempts=result.get("attempts"),
            elapsed=result.get("elapsed"),
            content=result.get("content"),
            interrupted=data.get("interrupted", False),
        )
        if data.get("interrupted"):
            call["may_have_run"] = True
        if isinstance(result.get("traceback"), str):
            call["traceback"] = result["traceback"]
