"""The calls of a resumed turn: what the journal already settled.

A run resumed from its journal may be over already (:func:`finished_result`),
or it may find the turn it stopped in with some of
its calls settled: an outcome recorded (reused, never run again), a denial
recorded (it stays a denial), or an intent without an outcome for a call
that is not safe to repeat (answered as interrupted). The other calls (never
started, or safe to repeat) are left to run; :func:`~toolwire.agent.loop.settlement`
decides which is which.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from typing_extensions import assert_never

from toolwire.agent.loop import (
    Deny,
    Interrupt,
    Reuse,
    Run,
    denied_result,
    interrupted_result,
    settlement,
)
from toolwire.observe import Observers
from toolwire.run import RunResult, ToolCallRecord
from toolwire.tools import Toolbox, ToolResult
from toolwire.types import InvalidToolCall, ToolCall

if TYPE_CHECKING:
    from toolwire.journal import RecordedTurn, ResumePlan

__all__ = ["Results", "finished_result", "recorded_results"]

Results = dict[str, tuple[ToolResult, bool]]
"""Tool results by call id, each with whether it ran eagerly."""


async def recorded_results(
    calls: Sequence[ToolCall | InvalidToolCall],
    recorded: RecordedTurn,
    toolbox: Toolbox,
    observe: Observers,
    *,
    run_id: str,
    turn: int,
) -> Results:
    """The results a resumed turn already has: recorded outcomes, recorded
    denials, and interrupted calls that must not run again (each of these two
    told to the observers' ``tool_interrupted``)."""
    done: Results = {}
    for call in calls:
        decision = settlement(
            call,
            outcomes=recorded.outcomes,
            denied=recorded.denied,
            started=recorded.started,
            approved=recorded.approved,
            tool=toolbox.get,
        )
        match decision:
            case Reuse(result=reused, eager=eager):
                done[call.id] = (reused, eager)
                continue
            case Deny(reason=reason):
                result = denied_result(call, reason)
            case Interrupt():
                result = interrupted_result(call)
            case Run():
                continue
            case _:
                assert_never(decision)
        for interrupted in observe.tool_interrupted:
            await interrupted(run_id, turn, call, result)
        done[call.id] = (result, False)
    return done


def finished_result(plan: ResumePlan, outcome: str) -> RunResult:
    """The result of a run the journal shows finished."""
    messages = list(plan.messages)
    records = [
        ToolCallRecord(turn=r.turn, call=r.call, result=r.result, eager=r.eager)
        for r in plan.records
    ]
    output = ""
    if plan.response is not None:
        messages.append(plan.response.assistant)
        if outcome == "answered":
            output = plan.response.assistant.text
    return RunResult(
        output=output,
        outcome="answered" if outcome == "answered" else "max_turns",
        messages=tuple(messages),
        usage=plan.usage,
        tool_calls=tuple(records),
        turns=plan.turn,
        run_id=plan.run_id,
        cost=plan.totals.cost,
    )
