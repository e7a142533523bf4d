"""What the decoder checks of a kept stream reopened after a cut
(``StreamDecoder.continue_after``), and of the shapes no stream may have: an
item started twice, a call whose end names another call. Sans-I/O: bytes in,
events out (the same streams over HTTP: ``tests/reliability/test_hostile_resume.py``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests._kept_streams import THEFT, interaction_events, response_events, sse
from toolwire import StreamDecoder
from toolwire.errors import (
    ContinuationMismatch,
    RemoteProtocolError,
    StreamErrorEvent,
    UsageError,
)
from toolwire.events import Event, StreamFailed, ToolCallInvalid, ToolCallReady
from toolwire.types import StreamResult

RESPONSES = "openai-responses"
INTERACTIONS = "gemini-interactions"


def cut_and_continue(
    dialect: str, events: list[dict[str, Any]], cut_after: int, reopened: list[dict[str, Any]]
) -> tuple[list[Event], StreamResult]:
    """``events`` read up to ``cut_after`` (and half the next), then ``reopened``."""
    chunks = sse(events)
    decoder = StreamDecoder(dialect)
    out = decoder.feed(b"".join(chunks[: cut_after + 1]) + chunks[cut_after + 1][:20])
    cursor = decoder.cursor
    assert cursor is not None
    decoder.drop_partial()
    decoder.continue_after(*cursor)
    out += decoder.feed(b"".join(sse(reopened))) + decoder.close()
    return out, decoder.result()


def read(dialect: str, events: list[dict[str, Any]]) -> tuple[list[Event], StreamResult]:
    decoder = StreamDecoder(dialect)
    out = decoder.feed(b"".join(sse(events))) + decoder.close()
    return out, decoder.result()


def ready(events: list[Event]) -> list[str]:
    return [e.call.id for e in events if isinstance(e, ToolCallReady)]


# -- Responses: numbers and the response's id --------------------------------------------

CALL = response_events("resp_a", call_id="call_a")
"""created, in_progress, the call added (2), six deltas (3-8), done (9, 10), the end (11)."""


def test_a_continuation_that_skips_events_is_refused() -> None:
    _, result = cut_and_continue(RESPONSES, CALL, 4, CALL[6:])
    assert isinstance(result.error, ContinuationMismatch)
    assert (result.error.stream_id, result.error.after) == ("resp_a", "4")
    assert "events 5 to 5 never came" in result.error.message
    assert not result.tool_calls


def test_a_continuation_event_without_a_number_is_refused() -> None:
    unnumbered = {k: v for k, v in CALL[5].items() if k != "sequence_number"}
    _, result = cut_and_continue(RESPONSES, CALL, 4, [unnumbered, *CALL[6:]])
    assert isinstance(result.error, ContinuationMismatch)
    assert "has no number" in result.error.message


def test_the_providers_own_error_in_a_continuation_is_reported_as_such() -> None:
    error = {"type": "error", "code": "server_error", "message": "The server had an error."}
    _, result = cut_and_continue(RESPONSES, CALL, 4, [error])
    assert isinstance(result.error, StreamErrorEvent)


def test_a_stream_read_again_from_its_first_event_must_be_that_stream() -> None:
    decoder = StreamDecoder(RESPONSES)
    decoder.continue_after("resp_a", None)
    events = decoder.feed(b"".join(sse(response_events("resp_b", call_id="call_b"))))
    assert isinstance(decoder.error, ContinuationMismatch)
    assert "response resp_b, not resp_a" in decoder.error.message
    assert ready(events) == [] and isinstance(events[-1], StreamFailed)


def test_another_responses_end_fails_even_a_stream_read_once() -> None:
    other = response_events("resp_b")[-1]
    _, result = read(RESPONSES, [*CALL[:-1], {**other, "sequence_number": 11}])
    assert type(result.error) is RemoteProtocolError
    assert "response.completed event of response resp_b, not resp_a" in result.error.message


def test_a_call_item_added_twice_is_refused() -> None:
    events, result = read(RESPONSES, [*CALL[:3], CALL[2], *CALL[3:]])
    assert type(result.error) is RemoteProtocolError
    assert "output item 0 (a function_call) was added twice" in result.error.message
    assert ready(events) == []


# -- Responses: a call's end names the call that started ------------------------------


def test_an_end_that_changes_an_open_calls_id_makes_it_invalid() -> None:
    events, result = read(
        RESPONSES, response_events("resp_a", call_id="call_a", ended_call_id="call_b", deltas=False)
    )
    assert result.error is None and result.tool_calls == ()
    [invalid] = [e.call for e in events if isinstance(e, ToolCallInvalid)]
    assert invalid.id == "call_a" and invalid.name == "pay"
    assert invalid.error == (
        "the call changed between its start and its end: call_id 'call_a' became 'call_b'"
    )


def test_an_end_that_changes_a_ready_calls_id_fails_the_stream() -> None:
    events, result = read(RESPONSES, response_events("resp_a", call_id="call_a", ended_call_id="b"))
    assert ready(events) == ["call_a"]  # its arguments were whole: handed on, then
    assert isinstance(result.error, RemoteProtocolError)
    assert "an end that changes it (call_id 'call_a' became 'b')" in result.error.message


def test_an_end_that_renames_the_call_makes_it_invalid() -> None:
    events = response_events("resp_a", call_id="call_a", deltas=False)
    done = events[-2]
    events[-2] = {**done, "item": {**done["item"], "name": "refund"}}
    out, result = read(RESPONSES, events)
    [invalid] = [e.call for e in out if isinstance(e, ToolCallInvalid)]
    assert invalid.name == "pay" and "name 'pay' became 'refund'" in invalid.error
    assert result.error is None and result.tool_calls == ()


def test_an_end_may_give_the_id_its_start_did_not() -> None:
    events = response_events("resp_a", call_id="call_a", deltas=False)
    added = events[2]
    events[2] = {**added, "item": {**added["item"], "call_id": ""}}
    out, result = read(RESPONSES, events)
    assert result.error is None and ready(out) == ["call_a"]


# -- Interactions: event ids and the interaction's id -----------------------------------

STEPS = interaction_events("v1_a", call_id="call_a")
"""created, the call started (1), six deltas (2-7), stopped (8), status (9), the end (10)."""


def test_an_interaction_continuation_event_without_an_id_is_refused() -> None:
    anonymous = {k: v for k, v in STEPS[5].items() if k != "event_id"}
    _, result = cut_and_continue(INTERACTIONS, STEPS, 4, [anonymous, *STEPS[6:]])
    assert isinstance(result.error, ContinuationMismatch)
    assert "a step.delta event has no event_id" in result.error.message


def test_an_event_id_that_comes_twice_fails_even_a_stream_read_once() -> None:
    _, result = read(INTERACTIONS, [*STEPS[:5], STEPS[4], *STEPS[5:]])
    assert type(result.error) is RemoteProtocolError
    assert f"event {STEPS[4]['event_id']} (step.delta) came twice" in result.error.message


@pytest.mark.parametrize("where", ["interaction.status_update", "interaction.completed"])
def test_another_interaction_named_in_a_continuation_is_refused(where: str) -> None:
    other = {e["event_type"]: e for e in interaction_events("v1_b")}
    tail = [{**e, "event_id": f"x{n}"} for n, e in enumerate(STEPS[5:-2])]
    _, result = cut_and_continue(INTERACTIONS, STEPS, 4, [*tail, other[where]])
    assert isinstance(result.error, ContinuationMismatch)
    assert f"{where} event of interaction v1_b, not v1_a" in result.error.message
    assert not result.complete  # the call it had made whole goes nowhere


def test_an_interaction_read_again_from_its_first_event_must_be_that_one() -> None:
    decoder = StreamDecoder(INTERACTIONS)
    decoder.continue_after("v1_a", None)
    decoder.feed(b"".join(sse(interaction_events("v1_b", call_id="call_b"))))
    assert isinstance(decoder.error, ContinuationMismatch)
    assert "interaction.created event of interaction v1_b" in decoder.error.message


def renumbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with ids of their own, as a replay that mints new ids sends them."""
    return [{**e, "event_id": f"new{n}"} for n, e in enumerate(events)]


@pytest.mark.parametrize(
    ("case", "stream", "said"),
    [
        ("start twice", [*STEPS[:3], *renumbered(STEPS[1:])], "step 0 started twice"),
        ("delta after stop", [*STEPS[:9], *renumbered(STEPS[7:])], "delta for step 0, which"),
        ("stop twice", [*STEPS[:9], *renumbered(STEPS[8:])], "step 0 ended twice"),
    ],
)
def test_a_step_starts_streams_and_stops_once(
    case: str, stream: list[dict[str, Any]], said: str
) -> None:
    events, result = read(INTERACTIONS, stream)
    assert type(result.error) is RemoteProtocolError, case
    assert said in result.error.message
    assert len(ready(events)) <= 1


def test_a_replay_with_new_ids_in_a_continuation_is_refused() -> None:
    _, result = cut_and_continue(INTERACTIONS, STEPS, 4, renumbered(STEPS))
    assert isinstance(result.error, ContinuationMismatch)
    assert "step 0 started twice" in result.error.message


# -- what continue_after accepts ---------------------------------------------------------


def test_continue_after_names_where_the_decoder_stands() -> None:
    decoder = StreamDecoder(RESPONSES)
    decoder.feed(b"".join(sse(CALL[:4])))
    assert decoder.cursor == ("resp_a", "3")
    for stream_id, after in [("resp_b", "3"), ("resp_a", "2"), ("resp_a", None)]:
        with pytest.raises(UsageError, match="stands at event 3 of stream resp_a"):
            decoder.continue_after(stream_id, after)
    with pytest.raises(UsageError, match="stands at nothing read"):
        StreamDecoder(INTERACTIONS).continue_after("v1_a", "e3")


def test_only_an_open_decoder_of_a_kept_dialect_continues_a_stream() -> None:
    for decoder in (StreamDecoder("openai-chat"), StreamDecoder("auto")):
        with pytest.raises(UsageError, match="whose streams are kept"):
            decoder.continue_after("x", None)
    closed = StreamDecoder(RESPONSES)
    closed.close()
    with pytest.raises(UsageError):
        closed.continue_after("resp_a", None)


def test_the_error_says_which_stream_and_where() -> None:
    _, result = cut_and_continue(RESPONSES, CALL, 4, CALL)
    error = result.error
    assert isinstance(error, ContinuationMismatch)
    assert error.to_dict() | {"raw": None} == {
        "type": "continuation_mismatch",
        "message": error.message,
        "raw": None,
        "stream_id": "resp_a",
        "after": "4",
    }
    assert error.message == (
        "openai-responses: stream resp_a reopened after event 4 does not continue it: "
        "event 0 (response.created) came after event 4: read already"
    )
    assert json.loads(error.raw or "")["sequence_number"] == 0


# -- the same hole in other dialects: a block started twice ------------------------------


def anthropic(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def tool_use(index: int, call_id: str) -> dict[str, Any]:
    block = {"type": "tool_use", "id": call_id, "name": "pay", "input": {}}
    return {"type": "content_block_start", "index": index, "content_block": block}


def test_an_anthropic_block_started_twice_is_never_a_second_call() -> None:
    body = anthropic(
        {"type": "message_start", "message": {"id": "msg_1", "model": "m", "content": []}},
        tool_use(0, "toolu_a"),
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"to":"bob",'},
        },
        tool_use(0, "toolu_b"),
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": THEFT},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    )
    decoder = StreamDecoder("anthropic-messages")
    events = decoder.feed(body) + decoder.close()
    assert ready(events) == []
    assert isinstance(decoder.error, RemoteProtocolError)
    assert "content block 0 started twice" in decoder.error.message


def test_a_bedrock_tool_use_block_started_twice_is_never_a_second_call() -> None:
    from tests.stream.test_bedrock import args, converse, start, stop

    body = converse(
        ("messageStart", {"role": "assistant"}),
        start(0, "tooluse_a", "pay"),
        args(0, '{"to":"bob",'),
        stop(0),
        start(0, "tooluse_b", "pay"),
        args(0, THEFT),
        stop(0),
        ("messageStop", {"stopReason": "tool_use"}),
    )
    decoder = StreamDecoder("bedrock-converse")
    events = decoder.feed(body) + decoder.close()
    assert ready(events) == []
    assert isinstance(decoder.error, RemoteProtocolError)
    assert "tool use block 0 started twice" in decoder.error.message
