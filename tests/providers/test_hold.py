"""A reader that wants only the result decodes the body in larger pieces
(``hold``): the same result as a network read at a time, the bytes before
a cut decoded before the cut is raised, and the agent holding only when
nobody takes the events as they come."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from toolwire import Agent, ReadError, Toolbox, ToolwireError, tool
from toolwire.cost import UsageLimits
from toolwire.errors import RemoteProtocolError
from toolwire.events import Event, ToolCallReady
from toolwire.http import HttpRequest
from toolwire.messages import UserMessage
from toolwire.providers import OpenAIChat
from toolwire.providers._continuation import Continuation
from toolwire.providers._reads import HOLD, ProviderStream, _Held
from toolwire.testing import EmulationServer, Scenario

MODEL = "gpt-4o-mini"

pytestmark = pytest.mark.anyio


def weather(**turn: Any) -> Scenario:
    return Scenario.from_dict(
        {
            "name": "hold-weather",
            "turns": [
                {
                    "text": "Looking both up.",
                    "tool_calls": [
                        {"name": "get_weather", "arguments": {"city": "杭州"}},
                        {"name": "get_time", "arguments": {"timezone": "Asia/Shanghai"}},
                    ],
                    "chunk_size": 4,
                    **turn,
                },
                {"text": "杭州{result:get_weather},{result:get_time}。", "chunk_size": 4},
            ],
        }
    )


@tool(read_only=True)
def get_weather(city: str) -> str:
    """The weather of a city.

    Args:
        city: the city.
    """
    return "小雨"


@tool(read_only=True)
def get_time(timezone: str) -> str:
    """The time in a zone.

    Args:
        timezone: an IANA zone name.
    """
    return "10:30"


def request_for(provider: OpenAIChat) -> HttpRequest:
    return provider.build_request(
        model=MODEL,
        messages=[UserMessage("杭州天气怎么样?现在几点?")],
        tools=Toolbox([get_weather, get_time]).schemas(provider.dialect),
    )


def stream_for(
    provider: OpenAIChat, hold: int, resumer: Continuation | None = None
) -> ProviderStream:
    return ProviderStream(
        request_for(provider),
        transport=provider.transport,
        parse_error=provider.parse_error,
        dialect=provider.dialect,
        continuation=resumer,
        hold=hold,
    )


async def read_all(
    server: EmulationServer, hold: int, resumer: Continuation | None = None
) -> tuple[list[list[Event]], ProviderStream]:
    """Every batch of events the stream gives, and the stream."""
    provider = OpenAIChat(api_key="k", base_url=server.url_for("openai-chat"))
    source = stream_for(provider, hold, resumer)
    batches: list[list[Event]] = []
    try:
        async for events in source.reads():
            batches.append(events)
    finally:
        await provider.aclose()
    return batches, source


async def test_held_pieces_decode_to_the_result_a_read_at_a_time_gives() -> None:
    with EmulationServer(weather()) as server:
        each, by_read = await read_all(server, 0)
        whole, held = await read_all(server, HOLD)
        some, in_parts = await read_all(server, 1000)
    assert len(each) > 10  # 4-character fragments, each event its own chunk
    assert len(whole) <= 2  # the body at once, then what closing the decoder gives
    assert len(whole) < len(some) < len(each)
    expected = by_read.decoder.result().to_dict()
    assert [c.name for c in by_read.decoder.result().tool_calls] == ["get_weather", "get_time"]
    assert held.decoder.result().to_dict() == expected
    assert in_parts.decoder.result().to_dict() == expected


def ready(batches: Sequence[Sequence[Event]]) -> list[str]:
    return [e.call.id for events in batches for e in events if isinstance(e, ToolCallReady)]


async def test_what_came_before_a_cut_is_decoded_before_the_cut_is_raised() -> None:
    """The second call is complete in the bytes read before the cut: held or
    not, it is ready before the stream's ``ReadError``."""
    with EmulationServer(weather()) as server:
        whole, _ = await read_all(server, 0)
    calls = ready(whole)
    assert len(calls) == 2
    for hold in (0, HOLD):
        with EmulationServer(weather(faults=[{"cut_at_fraction": 0.9}])) as server:
            seen: list[list[Event]] = []
            provider = OpenAIChat(api_key="k", base_url=server.url_for("openai-chat"))
            source = stream_for(provider, hold)
            with pytest.raises(ReadError):
                async for events in source.reads():
                    seen.append(events)
            await provider.aclose()
        assert ready(seen) == calls, hold
        assert source.reading  # the cut broke the stream while it was read


async def test_a_stream_that_may_be_resumed_is_decoded_a_read_at_a_time() -> None:
    def resume(stream_id: str, after: str | None) -> HttpRequest:
        raise AssertionError("not cut")

    with EmulationServer(weather()) as server:
        batches, _ = await read_all(server, HOLD, Continuation(request=resume))
    assert len(batches) > 10


async def pieces(*parts: bytes, fail: ToolwireError | None = None) -> AsyncIterator[bytes]:
    for part in parts:
        yield part
    if fail is not None:
        raise fail


async def collect(held: _Held) -> tuple[list[bytes], BaseException | None]:
    out: list[bytes] = []
    try:
        async for chunk in held:
            out.append(chunk)
    except ToolwireError as failed:
        return out, failed
    return out, None


async def test_held_joins_pieces_up_to_its_size_and_keeps_the_last() -> None:
    assert await collect(_Held(pieces(b"abc", b"def", b"gh"), 5)) == ([b"abcdef", b"gh"], None)
    assert await collect(_Held(pieces(b"abcdef", b"gh"), 5)) == ([b"abcdef", b"gh"], None)
    assert await collect(_Held(pieces(), 5)) == ([], None)
    cut = ReadError("cut")
    assert await collect(_Held(pieces(b"abc", b"def", b"gh", fail=cut), 5)) == (
        [b"abcdef", b"gh"],
        cut,
    )
    assert await collect(_Held(pieces(b"abcdef", fail=cut), 5)) == ([b"abcdef"], cut)
    bound = RemoteProtocolError("the response body is larger than its limit")
    assert await collect(_Held(pieces(b"ab", fail=bound), 5)) == ([b"ab"], bound)


class Recording(OpenAIChat):
    """Records the ``hold`` each model request is read with."""

    holds: list[int]

    def reader(self, request: HttpRequest, **options: Any) -> ProviderStream:
        self.holds.append(options.get("hold", 0))
        return super().reader(request, **options)


def recording_agent(server: EmulationServer, **options: Any) -> tuple[Agent, Recording]:
    provider = Recording(api_key="k", base_url=server.url_for("openai-chat"))
    provider.holds = []
    agent = Agent(provider, model=MODEL, tools=[get_weather, get_time], journal=False, **options)
    return agent, provider


@pytest.mark.parametrize(
    ("options", "listen", "expected"),
    [
        ({}, False, HOLD),
        ({}, True, 0),
        ({"eager": True}, False, 0),
        ({"limits": UsageLimits(output_tokens=10_000)}, False, 0),
    ],
    ids=["run", "stream", "eager", "limits"],
)
async def test_the_agent_holds_only_when_nobody_takes_the_events_as_they_come(
    options: dict[str, Any], listen: bool, expected: int
) -> None:
    with EmulationServer(weather()) as server:
        agent, provider = recording_agent(server, **options)
        if listen:
            async for _ in agent.stream("杭州天气怎么样?现在几点?"):
                pass
        else:
            result = await agent.run("杭州天气怎么样?现在几点?")
            assert result.output == "杭州小雨,10:30。"
        await agent.aclose()
    assert provider.holds == [expected, expected]
