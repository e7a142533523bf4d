"""Every finish reason means what it says: a refusal with its details, a
steered response, an interaction that requires continuation, a client tool
search, each its own outcome, never ``stop`` or ``length`` by default."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest
from anthropic.types import RefusalStopDetails, StopReason
from openai.types.responses import Response, ResponseToolSearchCall

from toolwire import StreamDecoder
from toolwire.agent.loop import ContinueTurn, Finish, Replied, RunTools, next_step
from toolwire.events import ChoiceFinished
from toolwire.messages import AssistantMessage, ToolResultMessage, UserMessage
from toolwire.stream.codecs import anthropic, gemini_interactions, openai_responses
from toolwire.stream.decoder import decode_response
from toolwire.types import FINISH_REASONS, ChoiceResult, RefusalDetails, StreamResult

from .test_gemini_interactions import created, decode, sse


def _sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _stream(dialect: str, body: bytes) -> tuple[list[Any], StreamResult]:
    decoder = StreamDecoder(dialect)
    events = [*decoder.feed(body), *decoder.close()]
    return events, decoder.result()


# -- Anthropic: refusal and its stop_details ---------------------------------------

DETAILS = {"type": "refusal", "category": "cyber", "explanation": "Exploit development."}


def test_the_sdk_knows_the_words_used_here() -> None:
    assert {"refusal", "pause_turn"} <= set(get_args(StopReason))
    assert RefusalStopDetails.model_validate(DETAILS).category == "cyber"
    reasons = get_args(Response.model_fields["incomplete_details"].annotation)[0]
    assert "steered" in get_args(reasons.model_fields["reason"].annotation.__args__[0])


def anthropic_refusal(details: dict[str, Any] | None) -> bytes:
    delta: dict[str, Any] = {"stop_reason": "refusal", "stop_sequence": None}
    if details is not None:
        delta["stop_details"] = details
    return _sse(
        {"type": "message_start", "message": {"id": "msg_1", "content": [], "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "No."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    )


def test_an_anthropic_refusal_is_its_own_outcome_with_its_details() -> None:
    events, result = _stream("anthropic-messages", anthropic_refusal(DETAILS))
    (choice,) = result.choices
    assert (choice.finish_reason, choice.raw_finish_reason) == ("refusal", "refusal")
    assert choice.refusal == RefusalDetails(
        category="cyber", explanation="Exploit development.", raw=DETAILS
    )
    (finished,) = [e for e in events if isinstance(e, ChoiceFinished)]
    assert finished.refusal == choice.refusal
    assert result.unknown_items == ()  # stop_details is read, not handed on
    assert choice.to_dict()["refusal"] == {k: DETAILS[k] for k in ("category", "explanation")}


def test_a_refusal_without_details_and_a_whole_message() -> None:
    _, result = _stream("anthropic-messages", anthropic_refusal(None))
    assert (result.choices[0].finish_reason, result.choices[0].refusal) == ("refusal", None)
    body = {
        "type": "message",
        "content": [{"type": "text", "text": "No."}],
        "stop_reason": "refusal",
        "stop_details": {"type": "refusal", "category": None, "explanation": None},
    }
    whole = decode_response("anthropic-messages", body).choices[0]
    assert whole.finish_reason == "refusal"
    assert whole.refusal == RefusalDetails(raw=body["stop_details"])


def test_stop_details_of_another_kind_is_handed_on() -> None:
    _, result = _stream("anthropic-messages", anthropic_refusal({"type": "later", "x": 1}))
    assert [u.type for u in result.unknown_items] == ["stop_details"]
    assert result.choices[0].refusal is None


def test_every_anthropic_stop_reason_has_its_own_word() -> None:
    table = anthropic.RAW_FINISH_REASONS
    assert set(get_args(StopReason)) <= set(table)
    assert (table["refusal"], table["pause_turn"]) == ("refusal", "paused")


# -- Responses: steered, unknown incomplete reasons, refusals ----------------------


def responses_end(status: str, reason: str | None = None) -> bytes:
    response: dict[str, Any] = {"id": "resp_1", "status": status}
    if reason is not None:
        response["incomplete_details"] = {"reason": reason}
    return _sse(
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_text.delta", "item_id": "m", "content_index": 0, "delta": "Hal"},
        {"type": f"response.{status}", "response": response},
    )


@pytest.mark.parametrize(
    ("reason", "finish"),
    [
        ("steered", "steered"),
        ("max_output_tokens", "length"),
        ("max_messages", "length"),
        ("content_filter", "content_filter"),
        ("a_later_reason", "other"),
        (None, "other"),
    ],
)
def test_an_incomplete_response_says_why(reason: str | None, finish: str) -> None:
    _, result = _stream("openai-responses", responses_end("incomplete", reason))
    choice = result.choices[0]
    assert choice.finish_reason == finish
    assert choice.raw_finish_reason == (reason or "incomplete")


def test_every_incomplete_reason_of_the_sdk_is_in_the_table() -> None:
    details = get_args(Response.model_fields["incomplete_details"].annotation)[0]
    words = get_args(details.model_fields["reason"].annotation.__args__[0])
    assert set(words) == set(openai_responses.INCOMPLETE_REASONS)


def test_a_responses_refusal_is_a_refusal() -> None:
    body = {
        "status": "completed",
        "output": [{"type": "message", "content": [{"type": "refusal", "refusal": "No."}]}],
    }
    assert decode_response("openai-responses", body).choices[0].finish_reason == "refusal"


# -- Gemini Interactions: requires_continuation ------------------------------------


def paused_interaction() -> bytes:
    return sse(
        created(),
        {"event_type": "step.start", "index": 0, "step": {"type": "model_output", "content": []}},
        {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": "Part one"}},
        {"event_type": "step.stop", "index": 0},
        {
            "event_type": "interaction.completed",
            "interaction": {
                "id": "v1_abc",
                "status": "requires_continuation",
                "continuation_token": "tok_1",
            },
        },
    )


def test_requires_continuation_is_a_pause_with_its_token() -> None:
    _, result = decode(paused_interaction())
    (choice,) = result.choices
    assert (choice.finish_reason, choice.raw_finish_reason) == ("paused", "requires_continuation")
    kept = [{k: v for k, v in i.items() if k != "from_dialect"} for i in choice.provider_state]
    assert {"type": "continuation", "token": "tok_1"} in kept


def test_the_paused_interaction_is_continued_with_its_token() -> None:
    _, result = decode(paused_interaction())
    paused = AssistantMessage.from_choice(result.choices[0])
    question = UserMessage("Write a long story.")
    body = gemini_interactions.encode_request(model="g", messages=[question, paused])
    assert body["continuation_token"] == "tok_1"
    # Not chained: the original input again, without the paused turn.
    assert [s["type"] for s in body["input"]] == ["user_input"]
    chained = gemini_interactions.encode_request(model="g", messages=[question, paused], chain=True)
    assert chained["continuation_token"] == "tok_1"
    assert chained["previous_interaction_id"] == "v1_abc"
    assert "input" not in chained
    # Once continued, the token is not sent again.
    later = gemini_interactions.encode_request(
        model="g", messages=[question, paused, AssistantMessage(text="Part two"), UserMessage("ok")]
    )
    assert "continuation_token" not in later


def test_the_agent_continues_a_pause_and_a_steered_turn() -> None:
    for reason in ("paused", "steered"):
        end = Replied(ChoiceResult(text="so far", finish_reason=reason), turn=1)  # type: ignore[arg-type]
        assert next_step(end, max_turns=5, stream_retries=0) == ContinueTurn()
    refused = Replied(ChoiceResult(text="No.", finish_reason="refusal"), turn=1)
    assert next_step(refused, max_turns=5, stream_retries=0) == Finish("answered")
    assert {"refusal", "steered", "paused"} <= set(FINISH_REASONS)


# -- Responses: a client-executed tool search --------------------------------------

SEARCH = {
    "type": "tool_search_call",
    "id": "ts_1",
    "call_id": "call_ts",
    "execution": "client",
    "status": "completed",
    "arguments": {"query": "calendar tools"},
}


def search_stream(item: dict[str, Any]) -> bytes:
    return _sse(
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {"id": "resp_1", "status": "completed"}},
    )


def test_the_sdk_shape_of_a_client_tool_search() -> None:
    assert ResponseToolSearchCall.model_validate(SEARCH).execution == "client"


def test_a_client_tool_search_is_a_call_not_an_answer() -> None:
    _, result = _stream("openai-responses", search_stream(SEARCH))
    (choice,) = result.choices
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.tool_calls
    assert (call.id, call.name, call.arguments) == ("call_ts", "tool_search", SEARCH["arguments"])
    step = next_step(Replied(choice, turn=1), max_turns=5, stream_retries=0)
    assert isinstance(step, RunTools)


def test_a_server_tool_search_is_still_provider_state() -> None:
    _, result = _stream("openai-responses", search_stream({**SEARCH, "execution": "server"}))
    (choice,) = result.choices
    assert (choice.finish_reason, choice.tool_calls) == ("stop", ())
    assert any(i.get("type") == "tool_search_call" for i in choice.provider_state)


def test_a_tool_search_answer_goes_back_as_its_output() -> None:
    _, result = _stream("openai-responses", search_stream(SEARCH))
    assistant = AssistantMessage.from_choice(result.choices[0])
    found = [{"type": "function", "name": "book", "parameters": {"type": "object"}}]
    answer = ToolResultMessage("call_ts", "tool_search", json.dumps({"tools": found}))
    _, items = openai_responses.encode_input([assistant, answer])
    assert items == [
        SEARCH,
        {
            "type": "tool_search_output",
            "call_id": "call_ts",
            "execution": "client",
            "status": "completed",
            "tools": found,
        },
    ]


def test_a_tool_search_with_no_hook_is_answered_with_no_tools_and_told_why() -> None:
    _, result = _stream("openai-responses", search_stream(SEARCH))
    assistant = AssistantMessage.from_choice(result.choices[0])
    refused = ToolResultMessage("call_ts", "tool_search", '{"error": "refused"}', is_error=True)
    _, items = openai_responses.encode_input([assistant, refused])
    assert items[:2] == [
        SEARCH,
        {
            "type": "tool_search_output",
            "call_id": "call_ts",
            "execution": "client",
            "status": "completed",
            "tools": [],
        },
    ]
    assert items[2] == {
        "role": "user",
        "content": 'The tool search call_ts found no tools: {"error": "refused"}',
    }
