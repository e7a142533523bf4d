"""Parts a dialect cannot carry, and parts past a provider's documented
limits, are refused with a typed error naming them, before any request is
sent; nothing is shrunk or dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolwire
from toolwire import Agent, ContentLimitExceeded, ContentNotSupported, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.messages import ToolResultMessage, UserMessage
from toolwire.stream.codecs import anthropic_request, bedrock_request, openai_chat_request
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n"
WAV = toolwire.Audio.from_bytes(b"RIFF0000WAVE", media_type="audio/wav")


def encode_anthropic(*messages: object) -> None:
    anthropic_request.encode_request(model="m", messages=list(messages))  # type: ignore[arg-type]


def test_a_kind_the_dialect_does_not_take_is_refused_naming_it() -> None:
    with pytest.raises(ContentNotSupported, match="anthropic-messages does not take audio") as got:
        encode_anthropic(UserMessage(content=["listen", WAV]))
    assert (got.value.dialect, got.value.place, got.value.part) == (
        "anthropic-messages",
        "prompt",
        "audio audio/wav",
    )
    with pytest.raises(ContentNotSupported, match="in a tool result"):
        bedrock_request.encode_request(messages=[ToolResultMessage("c1", "t", "", parts=(WAV,))])


def test_a_url_where_the_provider_fetches_none_is_refused() -> None:
    remote = toolwire.Image.from_url("https://example.com/a.png")
    with pytest.raises(ContentNotSupported, match="does not fetch image image/png from a URL"):
        bedrock_request.encode_request(messages=[UserMessage(content=["look", remote])])
    file = toolwire.Document.from_url("https://example.com/a.pdf")
    with pytest.raises(ContentNotSupported, match="give the bytes"):
        openai_chat_request.encode_request(model="m", messages=[UserMessage(content=[file])])
    # Where the provider fetches URLs, the URL is sent as it is.
    body = anthropic_request.encode_request(model="m", messages=[UserMessage(content=[remote])])
    image = body["messages"][0]["content"][0]
    assert image == {"type": "image", "source": {"type": "url", "url": remote.url}}


def test_limits_are_named_with_their_values() -> None:
    big = toolwire.Image.from_bytes(PNG + bytes(5 * 1024 * 1024), media_type="image/png")
    with pytest.raises(ContentLimitExceeded, match="image_bytes limit is 5,242,880") as got:
        encode_anthropic(UserMessage(content=[big]))
    assert (got.value.limit, got.value.maximum) == ("image_bytes", 5 * 1024 * 1024)
    small = toolwire.Image.from_bytes(PNG, media_type="image/png")
    with pytest.raises(ContentLimitExceeded, match=r"images_per_request limit is 20, .* 21"):
        bedrock_request.encode_request(messages=[UserMessage(content=[small] * 21)])


async def test_an_agent_run_is_refused_before_any_request(tmp_path: Path) -> None:
    @tool
    def record() -> object:
        """Records a sound."""
        return WAV

    turns = [{"tool_calls": [{"name": "record"}]}, {"text": "heard"}]
    _, dialect, model = PROVIDERS["anthropic"]
    with EmulationServer(Scenario.from_dict({"turns": turns})) as server:
        provider = make_provider("anthropic", base_url=server.url_for(dialect), api_key="k")
        agent = Agent(provider, model=model, tools=[record], journal=False)
        try:
            with pytest.raises(ContentNotSupported, match="audio"):
                await agent.run(["what is this?", WAV])
            assert server.requests == []
            # A tool's audio is refused before the request that would carry it.
            with pytest.raises(ContentNotSupported, match="in a tool result"):
                await agent.run("record a sound")
            assert len(server.requests) == 1
        finally:
            await agent.aclose()
