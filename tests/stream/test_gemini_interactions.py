"""The Gemini Interactions dialect: its step stream read whole, byte by byte
and at any split; whole interactions; requests; nothing dropped."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from toolwire import StreamDecoder
from toolwire.errors import RemoteProtocolError, StreamErrorEvent
from toolwire.events import Event, UnknownItem
from toolwire.messages import AssistantMessage, SystemMessage, ToolResultMessage, UserMessage
from toolwire.stream.codecs import gemini_interactions, wire_dialect
from toolwire.stream.codecs.emulation.gemini_interactions import decode_request
from toolwire.stream.decoder import decode_response, sniff_dialect
from toolwire.types import StreamResult, ToolCall

DIALECT_NAME = "gemini-interactions"


def sse(*payloads: dict[str, Any]) -> bytes:
    """Events as the API frames them: ``event:`` name, ``data:`` JSON, an ``event_id``."""
    out = []
    for n, payload in enumerate(payloads):
        body = {**payload, "event_id": f"evt_{n}"}
        data = json.dumps(body, ensure_ascii=False)
        out.append(f"event: {payload['event_type']}\ndata: {data}\n\n")
    return "".join(out).encode()


def created(interaction: str = "v1_abc") -> dict[str, Any]:
    return {
        "event_type": "interaction.created",
        "interaction": {"id": interaction, "status": "in_progress", "model": "gemini-3-flash"},
    }


def start(index: int, step: dict[str, Any]) -> dict[str, Any]:
    return {"event_type": "step.start", "index": index, "step": step}


def delta(index: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"event_type": "step.delta", "index": index, "delta": body}


def stop(index: int) -> dict[str, Any]:
    return {"event_type": "step.stop", "index": index}


def completed(status: str = "requires_action", **usage: int) -> dict[str, Any]:
    interaction = {"id": "v1_abc", "status": status}
    if usage:
        interaction["usage"] = usage
    return {"event_type": "interaction.completed", "interaction": interaction}


def args(index: int, text: str) -> dict[str, Any]:
    return delta(index, {"type": "arguments_delta", "arguments": text})


def call(index: int, call_id: str, name: str) -> dict[str, Any]:
    return start(index, {"type": "function_call", "id": call_id, "name": name, "arguments": {}})


TWO_CALLS = sse(
    created(),
    start(0, {"type": "thought"}),
    delta(0, {"type": "thought_summary", "content": {"type": "text", "text": "Weather "}}),
    delta(0, {"type": "thought_summary", "content": {"type": "text", "text": "and time."}}),
    delta(0, {"type": "thought_signature", "signature": "c2lnbmF0dXJl"}),
    stop(0),
    start(1, {"type": "model_output", "content": []}),
    delta(1, {"type": "text", "text": "Let me "}),
    delta(1, {"type": "text", "text": "check."}),
    stop(1),
    call(2, "call_a", "get_weather"),
    call(3, "call_b", "get_current_time"),
    # The two calls' deltas interleaved: each goes to its own step.
    args(2, '{"city": "杭'),
    args(3, '{"timezone": '),
    args(2, '州"}'),
    args(3, '"Asia/Shanghai"}'),
    stop(2),
    stop(3),
    {
        "event_type": "interaction.status_update",
        "interaction_id": "v1_abc",
        "status": "requires_action",
    },
    completed(
        total_input_tokens=12, total_output_tokens=20, total_thought_tokens=5, total_tokens=37
    ),
)


def decode(body: bytes, pieces: list[int] | None = None) -> tuple[list[Event], StreamResult]:
    decoder = StreamDecoder(DIALECT_NAME)
    events: list[Event] = []
    cuts = sorted(set(pieces or []))
    at = 0
    for cut in [*cuts, len(body)]:
        events += decoder.feed(body[at:cut])
        at = cut
    events += decoder.close()
    return events, decoder.result()


def check_two_calls(result: StreamResult) -> None:
    assert result.error is None and result.complete
    (choice,) = result.choices
    assert [(c.id, c.name, c.arguments) for c in choice.tool_calls] == [
        ("call_a", "get_weather", {"city": "杭州"}),
        ("call_b", "get_current_time", {"timezone": "Asia/Shanghai"}),
    ]
    assert choice.text == "Let me check."
    assert choice.reasoning == "Weather and time."
    assert (choice.finish_reason, choice.raw_finish_reason) == ("tool_calls", "requires_action")
    state = [
        {k: v for k, v in item.items() if k != "from_dialect"} for item in choice.provider_state
    ]
    assert state == [
        {"type": "interaction", "id": "v1_abc"},
        {
            "type": "thought",
            "summary": [{"type": "text", "text": "Weather and time."}],
            "signature": "c2lnbmF0dXJl",
        },
    ]
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens) == (12, 25)
    assert result.usage.reasoning_tokens == 5
    assert result.response_id == "v1_abc" and result.model == "gemini-3-flash"


def test_two_calls_with_interleaved_argument_deltas_whole() -> None:
    check_two_calls(decode(TWO_CALLS)[1])


def test_two_calls_byte_by_byte() -> None:
    check_two_calls(decode(TWO_CALLS, list(range(1, len(TWO_CALLS))))[1])


@given(st.lists(st.integers(min_value=1, max_value=len(TWO_CALLS) - 1), max_size=12))
@settings(max_examples=examples(100))
def test_two_calls_at_random_splits(cuts: list[int]) -> None:
    check_two_calls(decode(TWO_CALLS, cuts)[1])


def test_the_dialect_is_told_by_its_events() -> None:
    decoder = StreamDecoder("auto")
    decoder.feed(TWO_CALLS)
    decoder.close()
    assert decoder.dialect == DIALECT_NAME
    assert sniff_dialect("step.delta", '{"event_type": "step.delta"}') == DIALECT_NAME


def test_the_last_whole_event_is_where_a_cut_stream_picks_up() -> None:
    decoder = StreamDecoder(DIALECT_NAME)
    cut = TWO_CALLS.index(b"event: step.stop")
    decoder.feed(TWO_CALLS[: cut + 5])
    assert decoder.cursor == ("v1_abc", "evt_4")


def test_a_stream_cut_inside_a_call_is_truncated_and_runs_nothing() -> None:
    cut = TWO_CALLS.index("州".encode())
    _, result = decode(TWO_CALLS[:cut])
    assert not result.complete
    assert result.choices[0].tool_calls == ()


def test_a_whole_interaction_reads_like_its_stream() -> None:
    body = {
        "id": "v1_abc",
        "status": "requires_action",
        "model": "gemini-3-flash",
        "steps": [
            {"type": "user_input", "content": [{"type": "text", "text": "echoed input"}]},
            {
                "type": "thought",
                "summary": [{"type": "text", "text": "Weather and time."}],
                "signature": "c2lnbmF0dXJl",
            },
            {"type": "model_output", "content": [{"type": "text", "text": "Let me check."}]},
            {
                "type": "function_call",
                "id": "call_a",
                "name": "get_weather",
                "arguments": {"city": "杭州"},
            },
            {
                "type": "function_call",
                "id": "call_b",
                "name": "get_current_time",
                "arguments": {"timezone": "Asia/Shanghai"},
            },
        ],
        "usage": {
            "total_input_tokens": 12,
            "total_output_tokens": 20,
            "total_thought_tokens": 5,
            "total_tokens": 37,
        },
    }
    check_two_calls(decode_response(DIALECT_NAME, body))


def test_steps_sent_only_in_the_completed_interaction_are_read() -> None:
    steps = [
        {"type": "model_output", "content": [{"type": "text", "text": "Hi."}]},
        {"type": "function_call", "id": "c1", "name": "f", "arguments": {"a": 1}},
    ]
    done = {"id": "v1_abc", "status": "requires_action", "steps": steps}
    _, result = decode(sse(created(), {"event_type": "interaction.completed", "interaction": done}))
    choice = result.choices[0]
    assert choice.text == "Hi." and [c.arguments for c in choice.tool_calls] == [{"a": 1}]


def test_builtin_tool_steps_are_kept_in_place_and_unknown_ones_handed_on() -> None:
    body = sse(
        created(),
        start(0, {"type": "google_search_call", "id": "s1", "arguments": {}}),
        delta(0, {"type": "google_search_call", "arguments": {"queries": ["杭州天气"]}}),
        stop(0),
        start(1, {"type": "model_output", "content": []}),
        delta(1, {"type": "text", "text": "Rain."}),
        delta(1, {"type": "text_annotation_delta", "annotations": [{"type": "url_citation"}]}),
        stop(1),
        start(2, {"type": "future_step", "x": 1}),
        stop(2),
        completed("completed"),
    )
    events, result = decode(body)
    choice = result.choices[0]
    assert choice.text == "Rain." and choice.finish_reason == "stop"
    kept = [i for i in choice.provider_state if i["type"] == "step"]
    assert kept == [
        {
            "type": "step",
            "step": {
                "type": "google_search_call",
                "id": "s1",
                "arguments": {"queries": ["杭州天气"]},
            },
            "from_dialect": DIALECT_NAME,
        }
    ]
    unknown = [e for e in events if isinstance(e, UnknownItem)]
    assert {e.type for e in unknown} == {"text_annotation_delta delta", "future_step step"}


def test_an_error_event_is_a_typed_error() -> None:
    body = sse(
        created(), {"event_type": "error", "error": {"code": "overloaded", "message": "busy"}}
    )
    _, result = decode(body)
    assert isinstance(result.error, StreamErrorEvent)
    assert result.error.message == "busy"


def test_a_failed_interaction_is_a_typed_error() -> None:
    body = sse(
        created(),
        {
            "event_type": "interaction.completed",
            "interaction": {
                "id": "v1_abc",
                "status": "failed",
                "errors": [{"code": "internal", "message": "it broke"}],
            },
        },
    )
    _, result = decode(body)
    assert isinstance(result.error, StreamErrorEvent) and result.error.message == "it broke"


@pytest.mark.parametrize(
    "payload",
    [
        args(0, '{"a": 1}'),  # a delta for a step never started
        {"event_type": "step.delta", "delta": {"type": "text", "text": "x"}},  # no index
        {
            "event_type": "step.start",
            "index": 0,
            "step": {"type": "function_call", "id": "a", "name": "f", "arguments": []},
        },
    ],
)
def test_malformed_events_are_typed_errors(payload: dict[str, Any]) -> None:
    _, result = decode(sse(created(), payload))
    assert isinstance(result.error, RemoteProtocolError)


# -- requests ---------------------------------------------------------------------

CONVERSATION = [
    SystemMessage("Be brief."),
    UserMessage("杭州天气怎么样?"),
    AssistantMessage(
        text="Let me check.",
        tool_calls=(
            ToolCall(id="call_a", name="get_weather", arguments={"city": "杭州"}, raw_arguments=""),
            ToolCall(id="call_b", name="get_current_time", arguments={}, raw_arguments=""),
        ),
        provider_state=(
            {"type": "interaction", "id": "v1_prev", "from_dialect": DIALECT_NAME},
            {"type": "thought", "signature": "c2ln", "summary": [], "from_dialect": DIALECT_NAME},
            {"type": "thought_signature", "signature": "other", "from_dialect": "gemini"},
        ),
    ),
    ToolResultMessage(call_id="call_a", name="get_weather", content='{"condition": "rain"}'),
    ToolResultMessage(call_id="call_b", name="get_current_time", content="boom", is_error=True),
]

TOOLS = wire_dialect(DIALECT_NAME).tool_schemas


def test_a_conversation_is_sent_as_steps_with_the_call_ids() -> None:
    body = gemini_interactions.encode_request(
        model="gemini-3-flash",
        messages=CONVERSATION,
        tool_choice="required",
        tools=[
            {"type": "function", "name": "get_weather"},
            {"type": "function", "name": "get_current_time"},
        ],
    )
    assert body["system_instruction"] == "Be brief."
    assert body["input"] == [
        {"type": "user_input", "content": [{"type": "text", "text": "杭州天气怎么样?"}]},
        {"type": "thought", "signature": "c2ln", "summary": []},
        {"type": "model_output", "content": [{"type": "text", "text": "Let me check."}]},
        {
            "type": "function_call",
            "id": "call_a",
            "name": "get_weather",
            "arguments": {"city": "杭州"},
        },
        {"type": "function_call", "id": "call_b", "name": "get_current_time", "arguments": {}},
        {
            "type": "function_result",
            "call_id": "call_a",
            "name": "get_weather",
            "result": '{"condition": "rain"}',
        },
        {
            "type": "function_result",
            "call_id": "call_b",
            "name": "get_current_time",
            "result": "boom",
            "is_error": True,
        },
    ]
    assert "previous_interaction_id" not in body
    assert body["generation_config"] == {"tool_choice": "any"}
    assert body["stream"] is True
    parsed = decode_request(body)
    assert parsed.assistant_turns == 1
    assert [(r.call_id, r.is_error) for r in parsed.latest_results] == [
        ("call_a", False),
        ("call_b", True),
    ]


def test_chaining_names_the_previous_interaction_and_sends_only_what_is_newer() -> None:
    body = gemini_interactions.encode_request(
        model="gemini-3-flash",
        messages=CONVERSATION,
        chain=True,
        tool_choice={"name": "f"},
        tools=[{"type": "function", "name": "f"}],
    )
    assert body["previous_interaction_id"] == "v1_prev"
    assert body["system_instruction"] == "Be brief."
    assert [step["type"] for step in body["input"]] == ["function_result", "function_result"]
    assert body["generation_config"]["tool_choice"] == {
        "allowed_tools": {"mode": "any", "tools": ["f"]}
    }


def test_tool_schemas_are_function_tools() -> None:
    parameters = {"type": "object", "properties": {"city": {"type": "string"}}}
    tool = SimpleNamespace(name="get_weather", description="Weather.", parameters=parameters)

    assert TOOLS is not None
    assert TOOLS([tool], None) == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather.",
            "parameters": parameters,
        }
    ]


@pytest.mark.parametrize("turn", ["1000000", "-1", "x"])
def test_the_emulation_refuses_an_interaction_id_of_no_turn_it_made(turn: str) -> None:
    import base64

    from toolwire.stream.codecs.emulation._request import BadRequest

    # The history counts the turns one by one: a forged huge one would hang the server.
    forged = "v1_" + base64.urlsafe_b64encode(f"c:{turn}".encode()).decode()
    with pytest.raises(BadRequest, match="no interaction"):
        decode_request({"model": "m", "input": "hi", "previous_interaction_id": forged})


def test_a_done_line_after_the_end_is_a_trailer_and_a_quirk() -> None:
    # As every codec reads it: OpenAI's [DONE] after the dialect's own end event.
    decoder = StreamDecoder(DIALECT_NAME)
    decoder.feed(TWO_CALLS + b"data: [DONE]\n\n")
    decoder.close()
    check_two_calls(decoder.result())
    assert decoder.quirks == ("[DONE] line after the dialect's own end event",)


def test_builtin_tool_deltas_merge_into_their_step() -> None:
    # google-genai's *CallDelta / *ResultDelta carry the step's own fields,
    # in pieces: results add up, texts and signatures join, arguments take
    # each delta's keys, anything else is set. Nothing a delta sent is lost.
    search = [{"title": "杭州天气", "url": "https://a.example"}]
    more = [{"title": "Hangzhou", "url": "https://b.example"}]
    body = sse(
        created(),
        start(0, {"type": "code_execution_call", "id": "x1", "arguments": {}}),
        delta(0, {"type": "code_execution_call", "arguments": {"language": "python"}}),
        delta(0, {"type": "code_execution_call", "arguments": {"code": "print(1)"}}),
        stop(0),
        start(1, {"type": "code_execution_result", "call_id": "x1"}),
        delta(1, {"type": "code_execution_result", "result": "1\n"}),
        delta(1, {"type": "code_execution_result", "result": "2\n", "is_error": False}),
        stop(1),
        start(2, {"type": "google_search_result", "call_id": "s1", "result": []}),
        delta(2, {"type": "google_search_result", "result": search, "signature": "c2ln"}),
        delta(2, {"type": "google_search_result", "result": more, "signature": "bmF0dXJl"}),
        stop(2),
        start(3, {"type": "mcp_server_tool_call", "id": "m1", "name": "w", "server_name": "s"}),
        delta(
            3,
            {
                "type": "mcp_server_tool_call",
                "name": "w",
                "server_name": "s",
                "arguments": {"city": "杭州"},
            },
        ),
        stop(3),
        completed("completed"),
    )
    expected = [
        {
            "type": "code_execution_call",
            "id": "x1",
            "arguments": {"language": "python", "code": "print(1)"},
        },
        {"type": "code_execution_result", "call_id": "x1", "result": "1\n2\n", "is_error": False},
        {
            "type": "google_search_result",
            "call_id": "s1",
            "result": search + more,
            "signature": "c2lnbmF0dXJl",
        },
        {
            "type": "mcp_server_tool_call",
            "id": "m1",
            "name": "w",
            "server_name": "s",
            "arguments": {"city": "杭州"},
        },
    ]
    for pieces in (None, list(range(1, len(body)))):
        events, result = decode(body, pieces)
        kept = [i["step"] for i in result.choices[0].provider_state if i["type"] == "step"]
        assert kept == expected
        assert not [e for e in events if isinstance(e, UnknownItem)]
    # A whole interaction holding the merged steps gives the same.
    whole = {"id": "v1_abc", "status": "completed", "steps": expected}
    state = decode_response(DIALECT_NAME, whole).choices[0].provider_state
    assert [i["step"] for i in state if i["type"] == "step"] == expected
