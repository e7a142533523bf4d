"""Stream events of a vocabulary later than toolwire's: each an ``UnknownItem``
with its payload, the stream read on around it; the events a dialect
documents as carrying nothing (a keep-alive, a block's end) are read as
nothing, and its other events as before."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolwire import StreamDecoder
from toolwire.events import Event, ReasoningDelta, TextDelta, ToolCallReady, UnknownItem
from toolwire.stream.framing.eventstream import event_message

LATER = {"type": "annotation_added", "annotation": {"note": "杭州", "n": 3}}


def sse(frames: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    return b"".join(
        ((f"event: {event}\n" if event else "") + f"data: {json.dumps(payload)}\n\n").encode()
        for event, payload in frames
    )


def decode(dialect: str, body: bytes) -> tuple[list[Event], Any]:
    decoder = StreamDecoder(dialect)
    events = decoder.feed(body) + decoder.close()
    result = decoder.result()
    assert result.error is None, result.error
    return events, result


def unknown(events: list[Event]) -> list[UnknownItem]:
    return [e for e in events if isinstance(e, UnknownItem)]


def anthropic(*middle: dict[str, Any]) -> bytes:
    frames: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "m", "content": []}},
        {"type": "ping"},
        *middle,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    ]
    return sse([(f["type"], f) for f in frames])


def test_an_anthropic_event_of_a_later_type_is_an_unknown_item() -> None:
    events, result = decode("anthropic-messages", anthropic(LATER))

    (item,) = unknown(events)
    assert (item.dialect, item.type, item.payload) == (
        "anthropic-messages",
        "annotation_added",
        LATER,
    )
    assert result.choices[0].text == "hi"
    assert result.choices[0].finish_reason == "stop"


def test_an_anthropic_ping_is_read_as_nothing() -> None:
    events, _ = decode("anthropic-messages", anthropic())

    assert unknown(events) == []


def converse(*middle: tuple[str, dict[str, Any]]) -> bytes:
    events = [
        ("messageStart", {"role": "assistant"}),
        *middle,
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "end_turn"}),
        ("metadata", {"usage": {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4}}),
    ]
    return b"".join(event_message(name, json.dumps(body).encode()) for name, body in events)


def test_a_bedrock_event_of_a_later_type_is_an_unknown_item() -> None:
    later = {"annotation": {"note": "杭州"}, "p": "abc"}
    events, result = decode("bedrock-converse", converse(("annotationAdded", later)))

    (item,) = unknown(events)
    assert (item.dialect, item.type, item.payload) == ("bedrock-converse", "annotationAdded", later)
    assert result.choices[0].text == "hi"
    assert result.usage is not None and result.usage.output_tokens == 1


def test_a_bedrock_message_start_is_read_as_nothing() -> None:
    events, _ = decode("bedrock-converse", converse())

    assert unknown(events) == []


def cohere(*middle: dict[str, Any]) -> bytes:
    frames: list[dict[str, Any]] = [
        {"type": "message-start", "id": "m1", "delta": {"message": {"role": "assistant"}}},
        *middle,
        {"type": "message-end", "delta": {"finish_reason": "COMPLETE"}},
    ]
    return sse([(f["type"], f) for f in frames])


def content(kind: str, **value: Any) -> dict[str, Any]:
    return {"type": kind, "index": 0, "delta": {"message": {"content": value}}}


CITATION = {
    "type": "citation-start",
    "index": 0,
    "delta": {"message": {"citations": {"start": 0, "end": 2, "text": "hi", "sources": []}}},
}


@pytest.mark.parametrize(
    "event",
    [CITATION, {"type": "citation-end", "index": 0}, {"type": "debug", "prompt": "p"}, LATER],
    ids=lambda e: e["type"],
)
def test_a_cohere_event_it_does_not_read_is_an_unknown_item(event: dict[str, Any]) -> None:
    events, result = decode(
        "cohere-v2", cohere(content("content-start", type="text", text=""), event)
    )

    (item,) = unknown(events)
    assert (item.dialect, item.type, item.payload) == ("cohere-v2", event["type"], event)
    assert result.choices[0].finish_reason == "stop"


def test_cohere_text_and_thinking_are_read_from_a_block_start_and_its_deltas() -> None:
    events, result = decode(
        "cohere-v2",
        cohere(
            content("content-start", type="thinking", thinking="Let me "),
            content("content-delta", thinking="think."),
            {"type": "content-end", "index": 0},
            content("content-start", type="text", text="Hel"),
            content("content-delta", text="lo"),
            {"type": "content-end", "index": 1},
        ),
    )

    assert unknown(events) == []
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Let me think."
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello"
    assert result.choices[0].text == "Hello"
    assert not any(isinstance(e, ToolCallReady) for e in events)


def test_bedrock_blocks_and_fields_it_does_not_read_are_unknown_items() -> None:
    citation = {"citation": {"title": "杭州", "location": {"documentChar": {"start": 0}}}}
    result_start = {"toolResult": {"toolUseId": "t1"}}
    trace = {"guardrail": {"modelOutput": ["..."]}}
    body = b"".join(
        event_message(name, json.dumps(payload).encode())
        for name, payload in [
            ("messageStart", {"role": "assistant"}),
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "hi"}}),
            ("contentBlockDelta", {"contentBlockIndex": 0, "delta": citation, "p": "ab"}),
            ("contentBlockStop", {"contentBlockIndex": 0}),
            ("contentBlockStart", {"contentBlockIndex": 1, "start": result_start}),
            ("contentBlockStop", {"contentBlockIndex": 1}),
            ("messageStop", {"stopReason": "end_turn", "additionalModelResponseFields": {"x": 1}}),
            (
                "metadata",
                {"usage": {"inputTokens": 1, "outputTokens": 1}, "trace": trace, "p": "c"},
            ),
        ]
    )
    events, result = decode("bedrock-converse", body)

    assert [(u.type, u.payload) for u in unknown(events)] == [
        ("citation", citation),
        ("toolResult", result_start),
        ("additionalModelResponseFields", {"additionalModelResponseFields": {"x": 1}}),
        ("trace", {"trace": trace}),
    ]
    assert result.choices[0].text == "hi" and result.usage is not None


def test_a_whole_bedrock_response_hands_on_what_it_does_not_read() -> None:
    from toolwire.stream.decoder import decode_response

    citations = {"citationsContent": {"citations": [{"title": "t"}]}}
    body = {
        "output": {"message": {"role": "assistant", "content": [{"text": "hi"}, citations]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
        "metrics": {"latencyMs": 12},
    }
    result = decode_response("bedrock-converse", body)

    assert result.error is None and result.text == "hi"
    assert [(u.type, u.payload) for u in result.unknown_items] == [
        ("citationsContent", citations),
        ("metrics", {"metrics": {"latencyMs": 12}}),
    ]


def test_members_of_an_anthropic_message_stop_are_unknown_items() -> None:
    metrics = {"inputTokenCount": 3, "outputTokenCount": 1, "invocationLatency": 90}
    body = anthropic().replace(
        b'data: {"type": "message_stop"}',
        b'data: {"type": "message_stop", "amazon-bedrock-invocationMetrics": '
        + json.dumps(metrics).encode()
        + b"}",
    )
    events, result = decode("anthropic-messages", body)

    assert [(u.type, u.payload) for u in unknown(events)] == [
        ("amazon-bedrock-invocationMetrics", {"amazon-bedrock-invocationMetrics": metrics})
    ]
    assert result.complete
