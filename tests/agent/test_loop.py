"""The loop's decisions, every branch, without I/O: plain values in, a next step out."""

from __future__ import annotations

import json

import pytest

from toolwire.agent.loop import (
    Broken,
    ContinueTurn,
    Deny,
    Fail,
    Finish,
    Interrupt,
    Replied,
    RequestOptions,
    RetryTurn,
    Reuse,
    Run,
    RunTools,
    denied_result,
    interrupted_result,
    next_step,
    settlement,
    turn_options,
)
from toolwire.errors import StreamTruncated
from toolwire.tools import Tool, ToolResult, tool
from toolwire.types import ChoiceResult, InvalidToolCall, ToolCall


def call(index: int, name: str = "f", call_id: str | None = None) -> ToolCall:
    return ToolCall(id=call_id or f"c{index}", name=name, arguments={"x": index}, index=index)


def invalid(index: int) -> InvalidToolCall:
    return InvalidToolCall(
        id=f"bad{index}", name="f", raw_arguments="{", error="invalid JSON", index=index
    )


def choice(*calls: ToolCall | InvalidToolCall, text: str = "") -> ChoiceResult:
    return ChoiceResult(
        text=text,
        tool_calls=tuple(c for c in calls if isinstance(c, ToolCall)),
        invalid_tool_calls=tuple(c for c in calls if isinstance(c, InvalidToolCall)),
    )


# -- next_step ----------------------------------------------------------------------------


def test_a_turn_without_calls_is_the_answer() -> None:
    step = next_step(Replied(choice(text="hi"), 1), max_turns=3, stream_retries=0)
    assert step == Finish("answered")


def test_a_turn_without_calls_is_the_answer_even_on_the_last_turn() -> None:
    step = next_step(Replied(choice(text="hi"), 3), max_turns=3, stream_retries=0)
    assert step == Finish("answered")


def test_calls_run_in_the_order_the_model_gave_them_invalid_ones_included() -> None:
    step = next_step(
        Replied(choice(call(2), invalid(1), call(0)), 1), max_turns=3, stream_retries=0
    )
    assert isinstance(step, RunTools)
    assert [c.index for c in step.calls] == [0, 1, 2]
    assert isinstance(step.calls[1], InvalidToolCall)


def test_a_paused_turn_is_continued_within_the_turn_limit() -> None:
    paused = ChoiceResult(text="Searching.", finish_reason="paused", raw_finish_reason="pause_turn")
    assert next_step(Replied(paused, 1), max_turns=3, stream_retries=0) == ContinueTurn()
    assert next_step(Replied(paused, 3), max_turns=3, stream_retries=0) == Finish("max_turns")


def test_calls_on_the_last_allowed_turn_end_the_run_at_the_limit() -> None:
    step = next_step(Replied(choice(call(0)), 3), max_turns=3, stream_retries=5)
    assert step == Finish("max_turns")


def test_a_broken_stream_is_sent_again_while_retries_last() -> None:
    error = StreamTruncated("cut")
    assert next_step(Broken(error, 1), max_turns=3, stream_retries=2) == RetryTurn(2, error)
    assert next_step(Broken(error, 2), max_turns=3, stream_retries=2) == RetryTurn(3, error)


def test_a_broken_stream_without_retries_left_fails_with_its_own_error() -> None:
    error = StreamTruncated("cut")
    assert next_step(Broken(error, 3), max_turns=3, stream_retries=2) == Fail(error)
    assert next_step(Broken(error, 1), max_turns=3, stream_retries=0) == Fail(error)


# -- settlement ---------------------------------------------------------------------------


@tool
def plain(x: int) -> int:
    """Has effects, and no way to tell a repeat."""
    return x


@tool(read_only=True)
def reader(x: int) -> int:
    """Reads only."""
    return x


@tool(requires_approval=True)
def guarded(x: int) -> int:
    """Asks first."""
    return x


TOOLS: dict[str, Tool] = {"plain": plain, "reader": reader, "guarded": guarded}


def decide(
    c: ToolCall | InvalidToolCall,
    *,
    outcomes: dict[str, tuple[ToolResult, bool]] | None = None,
    denied: dict[str, str] | None = None,
    started: set[str] | None = None,
    approved: set[str] | None = None,
) -> object:
    return settlement(
        c,
        outcomes=outcomes or {},
        denied=denied or {},
        started=started or set(),
        approved=approved or set(),
        tool=TOOLS.get,
    )


def result(c: ToolCall) -> ToolResult:
    return ToolResult(call_id=c.id, name=c.name, ok=True, content="1")


def test_a_recorded_outcome_is_reused_with_its_eager_flag() -> None:
    c = call(0, "plain")
    assert decide(c, outcomes={c.id: (result(c), True)}, started={c.id}) == Reuse(result(c), True)


def test_a_recorded_denial_stays_a_denial() -> None:
    c = call(0, "guarded")
    assert decide(c, denied={c.id: "no"}, started={c.id}) == Deny("no")


def test_a_call_that_never_started_runs() -> None:
    assert decide(call(0, "plain")) == Run()


@pytest.mark.parametrize("name", ["reader", "unknown"])
def test_a_started_call_runs_again_when_that_is_safe(name: str) -> None:
    c = call(0, name)
    assert decide(c, started={c.id}) == Run()


def test_a_started_invalid_call_runs_again_it_only_answers_an_error() -> None:
    c = invalid(0)
    assert decide(c, started={c.id}) == Run()


def test_a_started_call_that_takes_the_idempotency_key_runs_again() -> None:
    @tool(idempotent=True)
    def pay(x: int) -> int:
        """Pays once per key."""
        return x

    assert pay.idempotent
    c = call(0, "pay")
    tools = {"pay": pay}
    got = settlement(c, outcomes={}, denied={}, started={c.id}, approved=set(), tool=tools.get)
    assert got == Run()


def test_a_started_unsafe_call_is_interrupted() -> None:
    c = call(0, "plain")
    assert decide(c, started={c.id}) == Interrupt()


def test_an_approval_tool_that_had_no_approval_never_started_its_body() -> None:
    c = call(0, "guarded")
    assert decide(c, started={c.id}) == Run()
    assert decide(c, started={c.id}, approved={c.id}) == Interrupt()


def test_the_results_the_model_is_told() -> None:
    c = call(0, "plain")
    interrupted = interrupted_result(c)
    assert not interrupted.ok and interrupted.error == "failed"
    assert json.loads(interrupted.content)["error"] == "interrupted"
    assert interrupted.arguments == {"x": 0} and interrupted.call_id == "c0"
    denied = denied_result(invalid(1), "too expensive")
    assert not denied.ok and denied.error == "denied" and denied.arguments == {}
    body = json.loads(denied.content)
    assert body["error"] == "denied" and "too expensive" in body["message"]


# -- turn_options -------------------------------------------------------------------------

SCHEMA = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


def test_a_forced_tool_choice_holds_for_the_first_turn_only() -> None:
    asked = RequestOptions(model="m", tools=(SCHEMA,), tool_choice={"name": "f"}, max_tokens=9)
    assert turn_options(asked, 1) is asked
    later = turn_options(asked, 2)
    assert later.tool_choice is None
    assert (later.model, later.tools, later.max_tokens) == ("m", (SCHEMA,), 9)
    forced = RequestOptions(model="m", tools=(SCHEMA,), tool_choice="required")
    assert turn_options(forced, 3).tool_choice is None
    auto = RequestOptions(model="m", tools=(SCHEMA,), tool_choice="auto")
    assert turn_options(auto, 2).tool_choice == "auto"
    assert turn_options(RequestOptions(model="m", tools=(SCHEMA,)), 2).tool_choice is None


def test_none_stays_none_on_every_turn() -> None:
    asked = RequestOptions(model="m", tools=(SCHEMA,), tool_choice="none")
    assert [turn_options(asked, turn).tool_choice for turn in (1, 2, 5)] == ["none"] * 3


def test_without_tools_no_tool_choice_is_sent() -> None:
    asked = RequestOptions(model="m", tool_choice="required")
    assert turn_options(asked, 1).tool_choice is None
    assert turn_options(asked, 2).tool_choice is None
