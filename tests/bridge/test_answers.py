"""The bridge's answer writers over constructed upstream events: what every
served dialect promises, read back by toolwire's own decoder for that
dialect (the client's view): a call closed only once complete, a call that
arrives whole written whole, an unfinished, invalid or contradicted call
ending the answer with the dialect's error event and never a finish, and
only choice 0 served."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.errors import ProviderError, StreamTruncated
from toolwire.events import (
    ChoiceFinished,
    Event,
    ReasoningDelta,
    StreamEnded,
    StreamFailed,
    TextDelta,
    ToolCallDelta,
    ToolCallInvalid,
    ToolCallReady,
    ToolCallStarted,
    UsageReported,
)
from toolwire.stream.codecs import wire_dialect
from toolwire.stream.codecs.bridge import ANSWERS, Asked
from toolwire.stream.decoder import StreamDecoder
from toolwire.stream.framing import SSEDecoder
from toolwire.stream.jsonio import loads
from toolwire.types import InvalidToolCall, StreamResult, ToolCall, Usage

SERVED = sorted(ANSWERS)


def _call(index: int, call_id: str, name: str, raw: str) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=loads(raw), raw_arguments=raw, index=index)


def _write(dialect: str, events: list[Event], **asked: Any) -> bytes:
    encoder_type = wire_dialect(dialect).encoder
    assert encoder_type is not None
    answer = ANSWERS[dialect](Asked(dialect, "m", (), **asked), encoder_type(sse=True), "seed")
    return answer.start() + answer.feed(events)


def _read(dialect: str, body: bytes) -> StreamResult:
    decoder = StreamDecoder(dialect)
    decoder.feed(body)
    decoder.close()
    return decoder.result()


def _payloads(body: bytes) -> list[Any]:
    decoder = SSEDecoder()
    return [loads(e.data) for e in [*decoder.feed(body), *decoder.close()] if e.data[:1] == "{"]


def _delta(index: int, text: str, name: str = "") -> ToolCallDelta:
    call_id, named = {0: ("c1", "get_weather"), 1: ("c2", "get_time")}[index]
    return ToolCallDelta(index=index, id=call_id, name=name or named, delta=text)


def _started(index: int, call_id: str, name: str) -> ToolCallStarted:
    return ToolCallStarted(index=index, id=call_id, name=name)


@pytest.mark.parametrize("dialect", SERVED)
def test_a_call_that_arrives_whole_is_written_whole(dialect: str) -> None:
    """A Gemini upstream's call is complete at once: no start, no deltas."""
    events: list[Event] = [
        TextDelta(text="Looking. "),
        ToolCallReady(call=_call(0, "c1", "get_weather", '{"city":"Paris"}')),
        ChoiceFinished(reason="stop"),
        UsageReported(usage=Usage(input_tokens=12, output_tokens=7)),
        StreamEnded(),
    ]
    result = _read(dialect, _write(dialect, events))
    (choice,) = result.choices
    assert choice.finish_reason == "tool_calls"  # a call was answered, whatever the word
    assert [(c.name, c.arguments) for c in choice.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert choice.text == "Looking. "


@pytest.mark.parametrize("dialect", SERVED)
def test_deltas_short_of_the_whole_arguments_are_completed_at_the_close(dialect: str) -> None:
    events: list[Event] = [
        _started(0, "c1", "get_weather"),
        _delta(0, '{"city":'),
        ToolCallReady(call=_call(0, "c1", "get_weather", '{"city":"Paris"}')),
        StreamEnded(),
    ]
    (choice,) = _read(dialect, _write(dialect, events)).choices
    assert [c.arguments for c in choice.tool_calls] == [{"city": "Paris"}]


@pytest.mark.parametrize(
    ("events", "said"),
    [
        (
            [
                _started(0, "c1", "get_weather"),
                _delta(0, '{"city":'),
                StreamEnded(),
            ],
            "ended inside tool calls: get_weather",
        ),
        (
            [
                _started(0, "c1", "get_weather"),
                _delta(0, '{"town":"Lyon"}'),
                ToolCallReady(call=_call(0, "c1", "get_weather", '{"city":"Paris"}')),
                StreamEnded(),
            ],
            "its fragments do not make its arguments",
        ),
        (
            [
                ToolCallInvalid(
                    call=InvalidToolCall(
                        id="c1", name="get_weather", raw_arguments="{oops", error="bad", index=0
                    )
                ),
                StreamEnded(),
            ],
            "arguments that are not JSON",
        ),
        (
            [TextDelta(text="Hel"), StreamFailed(error=StreamTruncated("the upstream went away"))],
            "the upstream went away",
        ),
    ],
)
@pytest.mark.parametrize("dialect", SERVED)
def test_an_answer_that_cannot_be_whole_ends_with_an_error_and_no_finish(
    dialect: str, events: list[Event], said: str
) -> None:
    body = _write(dialect, events)
    decoder = StreamDecoder(dialect)
    decoder.feed(body)
    decoder.close()
    assert said.encode() in body
    assert decoder.error is not None and said in str(decoder.error)
    assert all(c.finish_reason is None for c in decoder.result().choices)


@pytest.mark.parametrize("dialect", SERVED)
def test_only_choice_zero_is_served(dialect: str) -> None:
    events: list[Event] = [
        TextDelta(text="zero"),
        TextDelta(choice=1, text="one"),
        ToolCallStarted(choice=1, index=0, id="x", name="other"),
        ToolCallReady(choice=1, call=_call(0, "x", "other", "{}")),
        ChoiceFinished(choice=1, reason="tool_calls"),
        ChoiceFinished(reason="length"),
        StreamEnded(),
        TextDelta(text=" after the end"),
    ]
    (choice,) = _read(dialect, _write(dialect, events)).choices
    assert (choice.text, choice.tool_calls, choice.finish_reason) == ("zero", (), "length")


def test_anthropic_calls_open_one_block_at_a_time_and_text_waits_for_the_block() -> None:
    """Two interleaved calls: the second opens once the first closes, with
    the deltas it had meanwhile; text said inside a call's block follows the
    calls in a block of its own."""
    events: list[Event] = [
        _started(0, "c1", "get_weather"),
        _delta(0, '{"city":'),
        _started(1, "c2", "get_time"),
        _delta(1, '{"zone":"UTC"}'),
        ToolCallReady(call=_call(1, "c2", "get_time", '{"zone":"UTC"}')),
        TextDelta(text="noted"),
        ReasoningDelta(text="hmm"),
        _delta(0, '"Paris"}'),
        ToolCallReady(call=_call(0, "c1", "get_weather", '{"city":"Paris"}')),
        StreamEnded(),
    ]
    body = _write("anthropic-messages", events)
    (choice,) = _read("anthropic-messages", body).choices
    assert [(c.id, c.arguments) for c in choice.tool_calls] == [
        ("c1", {"city": "Paris"}),
        ("c2", {"zone": "UTC"}),
    ]
    assert choice.text == "noted" and choice.finish_reason == "tool_calls"
    starts = [
        p["content_block"]["type"] for p in _payloads(body) if p["type"] == "content_block_start"
    ]
    assert starts == ["tool_use", "tool_use", "text"]


@pytest.mark.parametrize(("status", "kind"), [(503, "overloaded_error"), (500, "api_error")])
def test_anthropic_errors_say_overloaded_for_an_overloaded_upstream(status: int, kind: str) -> None:
    error = ProviderError("busy", status_code=status)
    body = _write("anthropic-messages", [StreamFailed(error=error)])
    (last,) = [p for p in _payloads(body) if p["type"] == "error"]
    assert last["error"]["type"] == kind


def test_a_responses_custom_tool_call_is_written_whole() -> None:
    """A custom tool's input is one string: no argument deltas, the whole
    input once complete; each item as it stood when its event was sent."""
    events: list[Event] = [
        TextDelta(text="Patching."),
        _started(0, "c1", "apply_patch"),
        _delta(0, '{"input":"*** Begin', "apply_patch"),
        ToolCallReady(call=_call(0, "c1", "apply_patch", '{"input":"*** Begin Patch"}')),
        StreamEnded(),
    ]
    payloads = _payloads(_write("openai-responses", events, freeform=frozenset({"apply_patch"})))
    kinds = [p["type"] for p in payloads]
    assert "response.function_call_arguments.delta" not in kinds
    done = [p for p in payloads if p["type"] == "response.custom_tool_call_input.done"]
    assert [d["input"] for d in done] == ["*** Begin Patch"]
    added = [p["item"] for p in payloads if p["type"] == "response.output_item.added"]
    assert [(i["type"], i["status"]) for i in added] == [
        ("message", "in_progress"),
        ("custom_tool_call", "in_progress"),
    ]
    assert added[0]["content"] == [] and added[1]["input"] == ""


def test_a_responses_answer_cut_by_its_limit_is_incomplete() -> None:
    events: list[Event] = [
        TextDelta(text="Once upon"),
        ChoiceFinished(reason="length"),
        StreamEnded(),
    ]
    (final,) = [
        p
        for p in _payloads(_write("openai-responses", events))
        if p["type"] == "response.incomplete"
    ]
    assert final["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    assert final["response"]["output"][0]["content"][0]["text"] == "Once upon"


@pytest.mark.parametrize("dialect", SERVED)
def test_no_working_field_reaches_the_wire(dialect: str) -> None:
    """Frames are written a batch at a time: every payload is as it was
    when its event came, with none of the writer's own fields."""
    answer_events: list[Event] = [
        ReasoningDelta(text="thinking"),
        TextDelta(text="Hel"),
        _started(0, "c1", "get_weather"),
        _delta(0, '{"city":"Paris"}'),
        ToolCallReady(call=_call(0, "c1", "get_weather", '{"city":"Paris"}')),
    ]
    encoder_type = wire_dialect(dialect).encoder
    assert encoder_type is not None
    answer = ANSWERS[dialect](Asked(dialect, "m", ()), encoder_type(sse=True), "seed")
    body = answer.start() + b"".join(answer.feed([e]) for e in answer_events)
    body += answer.feed([StreamEnded()])
    stack: list[Any] = _payloads(body)
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            assert not [k for k in value if k.startswith("_")], value
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def test_a_chat_client_that_asked_for_usage_gets_its_chunk() -> None:
    events: list[Event] = [
        TextDelta(text="hi"),
        UsageReported(usage=Usage(input_tokens=3, output_tokens=2, cached_tokens=1)),
        StreamEnded(),
    ]
    last = _payloads(_write("openai-chat", events, include_usage=True))[-1]
    assert last["choices"] == []
    assert last["usage"]["prompt_tokens"] == 3 and last["usage"]["total_tokens"] == 5
    assert last["usage"]["prompt_tokens_details"] == {"cached_tokens": 1}
