"""toolwire's own Agent (and a provider's non-streaming request) through the
proxy and from the replay, in the four dialects the providers speak."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, RunFinished, TextDelta, ToolCallReady, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.messages import UserMessage
from toolwire.testing import CassetteServer, RecordingProxy

from ._support import (
    QUESTION,
    TIME,
    WEATHER,
    SentRecorder,
    Upstream,
    assert_recorded_as_sent,
    assert_replayed_in_recorded_chunks,
    weather,
)

KEY = "sk-agent-test-0123456789abcdef"


@tool(read_only=True)
def get_weather(city: str) -> dict[str, Any]:
    """Current weather of a city.

    Args:
        city: the city name.
    """
    return WEATHER


@tool(read_only=True)
def get_current_time(timezone: str = "UTC") -> dict[str, Any]:
    """The current time in a time zone.

    Args:
        timezone: an IANA zone name.
    """
    return TIME


def _agent(name: str, base_url: str) -> Agent:
    _, _, model = PROVIDERS[name]
    provider = make_provider(name, base_url=base_url, api_key=KEY)
    return Agent(provider, model=model, tools=[get_weather, get_current_time], journal=False)


async def _run(agent: Agent, mode: str) -> Any:
    """What the client made of the conversation, ids minted by toolwire left out."""
    try:
        if mode == "whole":
            request = agent.provider.build_request(
                model=agent.model, messages=[UserMessage(QUESTION)], stream=False
            )
            result = await agent.provider.complete(request)
            return [(c.name, c.arguments, c.minted_id or c.id) for c in result.tool_calls]
        seen: list[Any] = []
        async for event in agent.stream(QUESTION):
            if isinstance(event, TextDelta):
                seen.append(("text", event.text))
            elif isinstance(event, ToolCallReady):
                call = event.call
                seen.append(("call", call.name, call.arguments, call.minted_id or call.id))
            elif isinstance(event, RunFinished):
                seen.append(("end", event.result.output, event.result.usage.to_dict()))
        return seen
    finally:
        await agent.aclose()


async def _converse(name: str, base_url: str, mode: str) -> Any:
    return await _run(_agent(name, base_url), mode)


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["stream", "whole"])
@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_agent_through_the_proxy_and_from_the_replay(
    name: str, mode: str, tmp_path: Path
) -> None:
    dialect = PROVIDERS[name][1]
    with Upstream(weather()) as upstream:
        direct = await _converse(name, upstream.url_for(dialect), mode)
    cassette_dir = tmp_path / "cassette"
    with Upstream(weather()) as upstream:
        with RecordingProxy(upstream.url_for(dialect), record=cassette_dir) as proxy:
            proxied = await _converse(name, proxy.base_url, mode)
        sent = upstream.sent

    assert proxied == direct
    if mode == "stream":
        assert proxied[-1][0] == "end" and "多云" in proxied[-1][1]
        assert [s[1] for s in proxied if s[0] == "call"] == ["get_weather", "get_current_time"]
    else:
        assert [c[0] for c in proxied] == ["get_weather", "get_current_time"]
    cassette = assert_recorded_as_sent(cassette_dir, sent)
    assert len(cassette) == (2 if mode == "stream" else 1)

    server = CassetteServer(cassette_dir)
    replay = SentRecorder(server.app)
    server.app = replay
    with server:
        assert await _converse(name, server.base_url, mode) == proxied
    assert server.mismatches == []
    assert_replayed_in_recorded_chunks(cassette, replay.sent)
