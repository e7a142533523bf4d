"""The pure parts of steering and asynchronous calls: the loop's decision on
a steered turn, the answers a pending steer says are owed, the safe point,
and what a journal's retried turn keeps of its asynchronous calls."""

from __future__ import annotations

import pytest

from toolwire.agent._steering import LiveRuns, owed_answers, safe_point, steered_result
from toolwire.agent.loop import ContinueTurn, Finish, Replied, next_step
from toolwire.errors import UsageError
from toolwire.messages import AssistantMessage
from toolwire.run import ToolCallRecord
from toolwire.tools import ToolResult
from toolwire.types import ChoiceResult, IncompleteToolCall, StreamResult, ToolCall


def test_a_steered_turn_is_continued_even_at_the_turn_limit() -> None:
    steered = ChoiceResult(text="half", finish_reason="steered")
    paused = ChoiceResult(text="half", finish_reason="paused")
    assert next_step(Replied(steered, 3), max_turns=3, stream_retries=0) == ContinueTurn()
    assert next_step(Replied(paused, 3), max_turns=3, stream_retries=0) == Finish("max_turns")


def _record(turn: int, call_id: str) -> ToolCallRecord:
    call = ToolCall(id=call_id, name="book", arguments={})
    result = ToolResult(call_id=call_id, name="book", ok=True, content=f"done {call_id}")
    return ToolCallRecord(turn=turn, call=call, result=result)


def test_owed_answers_come_from_the_records_never_from_a_run() -> None:
    state = ({"type": "steer_pending", "owed": ["c1", "c0", "c9"]},)
    assistant = AssistantMessage(text="", provider_state=state)
    owed = owed_answers(assistant, [_record(2, "c1")], [_record(1, "c0")])
    # c1 is answered by the turn; c0 by the earlier record; c9 by nothing here.
    assert [(m.call_id, m.content) for m in owed] == [("c0", "done c0")]
    assert owed_answers(AssistantMessage(text="x"), [], [_record(1, "c0")]) == []


def test_the_safe_point_has_no_call_complete_or_half_streamed() -> None:
    def result(**choice: object) -> StreamResult:
        return StreamResult(dialect="openai-responses", choices=(ChoiceResult(**choice),))  # type: ignore[arg-type]

    assert safe_point(result(text="so far"))
    assert not safe_point(result(tool_calls=(ToolCall(id="c", name="t", arguments={}),)))
    half = IncompleteToolCall(id="c", name="t", raw_arguments='{"a', index=0)
    assert not safe_point(result(incomplete_tool_calls=(half,)))
    cut = steered_result(result(text="so far", finish_reason="stop"))
    assert cut.choices[0].finish_reason == "steered" and cut.choices[0].text == "so far"


def test_a_steer_needs_a_live_run_and_some_text() -> None:
    live = LiveRuns()
    with live.live("r") as inbox:
        steer = live.steer("r", "go left")
        assert inbox.take() == (steer,) and not inbox
        with pytest.raises(UsageError):
            live.steer("r", "  ")
    with pytest.raises(UsageError, match="not running"):
        live.steer("r", "go left")


def test_an_async_outcome_stands_for_the_same_call_under_a_new_id() -> None:
    from typing import Any

    from toolwire.agent._early import EarlyCalls

    nothing: Any = None
    early = EarlyCalls(nothing, "run", nothing, nothing, lambda: 1)
    done = ToolResult(
        call_id="old", name="book", ok=True, content="booked", arguments={"room": "A"}
    )
    early.outcomes["old"] = (done, True)
    again = ToolCall(id="new", name="book", arguments={"room": "A"}, asynchronous=True)
    other = ToolCall(id="other", name="book", arguments={"room": "B"}, asynchronous=True)
    assert early._same_call(other) is None
    found = early._same_call(again)
    assert found is not None and (found.call_id, found.content) == ("new", "booked")
    assert early._same_call(again) is None, "each earlier outcome is claimed once"
