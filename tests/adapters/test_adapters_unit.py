"""The adapters without HTTP: plain payloads, the caller's mistakes, foreign
exceptions, and the promise not to import the SDKs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionChunk

import toolwire
import toolwire.adapters as adapters
from tests.conftest import TRACES
from tests.stream.test_conformance import check
from toolwire import (
    RemoteProtocolError,
    StreamFailed,
    StreamTruncated,
    ToolCallReady,
    UsageError,
)
from toolwire.stream.framing import SSEDecoder

pytestmark = pytest.mark.anyio


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


OPEN = chunk(
    {"tool_calls": [{"index": 0, "id": "call_1", "function": {"name": "f", "arguments": ""}}]}
)
ARGS = [
    chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
    for piece in ('{"q": "西', '湖"', "}")
]
FINISH = chunk({}, "tool_calls")


@pytest.mark.parametrize(
    "dialect", ["openai-chat", "openai-responses", "anthropic-messages"], ids=str
)
def test_dict_payloads_of_every_trace(dialect: str) -> None:
    adapt = {
        "openai-chat": adapters.openai_chat,
        "openai-responses": adapters.openai_responses,
        "anthropic-messages": adapters.anthropic_messages,
    }[dialect]
    traces = [t for t in TRACES if t.dialect == dialect]
    assert traces
    for trace in traces:
        decoder = SSEDecoder()
        items: list[object] = [
            e.data if e.data.startswith("[DONE]") else json.loads(e.data)
            for e in [*decoder.feed(trace.body), *decoder.close()]
        ]
        # Dicts and strings carry what the SDKs hide: [DONE], error payloads.
        events = adapt(items)
        list(events)
        check(trace, events.result().to_dict())


def test_chunk_objects_and_dicts_mix() -> None:
    objects: list[object] = [ChatCompletionChunk.model_validate(OPEN), *ARGS, FINISH]
    events = adapters.openai_chat(objects)
    seen = list(events)
    ready = [e.call for e in seen if isinstance(e, ToolCallReady)]
    assert [(c.id, c.name, c.arguments) for c in ready] == [("call_1", "f", {"q": "西湖"})]
    assert events.result().complete


def test_a_stream_that_stops_mid_call_is_truncated() -> None:
    events = adapters.openai_chat([OPEN, *ARGS[:2]])
    seen = list(events)
    assert isinstance(seen[-1], StreamFailed) and isinstance(seen[-1].error, StreamTruncated)
    assert not any(isinstance(e, ToolCallReady) for e in seen)
    (incomplete,) = seen[-1].error.incomplete_tool_calls
    assert incomplete.raw_arguments == '{"q": "西湖"'


def test_a_bad_payload_fails_the_stream_and_closes_the_source() -> None:
    closed = []

    def source() -> Iterator[object]:
        try:
            yield OPEN
            yield {"choices": "not a list"}
            yield FINISH
        finally:
            closed.append(True)

    events = adapters.openai_chat(source())
    seen = list(events)
    assert isinstance(seen[-1], StreamFailed)
    assert isinstance(seen[-1].error, RemoteProtocolError)
    assert closed == [True]
    assert events.result().error is seen[-1].error


def test_a_foreign_exception_propagates_and_nothing_is_ready() -> None:
    def source() -> Iterator[object]:
        yield OPEN
        yield ARGS[0]
        raise RuntimeError("the caller's own bug")

    events = adapters.openai_chat(source())
    seen = []
    with pytest.raises(RuntimeError, match="own bug"):
        for event in events:
            seen.append(event)
    assert events.finished and list(events) == []
    result = events.result()
    assert not result.complete
    assert not any(isinstance(e, ToolCallReady) for e in seen)
    assert [c.name for c in result.choices[0].incomplete_tool_calls] == ["f"]


def test_sdk_connection_error_from_a_plain_iterable_is_a_cut() -> None:
    import httpx

    def source() -> Iterator[object]:
        yield OPEN
        yield ARGS[0]
        raise openai.APIConnectionError(request=httpx.Request("POST", "http://127.0.0.1/x"))

    events = adapters.openai_chat(source())
    seen = list(events)
    assert isinstance(seen[-1], StreamFailed)
    error = seen[-1].error
    assert isinstance(error, StreamTruncated)
    assert isinstance(error.__cause__, openai.APIConnectionError)
    assert "127.0.0.1" not in error.message  # the request's URL is not repeated


def test_a_cut_after_the_finish_reason_loses_nothing() -> None:
    import httpx

    def source() -> Iterator[object]:
        yield OPEN
        yield from ARGS
        yield FINISH
        raise httpx.ReadError("connection reset")

    events = adapters.openai_chat(source())
    seen = list(events)
    assert not any(isinstance(e, StreamFailed) for e in seen)
    assert events.result().complete
    assert [c.arguments for c in events.result().tool_calls] == [{"q": "西湖"}]


async def test_async_iterable_of_dicts() -> None:
    async def source() -> AsyncIterator[object]:
        for item in (OPEN, *ARGS, FINISH):
            yield item

    events = adapters.aopenai_chat(source())
    seen = [e async for e in events]
    assert [e.call.arguments for e in seen if isinstance(e, ToolCallReady)] == [{"q": "西湖"}]
    assert events.finished


def test_caller_mistakes_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="not iterable"):
        adapters.openai_chat(42)  # type: ignore[arg-type]

    async def agen() -> AsyncIterator[object]:
        yield OPEN

    source = agen()
    with pytest.raises(UsageError, match="a-prefixed"):
        adapters.anthropic_messages(source)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="without the a- prefix"):
        adapters.aopenai_responses([OPEN])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="no SDK adapter"):
        adapters.AdaptedStream([], "gemini")
    with pytest.raises(UsageError, match="expected ChatCompletionChunk"):
        list(adapters.openai_chat([object()]))


def test_repr_and_exports() -> None:
    events = adapters.openai_chat([])
    assert repr(events) == "<AdaptedStream openai-chat open>"
    list(events)
    assert repr(events) == "<AdaptedStream openai-chat finished>"
    assert toolwire.AdaptedStream is adapters.AdaptedStream
    assert toolwire.AsyncAdaptedStream is adapters.AsyncAdaptedStream
    assert "AdaptedStream" in toolwire.__all__


def test_the_sdks_are_not_imported() -> None:
    code = (
        "import sys, toolwire.adapters as a\n"
        "list(a.openai_chat([]))\n"
        "bad = [m for m in ('openai', 'anthropic', 'httpx') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
