"""``toolwire runs show --json``: one run as a JSON-ready timeline, and the
run's usage and cost summed from its responses while the run has no totals
of its own (still going, or ended by an error)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from toolwire.cost import Cost, cost_from_dict
from toolwire.journal import (
    AnswerGiven,
    ApprovalGiven,
    ModelFailed,
    ModelRequest,
    ModelResponse,
    Record,
    RunLog,
    RunSuspended,
    ToolIntent,
    ToolOutcome,
    payload_of,
)

__all__ = ["cost_sum", "timeline", "usage_sum"]


def cost_sum(log: RunLog) -> dict[str, Any] | None:
    """The run's cost from its responses (a run still going, or ended by an
    error); ``None`` when one of them has no known cost."""
    total = Cost(total=Decimal(0))
    for event in log.events:
        record = event.record
        if isinstance(record, ModelResponse) or (isinstance(record, ModelFailed) and record.priced):
            cost = cost_from_dict(record.cost)
            if cost is None:
                return None
            total = total + cost
    return total.to_dict()


def usage_sum(log: RunLog) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for event in log.events:
        record = event.record
        usage = record.usage if isinstance(record, ModelResponse) else None
        if usage is not None:
            for key, value in usage.items():
                if isinstance(value, int):
                    total[key] = total.get(key, 0) + value
    return total


_CALL_KINDS = (ToolIntent, ApprovalGiven, AnswerGiven, ToolOutcome)
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
        record = event.record
        if event.call_id is not None and isinstance(record, _CALL_KINDS):
            key = (event.turn, event.call_id)
            call = calls.get(key)
            if call is None:
                name = None if isinstance(record, ToolOutcome) else record.name
                call = {"id": event.call_id, "name": name, "starts": 0}
                calls[key] = call
                turn["tool_calls"].append(call)
            _add_call_record(call, record)
        else:
            _add_turn_record(turn, record, event.at)
    run = log.run.to_dict()
    if run["usage"] is None:
        run["usage"] = usage_sum(log)
    if run["cost"] is None and log.run.status in ("running", "limit", "failed", "cancelled"):
        run["cost"] = cost_sum(log)
    return {"run": run, "turns": [turns[n] for n in sorted(turns)]}


def _add_turn_record(turn: dict[str, Any], record: Record, at: float) -> None:
    """What a turn's model request, failure, answer or suspension adds to it."""
    if isinstance(record, ModelRequest):
        turn["attempts"] += 1
        turn.setdefault("requested_at", at)
    elif isinstance(record, ModelFailed):
        turn["errors"].append({**(record.error or {}), "elapsed": record.elapsed})
    elif isinstance(record, ModelResponse):
        assistant = record.assistant or {}
        turn["answer"] = {
            "elapsed": record.elapsed,
            "finish_reason": record.finish_reason,
            "usage": record.usage,
            "cost": record.cost,
            "text": assistant.get("text", ""),
            "tool_calls": record.call_count,
        }
    elif isinstance(record, RunSuspended):
        turn["pending"] = list(record.pending)


def _add_call_record(
    call: dict[str, Any], record: ToolIntent | ApprovalGiven | AnswerGiven | ToolOutcome
) -> None:
    """What a call's intent, approval, answer or outcome adds to it."""
    if isinstance(record, ToolIntent):
        call["starts"] += 1
        call["arguments"] = (
            record.arguments if record.arguments is not None else record.arguments_preview
        )
        call["eager"] = record.eager
        call["repaired"] = record.repaired
    elif isinstance(record, (ApprovalGiven, AnswerGiven)):
        call[record.kind] = {k: v for k, v in payload_of(record).items() if k != "name"}
    else:
        result = record.result or {}
        call["name"] = result.get("name", call["name"])
        call.update(
            ok=result.get("ok"),
            error=result.get("error"),
            attempts=result.get("attempts"),
            elapsed=result.get("elapsed"),
            content=result.get("content"),
            interrupted=record.interrupted,
        )
        if record.interrupted:
            call["may_have_run"] = True
        if isinstance(result.get("traceback"), str):
            call["traceback"] = result["traceback"]
