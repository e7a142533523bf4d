"""End to end over loopback: each provider against the emulation server.

The server is an independent implementation of the four wire formats: it
reads the tool results out of our requests (each dialect's own shape) and
quotes them in the next turn, so a wrong request shape shows up as a wrong
answer, not only as a failed assertion on a dict.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from toolwire import (
    Anthropic,
    AssistantMessage,
    Gemini,
    OpenAIChat,
    OpenAIResponses,
    StreamEnded,
    StreamFailed,
    StreamResult,
    TextDelta,
    ToolCallReady,
    ToolResultMessage,
    UserMessage,
)
from toolwire.http.transport import HttpxTransport
from toolwire.messages import Message
from toolwire.providers import Provider
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

SCENARIO = {
    "name": "parallel-then-answer",
    "turns": [
        {
            "tool_calls": [
                {"name": "get_weather", "arguments": {"city": "杭州"}},
                {"name": "get_current_time", "arguments": {"timezone": "Asia/Shanghai"}},
            ],
            "chunk_size": 3,
        },
        {"text": "天气:{result:get_weather};时间:{result:get_current_time}。", "chunk_size": 5},
    ],
}
WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}}
TIME = {"type": "object", "properties": {"timezone": {"type": "string"}}}
TOOLS: dict[str, list[dict[str, Any]]] = {
    "openai-chat": [
        {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
        {"type": "function", "function": {"name": "get_current_time", "parameters": TIME}},
    ],
    "openai-responses": [
        {"type": "function", "name": "get_weather", "parameters": WEATHER},
        {"type": "function", "name": "get_current_time", "parameters": TIME},
    ],
    "anthropic-messages": [
        {"name": "get_weather", "input_schema": WEATHER},
        {"name": "get_current_time", "input_schema": TIME},
    ],
    "gemini": [
        {
            "functionDeclarations": [
                {"name": "get_weather", "parameters": WEATHER},
                {"name": "get_current_time", "parameters": TIME},
            ]
        }
    ],
}
RESULTS = {"get_weather": "晴 28°C", "get_current_time": "14:05"}


@pytest.fixture(scope="module")
def emulation() -> Iterator[EmulationServer]:
    with EmulationServer(Scenario.from_dict(SCENARIO)) as server:
        yield server


def make_provider(dialect: str, server: EmulationServer) -> Provider:
    base = server.url_for(dialect)
    if dialect == "openai-chat":
        return OpenAIChat(api_key="sk-test", base_url=base)
    if dialect == "openai-responses":
        return OpenAIResponses(api_key="sk-test", base_url=base)
    if dialect == "anthropic-messages":
        return Anthropic(api_key="sk-test", base_url=base)
    return Gemini(api_key="sk-test", base_url=base)


async def run_turn(
    provider: Provider, transport: HttpxTransport, history: list[Message], *, stream: bool
) -> StreamResult:
    request = provider.build_request(
        model="emulated", messages=history, tools=TOOLS[provider.dialect], stream=stream
    )
    if not stream:
        return await provider.complete(request, transport=transport)
    events = [event async for event in provider.stream(request, transport=transport)]
    if provider.dialect != "gemini":  # Gemini streams have no end marker, only EOF
        assert any(isinstance(e, StreamEnded) for e in events)
    assert not any(isinstance(e, StreamFailed) for e in events)
    ready = [e.call.name for e in events if isinstance(e, ToolCallReady)]
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    again = await provider.complete(request, transport=transport)  # the same, decoded whole
    assert ready == [c.name for c in again.tool_calls]
    assert text == again.text
    return again


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
@pytest.mark.parametrize(
    "dialect", ["openai-chat", "openai-responses", "anthropic-messages", "gemini"]
)
async def test_two_turns_with_parallel_calls(
    emulation: EmulationServer, dialect: str, stream: bool
) -> None:
    provider = make_provider(dialect, emulation)
    history: list[Message] = [UserMessage("杭州天气怎么样?现在几点?")]
    async with HttpxTransport() as transport:
        first = await run_turn(provider, transport, history, stream=stream)
        assert first.error is None
        assert [(c.name, c.arguments) for c in first.tool_calls] == [
            ("get_weather", {"city": "杭州"}),
            ("get_current_time", {"timezone": "Asia/Shanghai"}),
        ]
        assert first.choices[0].finish_reason == "tool_calls"
        assistant = AssistantMessage.from_choice(first.choices[0])
        history += [
            assistant,
            *[ToolResultMessage(c.id, c.name, RESULTS[c.name]) for c in assistant.tool_calls],
        ]
        second = await run_turn(provider, transport, history, stream=stream)
    assert second.error is None and second.tool_calls == ()
    assert second.text == "天气:晴 28°C;时间:14:05。"
    assert second.choices[0].finish_reason == "stop"


async def test_openai_chat_sends_calls_back_with_empty_content() -> None:
    # What every server accepts: llama-cpp-python's answers HTTP 500 to a null
    # content beside tool_calls, OpenAI and the others take "".
    async with HttpxTransport() as transport:
        with EmulationServer(Scenario.from_dict(SCENARIO)) as server:
            provider = make_provider("openai-chat", server)
            history: list[Message] = [UserMessage("杭州天气怎么样?现在几点?")]
            first = await run_turn(provider, transport, history, stream=True)
            calls = AssistantMessage.from_choice(first.choices[0]).tool_calls
            history += [
                AssistantMessage(tool_calls=calls),
                *[ToolResultMessage(c.id, c.name, RESULTS[c.name]) for c in calls],
            ]
            second = await run_turn(provider, transport, history, stream=True)
            sent = server.requests[-1]["messages"]
    assert second.text == "天气:晴 28°C;时间:14:05。"
    assert sent[1]["role"] == "assistant"
    assert sent[1]["content"] == ""
    assert [c["id"] for c in sent[1]["tool_calls"]] == [c.id for c in calls]
    assert [m["tool_call_id"] for m in sent[2:]] == [c.id for c in calls]
