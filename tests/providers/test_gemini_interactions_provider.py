"""The Gemini Interactions provider against the emulation server: the demo
conversation, ``previous_interaction_id`` chaining, and a stream cut mid-turn
continued from its last event id without asking for the turn again."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from toolwire import Agent, ReadError, ToolwireError, tool
from toolwire.errors import ProviderError
from toolwire.http import HttpRequest
from toolwire.messages import UserMessage
from toolwire.providers import GeminiInteractions
from toolwire.providers._continuation import Continuation
from toolwire.providers._reads import ProviderStream
from toolwire.testing import EmulationServer, Scenario

MODEL = "gemini-3-flash-preview"
QUESTION = "杭州天气怎么样?现在几点?"


def weather(**turn: Any) -> Scenario:
    return Scenario.from_dict(
        {
            "name": "interactions-weather",
            "turns": [
                {
                    "reasoning": "The weather and the time: two calls.",
                    "tool_calls": [
                        {"name": "get_weather", "arguments": {"city": "杭州"}},
                        {"name": "get_current_time", "arguments": {"timezone": "Asia/Shanghai"}},
                    ],
                    "chunk_size": 4,
                    **turn,
                },
                {"text": "杭州{result:get_weather.condition_zh},{result:get_current_time.time}。"},
            ],
        }
    )


class Tools:
    """Tools that record each run."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

        @tool(read_only=True)
        def get_weather(city: str) -> dict[str, Any]:
            """Current weather of a city.

            Args:
                city: the city name.
            """
            self.ran.append(("get_weather", {"city": city}))
            return {"city": city, "condition_zh": "小雨"}

        @tool(read_only=True)
        def get_current_time(timezone: str = "UTC") -> dict[str, Any]:
            """The current time in a time zone.

            Args:
                timezone: an IANA zone name.
            """
            self.ran.append(("get_current_time", {"timezone": timezone}))
            return {"timezone": timezone, "time": "10:30"}

        self.tools = [get_weather, get_current_time]


def provider_for(server: EmulationServer, **options: Any) -> GeminiInteractions:
    return GeminiInteractions(
        api_key="test-key", base_url=server.url_for("gemini-interactions"), **options
    )


async def run(provider: GeminiInteractions, tools: Tools, **options: Any) -> Any:
    agent = Agent(provider, model=MODEL, tools=tools.tools, **options)
    try:
        return await agent.run(QUESTION)
    finally:
        await agent.aclose()


@pytest.mark.anyio
async def test_the_demo_conversation_feeds_results_back_by_call_id() -> None:
    tools = Tools()
    with EmulationServer(weather()) as server:
        result = await run(provider_for(server), tools)
        first, second = list(server.requests)
    assert result.output == "杭州小雨,10:30。"
    assert sorted(name for name, _ in tools.ran) == ["get_current_time", "get_weather"]
    assert first["stream"] is True and "previous_interaction_id" not in first
    calls = [s for s in second["input"] if s["type"] == "function_call"]
    results = [s for s in second["input"] if s["type"] == "function_result"]
    assert [c["id"] for c in calls] == [r["call_id"] for r in results]
    assert [s["type"] for s in second["input"]][:2] == ["user_input", "thought"]
    assert second["input"][1]["signature"], "the thought's signature goes back"


@pytest.mark.anyio
async def test_chaining_sends_the_previous_interaction_and_only_the_results() -> None:
    tools = Tools()
    with EmulationServer(weather()) as server:
        result = await run(provider_for(server, chain=True), tools)
        first, second = list(server.requests)
    assert result.output == "杭州小雨,10:30。"
    assert "previous_interaction_id" not in first
    assert second["previous_interaction_id"].startswith("v1_")
    assert [s["type"] for s in second["input"]] == ["function_result", "function_result"]


def test_chaining_needs_stored_interactions() -> None:
    with pytest.raises(ToolwireError, match="store"):
        GeminiInteractions(api_key="k", chain=True, store=False)


async def stream_size(server: EmulationServer) -> int:
    provider = provider_for(server)
    request = provider.build_request(model=MODEL, messages=[UserMessage(QUESTION)])
    async with httpx.AsyncClient() as client:
        response = await client.post(request.url, json=request.json, headers=dict(request.headers))
    assert response.status_code == 200
    return len(response.content)


@pytest.mark.parametrize("fraction", [0.25, 0.5, 0.75])
@pytest.mark.anyio
async def test_a_stream_cut_mid_turn_continues_from_its_last_event(fraction: float) -> None:
    tools = Tools()
    with EmulationServer(weather()) as probe:
        size = await stream_size(probe)
    log: list[str] = []
    cut = weather(faults=[{"cut_after_bytes": int(size * fraction)}])
    with EmulationServer(cut, log=log.append) as server:
        result = await run(provider_for(server), tools, stream_retries=0)
        posts = len(server.requests)
    assert result.output == "杭州小雨,10:30。"
    assert posts == 2, "one POST per turn: the cut turn was not asked again"
    continued = [line for line in log if line.startswith("GET ") and "200 stream after" in line]
    assert len(continued) == 1
    assert sorted(name for name, _ in tools.ran) == ["get_current_time", "get_weather"]


@pytest.mark.anyio
async def test_a_chained_run_whose_first_stream_is_cut() -> None:
    tools = Tools()
    with EmulationServer(weather()) as probe:
        size = await stream_size(probe)
    log: list[str] = []
    with EmulationServer(
        weather(faults=[{"cut_after_bytes": size // 2}]), log=log.append
    ) as server:
        result = await run(provider_for(server, chain=True), tools, stream_retries=0)
        _, second = list(server.requests)
    assert result.output == "杭州小雨,10:30。"
    assert second["previous_interaction_id"].startswith("v1_")
    assert sum("200 stream after" in line for line in log) == 1


@pytest.mark.anyio
async def test_without_continuations_a_cut_stream_is_reported() -> None:
    tools = Tools()
    with EmulationServer(weather()) as probe:
        size = await stream_size(probe)
    with EmulationServer(weather(faults=[{"cut_after_bytes": size // 2}])) as server:
        provider = provider_for(server, continuation_attempts=0)
        with pytest.raises(ToolwireError) as caught:
            await run(provider, tools, stream_retries=0)
    assert caught.value.type_name in ("read_error", "stream_truncated")
    assert tools.ran == []


class LostStreams(GeminiInteractions):
    """Asks to continue an interaction the server does not know."""

    def continuation(self, request: HttpRequest) -> Continuation | None:
        inner = super().continuation(request)
        assert inner is not None
        return replace(inner, request=lambda stream_id, after: inner.request("v1_unknown", after))


@pytest.mark.anyio
async def test_a_refused_continuation_reports_the_cut_itself() -> None:
    tools = Tools()
    with EmulationServer(weather()) as probe:
        size = await stream_size(probe)
    with EmulationServer(weather(faults=[{"cut_after_bytes": size // 2}])) as server:
        provider = LostStreams(api_key="k", base_url=server.url_for("gemini-interactions"))
        with pytest.raises(ReadError):
            await run(provider, tools, stream_retries=0)
    assert tools.ran == []


@pytest.mark.anyio
async def test_provider_complete_continues_a_cut_stream_too() -> None:
    with EmulationServer(weather()) as probe:
        size = await stream_size(probe)
    with EmulationServer(weather(faults=[{"cut_after_bytes": size // 2}])) as server:
        provider = provider_for(server)
        request = provider.build_request(model=MODEL, messages=[UserMessage(QUESTION)])
        result = await provider.complete(request)
        await provider.aclose()
    calls = result.choices[0].tool_calls
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "杭州"}),
        ("get_current_time", {"timezone": "Asia/Shanghai"}),
    ]


def test_the_key_goes_in_a_header_of_both_requests() -> None:
    provider = GeminiInteractions(api_key="secret-key", base_url="https://example.test/v1beta")
    request = provider.build_request(model=MODEL, messages=[UserMessage("hi")])
    assert request.url == "https://example.test/v1beta/interactions"
    assert request.headers["x-goog-api-key"] == "secret-key"
    resumer = provider.continuation(request)
    assert resumer is not None
    again = resumer.request("v1_a/b", "evt 7")
    assert again.method == "GET"
    assert again.url == (
        "https://example.test/v1beta/interactions/v1_a%2Fb?stream=true&last_event_id=evt+7"
    )
    assert again.headers["x-goog-api-key"] == "secret-key"
    assert again.content() == b""
    assert "secret-key" not in repr(again)


def test_nothing_to_continue_from_without_stored_interactions() -> None:
    for provider, extra in (
        (GeminiInteractions(api_key="k", store=False), None),
        (GeminiInteractions(api_key="k"), {"store": False}),
        (GeminiInteractions(api_key="k", continuation_attempts=0), None),
    ):
        request = provider.build_request(model=MODEL, messages=[UserMessage("hi")], extra=extra)
        assert provider.continuation(request) is None


# -- the bound on continuations (a small unit test with a scripted transport) ---------


class CutEveryTime:
    """A transport whose every body breaks after a whole event and half
    another (each continuation's whole event a new one, as it must be)."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.sent: list[str] = []

    @contextlib.asynccontextmanager
    async def stream(self, request: HttpRequest, *, parse_error: Any) -> AsyncIterator[Any]:
        self.sent.append(request.method)
        body = self.body.replace(b'"e1"', f'"e{len(self.sent)}"'.encode())

        class Body:
            async def aiter_bytes(self) -> AsyncIterator[bytes]:
                yield body
                raise ReadError("connection reset")

        yield Body()


@pytest.mark.anyio
async def test_continuations_are_bounded() -> None:
    event = (
        'event: interaction.created\ndata: {"event_type": "interaction.created", '
        '"interaction": {"id": "v1_x", "status": "in_progress"}, "event_id": "e1"}\n\n'
    )
    transport = CutEveryTime(event.encode() + b"event: step.start\ndata: {")
    provider = GeminiInteractions(api_key="k", base_url="http://127.0.0.1:9/v1beta")
    request = provider.build_request(model=MODEL, messages=[UserMessage("hi")])
    source = ProviderStream(
        request,
        transport=transport,  # type: ignore[arg-type]
        parse_error=None,
        dialect="gemini-interactions",
        continuation=provider.continuation(request),
    )
    with pytest.raises(ReadError):
        async with contextlib.aclosing(source.reads()) as reads:
            async for _ in reads:
                pass
    assert transport.sent == ["POST", *["GET"] * provider.continuation_attempts]
    assert source.resumes == provider.continuation_attempts == 3


@pytest.mark.anyio
async def test_an_http_error_before_the_stream_is_not_continued() -> None:
    with EmulationServer(weather(faults=[{"status": 400}])) as server:
        provider = provider_for(server)
        with pytest.raises(ProviderError):
            await run(provider, Tools())
