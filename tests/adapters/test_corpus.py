"""Every recorded trace the official SDKs can stream, through the SDK and the adapter.

The emulation server replays each trace's exact bytes; the real ``openai`` and
``anthropic`` SDKs parse them (swallowing ``[DONE]``, raising on error events,
building their models leniently) and the adapter must still give the
sidecar's expected result. The same payloads are also fed as SDK objects built
directly, without HTTP.
"""

from __future__ import annotations

import json
import typing
from typing import Any

import anthropic
import openai
import pydantic
import pytest
from anthropic.types import RawMessageStreamEvent
from openai.types.chat import ChatCompletionChunk
from openai.types.responses import ResponseStreamEvent

import toolwire.adapters as adapters
from tests.conftest import Trace
from tests.stream.test_conformance import check
from toolwire import (
    ChoiceFinished,
    StreamEnded,
    StreamErrorEvent,
    StreamFailed,
    StreamTruncated,
    ToolCallReady,
)
from toolwire.stream.framing import SSEDecoder
from toolwire.testing import EmulationServer

from .conftest import SDK_ASYNC_CLIENT, SDK_TRACES, USER, trace_id

pytestmark = pytest.mark.anyio

assert len(SDK_TRACES) == 115, "the conformance corpus is incomplete"


def payloads(trace: Trace) -> list[tuple[str, str]]:
    """The trace's SSE events as ``(event, data)``, as a server sent them."""
    decoder = SSEDecoder()
    return [(e.event, e.data) for e in [*decoder.feed(trace.body), *decoder.close()]]


def sdk_stream(
    trace: Trace,
    server: EmulationServer,
    openai_client: openai.OpenAI,
    anthropic_client: anthropic.Anthropic,
) -> adapters.AdaptedStream:
    if trace.dialect == "openai-chat":
        chat = openai_client.with_options(base_url=server.url_for(trace.dialect))
        stream = chat.chat.completions.create(model="m", messages=USER, stream=True)
        return adapters.openai_chat(stream)
    if trace.dialect == "openai-responses":
        responses = openai_client.with_options(base_url=server.url_for(trace.dialect))
        return adapters.openai_responses(
            responses.responses.create(model="m", input="x", stream=True)
        )
    messages = anthropic_client.with_options(base_url=server.url_for(trace.dialect))
    stream = messages.messages.create(model="m", max_tokens=8, messages=USER, stream=True)
    return adapters.anthropic_messages(stream)


@pytest.mark.parametrize("trace", SDK_TRACES, ids=trace_id)
def test_trace_through_the_sdk(
    trace: Trace,
    replay_servers: dict[str, EmulationServer],
    openai_client: openai.OpenAI,
    anthropic_client: anthropic.Anthropic,
) -> None:
    events = sdk_stream(trace, replay_servers[trace.name], openai_client, anthropic_client)
    seen = list(events)
    assert events.finished
    result = events.result()
    check(trace, result.to_dict())
    ready = [e.call for e in seen if isinstance(e, ToolCallReady)]
    expected_calls = trace.expected.get("tool_calls", [])
    assert [c.arguments for c in ready] == [c["arguments"] for c in expected_calls]
    if trace.expected.get("cut"):
        assert isinstance(result.error, StreamTruncated)
        assert not result.complete
    elif "error" in trace.expected:
        assert isinstance(seen[-1], StreamFailed)
        assert isinstance(seen[-1].error, StreamErrorEvent)
        assert isinstance(seen[-1].error.__cause__, openai.APIError)
        assert not result.complete
    else:
        assert result.complete, result.error
        assert not any(isinstance(e, StreamFailed) for e in seen)


@SDK_ASYNC_CLIENT
async def test_every_trace_through_the_async_sdks(
    replay_servers: dict[str, EmulationServer],
) -> None:
    async with (
        openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0) as oa,
        anthropic.AsyncAnthropic(base_url="http://127.0.0.1:9", api_key="k", max_retries=0) as an,
    ):
        for trace in SDK_TRACES:
            url = replay_servers[trace.name].url_for(trace.dialect)
            events: adapters.AsyncAdaptedStream
            if trace.dialect == "openai-chat":
                chat = await oa.with_options(base_url=url).chat.completions.create(
                    model="m",
                    messages=USER,
                    stream=True,
                )
                events = adapters.aopenai_chat(chat)
            elif trace.dialect == "openai-responses":
                responses = await oa.with_options(base_url=url).responses.create(
                    model="m", input="x", stream=True
                )
                events = adapters.aopenai_responses(responses)
            else:
                messages = await an.with_options(base_url=url).messages.create(
                    model="m",
                    max_tokens=8,
                    messages=USER,
                    stream=True,
                )
                events = adapters.aanthropic_messages(messages)
            seen = [event async for event in events]
            assert events.finished and seen, trace.name
            check(trace, events.result().to_dict())


# -- SDK objects built directly ----------------------------------------------------


def _by_type(union: Any) -> dict[str, type[pydantic.BaseModel]]:
    """The members of an SDK event union, by their ``type`` literal."""
    members = typing.get_args(typing.get_args(union)[0])
    return {typing.get_args(m.model_fields["type"].annotation)[0]: m for m in members}


RESPONSE_EVENTS = _by_type(ResponseStreamEvent)
ANTHROPIC_EVENTS = _by_type(RawMessageStreamEvent)


def construct(dialect: str, payload: dict[str, Any]) -> object:
    """An SDK object built as the SDK builds them: leniently (``model_construct``
    recurses into nested models and keeps what it does not know)."""
    if dialect == "openai-chat":
        return ChatCompletionChunk.model_construct(**payload)
    table = RESPONSE_EVENTS if dialect == "openai-responses" else ANTHROPIC_EVENTS
    return table[payload["type"]].model_construct(**payload)


def sdk_objects(trace: Trace) -> list[object]:
    """What the SDK's iteration yields for the trace, minus what it swallows."""
    objects: list[object] = []
    for event, data in payloads(trace):
        if data.startswith("[DONE]") or event in ("ping", "error"):
            continue
        payload = json.loads(data)
        if trace.dialect == "openai-chat" and payload.get("error"):
            break  # openai-python raises APIError for a chunk holding an error
        objects.append(construct(trace.dialect, payload))
    return objects


def _no_end_marker_nor_finish(trace: Trace) -> bool:
    return (
        trace.dialect == "openai-chat"
        and '"finish_reason":"' not in trace.body.decode().replace(" ", "")
    )


@pytest.mark.parametrize("trace", SDK_TRACES, ids=trace_id)
def test_trace_as_constructed_objects(trace: Trace) -> None:
    objects = sdk_objects(trace)
    adapt = {
        "openai-chat": adapters.openai_chat,
        "openai-responses": adapters.openai_responses,
        "anthropic-messages": adapters.anthropic_messages,
    }[trace.dialect]
    events = adapt(objects)
    seen = list(events)
    result = events.result()
    if "error" in trace.expected or trace.expected.get("cut"):
        # The error event is the SDK's exception, never an object: without
        # it the stream just stops, and is reported as cut (unless its
        # choices had all finished before the error: OpenRouter's in-band one).
        assert not any(isinstance(e, ToolCallReady) for e in seen)
        if trace.dialect == "openai-chat" and result.choices[0].finish_reason is not None:
            assert result.error is None and result.tool_calls == ()
        else:
            assert isinstance(result.error, StreamTruncated)
        return
    if _no_end_marker_nor_finish(trace):
        # Only [DONE] (which the SDK swallows) said this stream was complete:
        # from bare objects it cannot be told from a cut one. The call whose
        # JSON closed is ready (the accumulator's rule); the stream is not.
        assert isinstance(result.error, StreamTruncated)
        assert not result.complete
        assert isinstance(seen[-1], StreamFailed)
        assert [c.arguments for c in result.tool_calls] == [{}]
        return
    check(trace, result.to_dict())
    assert result.complete


def test_only_the_kimi_traces_need_the_done_marker() -> None:
    # The two OpenRouter/Kimi traces never send a finish reason; every other
    # openai-chat trace with a body ends its choice with one.
    needing = [
        t.name
        for t in SDK_TRACES
        if _no_end_marker_nor_finish(t) and "error" not in t.expected and t.body
    ]
    assert needing == [
        "openai/llm_tools_streaming_variant_b",
        "openrouter/kimi_k2_repeated_id_and_name",
    ]


def test_done_marker_is_seen_through_the_sdk_stream(
    replay_servers: dict[str, EmulationServer], openai_client: openai.OpenAI
) -> None:
    name = "openrouter/kimi_k2_repeated_id_and_name"
    client = openai_client.with_options(base_url=replay_servers[name].url_for("openai-chat"))
    stream = client.chat.completions.create(model="m", messages=USER, stream=True)
    seen = list(adapters.openai_chat(stream))
    assert not any(isinstance(e, ChoiceFinished) for e in seen)
    assert isinstance(seen[-1], StreamEnded)
    ready = [e.call for e in seen if isinstance(e, ToolCallReady)]
    assert [(c.id, c.name, c.arguments) for c in ready] == [("0", "llm_version", {})]


@pytest.mark.parametrize("dialect", ["openai-chat", "anthropic-messages"])
def test_strictly_validated_objects_too(dialect: str) -> None:
    # model_validate (strict) accepts most traces; its objects dump the same.
    trace = next(
        t
        for t in SDK_TRACES
        if t.name
        == (
            "openai/chat_parallel_2_mixed_args"
            if dialect == "openai-chat"
            else "anthropic/text_then_tool_use"
        )
    )
    validate: Any = (
        ChatCompletionChunk.model_validate
        if dialect == "openai-chat"
        else pydantic.TypeAdapter(RawMessageStreamEvent).validate_python
    )
    objects = [
        validate(json.loads(data))
        for event, data in payloads(trace)
        if not data.startswith("[DONE]") and event != "ping"
    ]
    adapt = adapters.openai_chat if dialect == "openai-chat" else adapters.anthropic_messages
    events = adapt(objects)
    list(events)
    check(trace, events.result().to_dict())
