"""Nothing an Interactions stream sends is dropped, and what toolwire writes
is what google-genai reads.

Every step, step-delta and SSE event type of google-genai's Interactions
unions (``Step``, ``StepDeltaData``, ``InteractionSSEEvent``) is listed
with the place it lands in (as in ``test_nothing_dropped.py``): ``call``,
``text``, ``reasoning``, ``state:<type>`` (provider state, sent back),
``unknown`` (an ``UnknownItem``), ``echo`` (the request's own input, given
back by the server: nothing to hand on). A type a future SDK adds fails
``test_every_sdk_type_is_listed`` until someone decides where it lands.

The emulation server's streams and whole interactions, and the request
bodies toolwire writes, are read with the SDK's own models: none is an
unknown variant, and no field is refused.
"""

from __future__ import annotations

import json
import typing
from typing import Any

import pytest
from google.genai._gaos.types import interactions as sdk
from pydantic import TypeAdapter

from tests.stream.test_gemini_interactions import (
    CONVERSATION,
    created,
    delta,
    sse,
    start,
    stop,
)
from toolwire import StreamDecoder
from toolwire.events import ReasoningDelta, TextDelta, ToolCallReady, UnknownItem
from toolwire.stream.codecs import gemini_interactions
from toolwire.stream.codecs.emulation import Reply, ReplyCall
from toolwire.stream.codecs.emulation.gemini_interactions import (
    GeminiInteractionsEncoder,
    decode_request,
)

DIALECT_NAME = "gemini-interactions"
BUILTIN = sorted(gemini_interactions.BUILTIN_STEPS)


def union_literals(union: Any, key: str = "type") -> list[str]:
    """The discriminator literals of an SDK union, its catch-all left out."""
    args = typing.get_args(union)
    if typing.get_origin(union) is typing.Annotated:
        args = typing.get_args(args[0])
    out: list[str] = []
    for member in args:
        out.extend(typing.get_args(member.model_fields[key].annotation))
    return [name for name in out if name != "UNKNOWN"]


STEPS: dict[str, str] = {
    "function_call": "call",
    "model_output": "text",
    "thought": "state:thought",
    "user_input": "echo",
    "function_result": "echo",
    **{name: "state:step" for name in BUILTIN},
}

DELTAS: dict[str, str] = {
    "arguments_delta": "call",
    "text": "text",
    "thought_summary": "reasoning",
    "thought_signature": "state:thought",
    "text_annotation_delta": "unknown",
    "audio": "unknown",
    "image": "unknown",
    "video": "unknown",
    "document": "unknown",
    "function_result": "unknown",
    **{name: "state:step" for name in BUILTIN},
}

CONTENTS: dict[str, str] = {
    "text": "text",
    "image": "unknown",
    "audio": "unknown",
    "video": "unknown",
    "document": "unknown",
}
"""What a ``model_output`` step's content items give."""

EVENTS: dict[str, str] = {
    "interaction.created": "state:interaction",
    "interaction.status_update": "usage",
    "interaction.completed": "finish",
    "step.start": "step",
    "step.delta": "step",
    "step.stop": "step",
    "error": "error",
}


@pytest.mark.parametrize(
    ("union", "key", "table"),
    [
        (sdk.Step, "type", STEPS),
        (sdk.StepDeltaData, "type", DELTAS),
        (sdk.InteractionSSEEvent, "event_type", EVENTS),
        (sdk.Content, "type", CONTENTS),
    ],
    ids=["steps", "deltas", "events", "contents"],
)
def test_every_sdk_type_is_listed(union: Any, key: str, table: dict[str, str]) -> None:
    assert sorted(union_literals(union, key)) == sorted(table)


def landing(body: bytes) -> set[str]:
    decoder = StreamDecoder(DIALECT_NAME)
    events = decoder.feed(body) + decoder.close()
    result = decoder.result()
    assert result.error is None, result.error
    found: set[str] = set()
    for event in events:
        if isinstance(event, ToolCallReady):
            found.add("call")
        elif isinstance(event, TextDelta):
            found.add("text")
        elif isinstance(event, ReasoningDelta):
            found.add("reasoning")
        elif isinstance(event, UnknownItem):
            found.add("unknown")
    found.update(f"state:{item['type']}" for item in result.choices[0].provider_state)
    return found - {"state:interaction"}


def end() -> dict[str, Any]:
    return {
        "event_type": "interaction.completed",
        "interaction": {"id": "v1_x", "status": "completed"},
    }


def step_of(kind: str) -> dict[str, Any]:
    if kind == "function_call":
        return {"type": kind, "id": "c1", "name": "f", "arguments": {"a": 1}}
    if kind in ("model_output", "user_input"):
        return {"type": kind, "content": [{"type": "text", "text": "hi"}]}
    if kind == "thought":
        return {"type": kind, "signature": "c2ln", "summary": []}
    if kind == "function_result":
        return {"type": kind, "call_id": "c1", "result": "ok"}
    return {"type": kind, "id": "s1"}


@pytest.mark.parametrize("kind", sorted(STEPS))
def test_steps_land(kind: str) -> None:
    found = landing(sse(created("v1_x"), start(0, step_of(kind)), stop(0), end()))
    expected = STEPS[kind]
    assert found == (set() if expected == "echo" else {expected})


@pytest.mark.parametrize("kind", sorted(CONTENTS))
def test_output_contents_land(kind: str) -> None:
    content = {"type": kind, "text": "hi"} if kind == "text" else {"type": kind, "data": "AAAA"}
    step = {"type": "model_output", "content": [content]}
    assert landing(sse(created("v1_x"), start(0, step), stop(0), end())) == {CONTENTS[kind]}


def delta_of(kind: str) -> dict[str, Any]:
    if kind == "arguments_delta":
        return {"type": kind, "arguments": '{"a": 1}'}
    if kind == "text":
        return {"type": kind, "text": "hi"}
    if kind == "thought_summary":
        return {"type": kind, "content": {"type": "text", "text": "hmm"}}
    if kind == "thought_signature":
        return {"type": kind, "signature": "c2ln"}
    return {"type": kind, "data": "AAAA"}


def step_for_delta(kind: str) -> dict[str, Any]:
    if kind == "arguments_delta":
        return {"type": "function_call", "id": "c1", "name": "f", "arguments": {}}
    if kind.startswith("thought_"):
        return {"type": "thought"}
    if kind in gemini_interactions.BUILTIN_STEPS:
        return {"type": kind, "id": "s1"}
    return {"type": "model_output", "content": []}


@pytest.mark.parametrize("kind", sorted(DELTAS))
def test_deltas_land(kind: str) -> None:
    body = sse(
        created("v1_x"), start(0, step_for_delta(kind)), delta(0, delta_of(kind)), stop(0), end()
    )
    found = landing(body)
    expected = DELTAS[kind]
    # A thought's deltas land in its step, itself kept as state.
    assert found == ({expected, "state:thought"} if kind.startswith("thought_") else {expected})


# -- what toolwire writes, read by the SDK -------------------------------------------

EVENT = TypeAdapter(sdk.InteractionSSEEvent)


def reply() -> Reply:
    request = decode_request(
        {"model": "gemini-3-flash-preview", "input": "杭州天气怎么样?", "stream": True}
    )
    calls = (
        ReplyCall(0, "get_weather", '{"city":"杭州"}', {"city": "杭州"}),
        ReplyCall(1, "get_current_time", "{}", {}),
    )
    return Reply(
        request=request,
        turn=0,
        reasoning="Weather and time.",
        text="Let me check.",
        calls=calls,
        chunk_size=5,
        created=0,
        input_tokens=10,
    )


def test_the_emulation_stream_is_read_by_the_sdk_with_no_unknown_variant() -> None:
    encoder = GeminiInteractionsEncoder()
    for frame in encoder.stream(reply()):
        event = EVENT.validate_python(json.loads(encoder.dumps(frame.payload)))
        assert not getattr(event, "is_unknown", False), frame.payload
        for inner in (getattr(event, "step", None), getattr(event, "delta", None)):
            assert not getattr(inner, "is_unknown", False), frame.payload
        assert event.event_id


def test_the_emulation_whole_interaction_is_read_by_the_sdk() -> None:
    body = GeminiInteractionsEncoder().body(reply())
    interaction = sdk.Interaction.model_validate(body)
    assert interaction.steps is not None
    assert [type(s).__name__ for s in interaction.steps] == [
        "ThoughtStep",
        "ModelOutputStep",
        "FunctionCallStep",
        "FunctionCallStep",
    ]


def test_the_request_body_is_read_by_the_sdk() -> None:
    body = gemini_interactions.encode_request(
        model="gemini-3-flash-preview",
        messages=CONVERSATION,
        tools=[{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}],
        tool_choice="required",
        max_tokens=100,
    )
    request = sdk.CreateModelInteraction.model_validate(body)
    assert request.input is not None and len(request.input) == len(body["input"])
    names = [type(step).__name__ for step in request.input]
    assert "UnknownStep" not in names
    assert names.count("FunctionResultStep") == 2
