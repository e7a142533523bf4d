"""The two translations, fed events directly: the cases a scripted model
does not easily produce (a call whose id comes late, an invalid call, a
retried turn, a typed output, a failure)."""

from __future__ import annotations

from typing import Any

from ag_ui.core import Event
from pydantic import TypeAdapter

from toolwire.errors import ProtocolError
from toolwire.events import ToolCallDelta, ToolCallInvalid, ToolCallReady, ToolCallStarted
from toolwire.run import ModelRetrying, OutputDelta, RunStarted, TurnStarted
from toolwire.types import InvalidToolCall, ToolCall
from toolwire.ui._agui_events import Translator as AguiTranslator
from toolwire.ui._vercel_chunks import Translator as UiTranslator

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)

LATE_ID = [
    RunStarted(run_id="run"),
    TurnStarted(turn=1),
    # A provider that names the call only at the end, and streams values, not text.
    ToolCallStarted(index=0, id=None, name=""),
    ToolCallDelta(index=0, id=None, name="", delta=""),
    ToolCallReady(call=ToolCall(id="c1", name="lookup", arguments={"q": "x"})),
]


def agui(events: list[Any]) -> list[dict[str, Any]]:
    out = AguiTranslator(thread_id="t", run_id="r")
    sent = [e for event in events for e in out.feed(event)]
    for event in sent:
        EVENTS.validate_python(event.model_dump(by_alias=True))
    return [event.model_dump(by_alias=True, mode="json") for event in sent]


def ui(events: list[Any]) -> list[dict[str, Any]]:
    out = UiTranslator()
    return [c for event in events for c in out.feed(event)]


def test_a_call_named_late_with_whole_arguments_still_goes_out_with_them() -> None:
    sent = agui(LATE_ID)
    calls = [e for e in sent if e["type"].startswith("TOOL_CALL")]
    assert [(e["type"], e.get("delta")) for e in calls] == [
        ("TOOL_CALL_START", None),
        ("TOOL_CALL_ARGS", '{"q":"x"}'),
        ("TOOL_CALL_END", None),
    ]
    assert calls[0]["toolCallId"] == "c1" and calls[0]["toolCallName"] == "lookup"

    chunks = [c for c in ui(LATE_ID) if c["type"].startswith("tool-")]
    assert [c["type"] for c in chunks] == ["tool-input-start", "tool-input-available"]
    assert chunks[1]["input"] == {"q": "x"}


def test_an_invalid_call_goes_out_with_the_text_the_model_wrote() -> None:
    bad = InvalidToolCall(id="c2", name="lookup", raw_arguments='{"q": ', error="cut")
    events = [RunStarted(run_id="run"), TurnStarted(turn=1), ToolCallInvalid(call=bad)]
    args = [e["delta"] for e in agui(events) if e["type"] == "TOOL_CALL_ARGS"]
    assert args == ['{"q": ']
    (error,) = [c for c in ui(events) if c["type"] == "tool-input-error"]
    assert error["errorText"] == "cut" and error["input"] == '{"q": '


def test_a_retried_turn_closes_what_it_streamed_and_starts_a_new_message() -> None:
    from toolwire.events import TextDelta

    events = [
        RunStarted(run_id="run"),
        TurnStarted(turn=1),
        TextDelta(text="half"),
        ModelRetrying(turn=1, attempt=1, error=ProtocolError("cut")),
        TextDelta(text="whole"),
    ]
    sent = agui(events)
    kinds = [e["type"] for e in sent if e["type"].startswith(("TEXT", "CUSTOM"))]
    assert kinds == [
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "CUSTOM",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
    ]
    starts = [e["messageId"] for e in sent if e["type"] == "TEXT_MESSAGE_START"]
    assert starts[0] != starts[1]
    assert "reset-step" in [c["type"] for c in ui(events)]


def test_a_typed_output_goes_out_as_state() -> None:
    events = [RunStarted(run_id="run"), TurnStarted(turn=1), OutputDelta(turn=1, partial={"a": 1})]
    (state,) = [e for e in agui(events) if e["type"] == "STATE_SNAPSHOT"]
    assert state["snapshot"] == {"output": {"a": 1}}


def test_a_failure_closes_what_is_open_and_says_why() -> None:
    from toolwire.events import TextDelta
    from toolwire.journal import ApprovalRefused

    out = AguiTranslator(thread_id="t", run_id="r")
    for event in [RunStarted(run_id="run"), TurnStarted(turn=1), TextDelta(text="x")]:
        out.feed(event)
    closing = out.failed(ApprovalRefused("no", reason="digest"))
    assert [e.type.value for e in closing] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert closing[-1].model_dump()["code"] == "digest"
    chunks = UiTranslator()
    chunks.feed(RunStarted(run_id="run"))
    chunks.feed(TextDelta(text="x"))
    assert [c["type"] for c in chunks.failed(RuntimeError("boom"))] == ["text-end", "error"]
