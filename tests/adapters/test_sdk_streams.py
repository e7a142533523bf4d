"""The adapters with the real SDKs streaming from the emulation server.

Parallel calls with Chinese arguments in the three dialects the SDKs speak,
sync and async clients, the SDKs' helper streams, faults (a cut connection,
an in-stream error event, a broken chunk) and stopping early. The reading
must equal what ``StreamDecoder`` makes of the same server's raw bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

import toolwire.adapters as adapters
from toolwire import (
    ChoiceFinished,
    Event,
    RemoteProtocolError,
    StreamDecoder,
    StreamEnded,
    StreamErrorEvent,
    StreamFailed,
    StreamResult,
    StreamTruncated,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
)
from toolwire.testing import EmulationServer, Scenario
from toolwire.testing.server import FAULT_HEADER

from .conftest import SDK_APIS, SDK_ASYNC_CLIENT, USER

pytestmark = pytest.mark.anyio

CITY = "浙江省杭州市西湖区“断桥”"
CALLS = [
    ("get_weather", {"city": CITY, "days": 3}),
    ("get_current_time", {"timezone": "Asia/Shanghai"}),
]
SCENARIO = Scenario.from_dict(
    {
        "turns": [
            {
                "reasoning": "先查天气,再查时间。",
                "text": "好的,我来查一下。",
                "tool_calls": [{"name": n, "arguments": a} for n, a in CALLS],
                "chunk_size": 3,
            }
        ]
    }
)


@pytest.fixture(scope="module")
def server() -> Iterator[EmulationServer]:
    # One server for the module: every request asks for turn 1, and faults
    # are forced per request with the fault header.
    with EmulationServer(SCENARIO) as running:
        yield running


def fault(**spec: Any) -> dict[str, str]:
    return {FAULT_HEADER: json.dumps(spec)}


# -- creating the SDK streams -----------------------------------------------------


@pytest.fixture(scope="module")
def clients() -> Iterator[tuple[openai.OpenAI, anthropic.Anthropic]]:
    """Sync clients for the module (creating one costs tens of milliseconds)."""
    with (
        openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0) as o,
        anthropic.Anthropic(base_url="http://127.0.0.1:9", api_key="k", max_retries=0) as a,
    ):
        yield o, a


Clients = tuple[openai.OpenAI, anthropic.Anthropic]


def sync_stream(
    dialect: str, server: EmulationServer, clients: Clients, headers: dict[str, str] | None = None
) -> adapters.AdaptedStream:
    """The adapter over a sync SDK stream from ``server``."""
    url = server.url_for(dialect)
    if dialect == "anthropic-messages":
        raw = (
            clients[1]
            .with_options(base_url=url)
            .messages.create(
                model="claude", max_tokens=64, messages=USER, stream=True, extra_headers=headers
            )
        )
        return adapters.anthropic_messages(raw)
    o = clients[0].with_options(base_url=url)
    if dialect == "openai-chat":
        chat = o.chat.completions.create(
            model="gpt",
            messages=USER,
            stream=True,
            stream_options={"include_usage": True},
            extra_headers=headers,
        )
        return adapters.openai_chat(chat)
    return adapters.openai_responses(
        o.responses.create(model="gpt", input="x", stream=True, extra_headers=headers)
    )


def run_sync(
    dialect: str, server: EmulationServer, clients: Clients, headers: dict[str, str] | None = None
) -> tuple[list[Event], StreamResult]:
    events = sync_stream(dialect, server, clients, headers)
    seen = list(events)
    assert events.finished
    return seen, events.result()


async def run_async(
    dialect: str, server: EmulationServer, headers: dict[str, str] | None = None
) -> tuple[list[Event], StreamResult]:
    url = server.url_for(dialect)
    events: adapters.AsyncAdaptedStream
    if dialect == "anthropic-messages":
        async with anthropic.AsyncAnthropic(base_url=url, api_key="k", max_retries=0) as a:
            raw = await a.messages.create(
                model="claude", max_tokens=64, messages=USER, stream=True, extra_headers=headers
            )
            events = adapters.aanthropic_messages(raw)
            seen = [e async for e in events]
    else:
        async with openai.AsyncOpenAI(base_url=url, api_key="k", max_retries=0) as o:
            if dialect == "openai-chat":
                chat = await o.chat.completions.create(
                    model="gpt",
                    messages=USER,
                    stream=True,
                    stream_options={"include_usage": True},
                    extra_headers=headers,
                )
                events = adapters.aopenai_chat(chat)
            else:
                responses = await o.responses.create(
                    model="gpt", input="x", stream=True, extra_headers=headers
                )
                events = adapters.aopenai_responses(responses)
            seen = [e async for e in events]
    assert events.finished
    return seen, events.result()


def decoded_raw(dialect: str, server: EmulationServer) -> StreamResult:
    """What StreamDecoder makes of the same answer, read as raw bytes."""
    url = server.url_for(dialect)
    if dialect == "openai-chat":
        path, body = (
            "/chat/completions",
            {
                "model": "gpt",
                "messages": USER,
                "stream": True,
                "stream_options": {"include_usage": True},
            },
        )
    elif dialect == "openai-responses":
        path, body = "/responses", {"model": "gpt", "input": "x", "stream": True}
    else:
        path = "/v1/messages"
        body = {"model": "claude", "max_tokens": 64, "messages": USER, "stream": True}
    response = httpx.post(url.rstrip("/") + path, json=body)
    assert response.status_code == 200
    decoder = StreamDecoder(dialect)
    decoder.feed(response.content)
    decoder.close()
    return decoder.result()


def comparable(result: StreamResult) -> dict[str, Any]:
    out = result.to_dict()
    for choice in out["choices"]:
        for call in choice["tool_calls"]:
            call.pop("id")  # seeded by the request's bytes, which differ
        choice.pop("provider_state", None)
    return out


# -- the happy path ------------------------------------------------------------------


def check_parallel_calls(dialect: str, seen: list[Event], result: StreamResult) -> None:
    started = [e for e in seen if isinstance(e, ToolCallStarted)]
    assert [(e.index, e.name) for e in started] == [(0, "get_weather"), (1, "get_current_time")]
    deltas = [e for e in seen if isinstance(e, ToolCallDelta) and e.index == 0]
    assert len(deltas) > 5, "arguments arrive in fragments"
    # Partial arguments grow as the fragments arrive, Chinese included.
    cities = [d.partial.get("city") for d in deltas]
    assert any(c and c != CITY and CITY.startswith(c) for c in cities)
    assert deltas[-1].partial == CALLS[0][1]
    ready = [e.call for e in seen if isinstance(e, ToolCallReady)]
    assert [(c.name, c.arguments) for c in ready] == CALLS
    assert json.loads(ready[0].raw_arguments) == CALLS[0][1]
    assert len({c.id for c in ready}) == 2 and all(c.id and not c.minted_id for c in ready)
    # A call is ready before the next one starts: no waiting for the end.
    assert seen.index(next(e for e in seen if isinstance(e, ToolCallReady))) < seen.index(
        started[1]
    )
    assert any(isinstance(e, ChoiceFinished) and e.reason == "tool_calls" for e in seen)
    assert isinstance(seen[-1], StreamEnded)
    assert result.complete and result.error is None
    assert result.text == "好的,我来查一下。"
    assert result.choices[0].reasoning == "先查天气,再查时间。"
    assert result.usage is not None and result.usage.output_tokens
    assert result.tool_calls == tuple(ready)


@pytest.mark.parametrize("dialect", SDK_APIS)
def test_sync_client(dialect: str, server: EmulationServer, clients: Clients) -> None:
    seen, result = run_sync(dialect, server, clients)
    check_parallel_calls(dialect, seen, result)
    assert comparable(result) == comparable(decoded_raw(dialect, server))


@SDK_ASYNC_CLIENT
@pytest.mark.parametrize("dialect", SDK_APIS)
async def test_async_client(dialect: str, server: EmulationServer) -> None:
    seen, result = await run_async(dialect, server)
    check_parallel_calls(dialect, seen, result)


def test_chat_completions_stream_helper(server: EmulationServer, clients: Clients) -> None:
    client = clients[0].with_options(base_url=server.url_for("openai-chat"))
    with (
        client.chat.completions.stream(
            model="gpt", messages=USER, stream_options={"include_usage": True}
        ) as stream,
    ):
        events = adapters.openai_chat(stream)
        seen = list(events)
    check_parallel_calls("openai-chat", seen, events.result())


def test_responses_stream_helper(server: EmulationServer, clients: Clients) -> None:
    client = clients[0].with_options(base_url=server.url_for("openai-responses"))
    with client.responses.stream(model="gpt", input="x") as stream:
        events = adapters.openai_responses(stream)
        seen = list(events)
    check_parallel_calls("openai-responses", seen, events.result())


def test_messages_stream_helper(server: EmulationServer, clients: Clients) -> None:
    client = clients[1].with_options(base_url=server.url_for("anthropic-messages"))
    with client.messages.stream(model="claude", max_tokens=64, messages=USER) as stream:
        events = adapters.anthropic_messages(stream)
        seen = list(events)
        # The helper's own accumulation still works alongside.
        final = stream.get_final_message()
    check_parallel_calls("anthropic-messages", seen, events.result())
    uses = [b for b in final.content if b.type == "tool_use"]
    assert [b.id for b in uses] == [c.id for c in events.result().tool_calls]


@SDK_ASYNC_CLIENT
async def test_async_messages_stream_helper(server: EmulationServer) -> None:
    async with (
        anthropic.AsyncAnthropic(
            base_url=server.url_for("anthropic-messages"), api_key="k"
        ) as client,
        client.messages.stream(model="claude", max_tokens=64, messages=USER) as stream,
    ):
        events = adapters.aanthropic_messages(stream)
        seen = [e async for e in events]
    check_parallel_calls("anthropic-messages", seen, events.result())


# -- faults ----------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", SDK_APIS)
def test_cut_connection_is_truncated_never_ready(
    dialect: str, server: EmulationServer, clients: Clients
) -> None:
    # Cut inside the first call's arguments (after the reasoning and text).
    first, _ = run_sync(dialect, server, clients)
    raw = decoded_raw(dialect, server)
    assert raw.complete
    cut = _cut_inside_first_call(dialect, server)
    seen, result = run_sync(dialect, server, clients, fault(cut_after_bytes=cut))
    assert isinstance(seen[-1], StreamFailed)
    error = seen[-1].error
    assert isinstance(error, StreamTruncated) and result.error is error
    assert "connection failed" in error.message
    assert error.__cause__ is not None  # the SDK's (or httpx's) exception
    assert not any(isinstance(e, ToolCallReady) for e in seen)
    assert [c.name for c in error.incomplete_tool_calls] == ["get_weather"]
    assert CITY.startswith(json.loads(error.incomplete_tool_calls[0].raw_arguments + '"}')["city"])
    assert not result.complete and result.tool_calls == ()
    assert len(first) > len(seen)


def _cut_inside_first_call(dialect: str, server: EmulationServer) -> int:
    """A byte offset in the middle of the city's name in the raw stream."""
    url = server.url_for(dialect)
    if dialect == "openai-chat":
        path, body = "/chat/completions", {"model": "gpt", "messages": USER, "stream": True}
    elif dialect == "openai-responses":
        path, body = "/responses", {"model": "gpt", "input": "x", "stream": True}
    else:
        path = "/v1/messages"
        body = {"model": "claude", "max_tokens": 64, "messages": USER, "stream": True}
    content = httpx.post(url.rstrip("/") + path, json=body).content
    return content.index("杭州".encode()) + 40


@SDK_ASYNC_CLIENT
@pytest.mark.parametrize("dialect", SDK_APIS)
async def test_cut_connection_async(dialect: str, server: EmulationServer) -> None:
    seen, result = await run_async(dialect, server, fault(cut_after_bytes=1500))
    assert isinstance(seen[-1], StreamFailed)
    assert isinstance(result.error, StreamTruncated)
    assert not any(isinstance(e, ToolCallReady) for e in seen)


@pytest.mark.parametrize("dialect", SDK_APIS)
def test_error_event_is_a_stream_failed(
    dialect: str, server: EmulationServer, clients: Clients
) -> None:
    seen, result = run_sync(
        dialect,
        server,
        clients,
        fault(error_event={"message": "模型过载", "status": 529}, at_chunk=12),
    )
    assert isinstance(seen[-1], StreamFailed)
    error = result.error
    if dialect == "openai-responses":
        # Responses errors are ordinary events: the codec reads them, no SDK exception.
        assert isinstance(error, StreamErrorEvent) and error.__cause__ is None
    else:
        assert isinstance(error, StreamErrorEvent)
        assert isinstance(error.__cause__, (openai.APIError, anthropic.APIError))
    assert error.message == "模型过载"
    assert "529" in json.dumps(error.body)  # the provider's payload, kept as received
    assert not result.complete


@pytest.mark.parametrize("dialect", SDK_APIS)
def test_broken_chunk_is_a_protocol_error(
    dialect: str, server: EmulationServer, clients: Clients
) -> None:
    seen, result = run_sync(dialect, server, clients, fault(malformed_json=True))
    assert isinstance(seen[-1], StreamFailed)
    assert type(result.error) is RemoteProtocolError
    assert result.error.raw  # the payload the SDK could not parse
    assert isinstance(result.error.__cause__, json.JSONDecodeError)
    assert not any(isinstance(e, ToolCallReady) and e.call.name == "get_current_time" for e in seen)


# -- stopping early ------------------------------------------------------------------


@pytest.mark.parametrize("dialect", SDK_APIS)
def test_stopping_early_closes_the_sdk_stream(
    dialect: str, server: EmulationServer, clients: Clients
) -> None:
    with sync_stream(dialect, server, clients) as events:
        for event in events:
            if isinstance(event, ToolCallDelta):
                break
    assert events.finished
    assert list(events) == []
    result = events.result()
    assert isinstance(result.error, StreamTruncated)
    assert [c.name for c in result.choices[0].incomplete_tool_calls] == ["get_weather"]
    assert result.tool_calls == ()
    source: Any = events._source
    assert source.response.is_closed


@SDK_ASYNC_CLIENT
async def test_stopping_early_async(server: EmulationServer) -> None:
    async with openai.AsyncOpenAI(base_url=server.url_for("openai-chat"), api_key="k") as o:
        chat = await o.chat.completions.create(model="gpt", messages=USER, stream=True)
        async with adapters.aopenai_chat(chat) as events:
            async for event in events:
                if isinstance(event, ToolCallStarted):
                    break
        assert events.finished
        assert chat.response.is_closed
        result = events.result()
        assert isinstance(result.error, StreamTruncated)
        assert result.tool_calls == ()
