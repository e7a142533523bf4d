"""Prompt caching: a :class:`toolwire.CachePoint` in a user message, after the
system prompt and after the tools is sent as Anthropic ``cache_control`` and
Bedrock ``cachePoint`` blocks (checked on the bodies the emulation server
received), a resumed run sends the same markers, and a 1 h cache write is
priced at the 1 h rate."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import toolwire
from toolwire import Agent, CachePoint, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.cost import Rates
from toolwire.errors import ContentError, UsageError
from toolwire.journal import Decision, SQLiteJournal, record_decision
from toolwire.messages import SystemMessage, UserMessage, message_from_dict
from toolwire.stream.codecs import bedrock_request, openai_chat_request, openai_responses_request
from toolwire.stream.codecs.anthropic_request import encode_request
from toolwire.stream.codecs.anthropic_stream import usage_from_anthropic
from toolwire.testing import EmulationServer, Scenario
from toolwire.types import Usage

pytestmark = pytest.mark.anyio

HOUR = {"type": "ephemeral", "ttl": "1h"}
FIVE = {"type": "ephemeral", "ttl": "5m"}
POINT = {"cachePoint": {"type": "default"}}


@tool(requires_approval=True)
def click(x: int) -> str:
    """Click on the page.

    Args:
        x: where.
    """
    return f"clicked {x}"


def conversation() -> list[Any]:
    return [
        SystemMessage("You are terse.", cache=CachePoint(ttl="1h")),
        UserMessage(content=["a long context", CachePoint(ttl="1h"), "the question"]),
    ]


def test_anthropic_marks_the_block_before_each_point() -> None:
    tools = [{"name": "t", "input_schema": {"type": "object"}}, {"name": "u", "input_schema": {}}]
    body = encode_request(model="m", messages=conversation(), tools=tools, cache_tools=CachePoint())
    assert body["system"] == [{"type": "text", "text": "You are terse.", "cache_control": HOUR}]
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "a long context", "cache_control": HOUR},
        {"type": "text", "text": "the question"},
    ]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1]["cache_control"] == FIVE


def test_anthropic_without_points_keeps_the_plain_system_text() -> None:
    body = encode_request(model="m", messages=[SystemMessage("s"), UserMessage("hi")])
    assert body["system"] == "s"
    assert body["messages"][0]["content"] == [{"type": "text", "text": "hi"}]


def test_a_point_with_nothing_before_it_is_refused() -> None:
    with pytest.raises(ContentError, match="marks the content before it"):
        encode_request(model="m", messages=[UserMessage(content=[CachePoint(), "hi"])])


def test_bedrock_sends_cache_point_blocks_in_place() -> None:
    tools = [{"toolSpec": {"name": "t", "inputSchema": {"json": {}}}}]
    body = bedrock_request.encode_request(
        messages=conversation(), tools=tools, cache_tools=CachePoint()
    )
    assert body["system"] == [{"text": "You are terse."}, POINT]
    assert body["messages"][0]["content"] == [
        {"text": "a long context"},
        POINT,
        {"text": "the question"},
    ]
    assert body["toolConfig"]["tools"] == [*tools, POINT]


def test_openai_caches_implicitly_and_takes_the_points_key_and_retention() -> None:
    plain = openai_chat_request.encode_request(model="m", messages=conversation())
    assert "prompt_cache_key" not in plain
    assert plain["messages"][1]["content"] == "a long context\nthe question"
    keyed = [UserMessage(content=["ctx", CachePoint(key="tenant-7", retention="24h")])]
    for encode in (openai_chat_request.encode_request, openai_responses_request.encode_request):
        body = encode(model="m", messages=keyed)
        assert (body["prompt_cache_key"], body["prompt_cache_retention"]) == ("tenant-7", "24h")


def test_points_round_trip_through_the_journal_shape() -> None:
    for message in conversation():
        again = message_from_dict(message.to_dict())
        assert again == message
    user = conversation()[1]
    assert user.to_dict()["content"][1] == {"type": "cache_point", "ttl": "1h"}
    with pytest.raises(ContentError, match="'5m' or '1h'"):
        CachePoint(ttl="2h")


def test_an_agent_system_list_takes_one_cache_point() -> None:
    provider = make_provider("anthropic", base_url="http://127.0.0.1:9", api_key="k")
    with pytest.raises(UsageError, match="at most one CachePoint"):
        Agent(provider, model="m", system=["a", CachePoint(), CachePoint()], journal=False)


def test_a_1h_cache_write_is_priced_at_the_1h_rate() -> None:
    usage = usage_from_anthropic(
        {
            "input_tokens": 100,
            "cache_creation_input_tokens": 3000,
            "cache_creation": {
                "ephemeral_5m_input_tokens": 1000,
                "ephemeral_1h_input_tokens": 2000,
            },
            "output_tokens": 10,
        }
    )
    assert (usage.input_tokens, usage.cache_write_tokens, usage.cache_write_1h_tokens) == (
        3100,
        3000,
        2000,
    )
    # Claude at $3/MTok input: 5 min writes 1.25x, 1 h writes 2x.
    rates = Rates(input=3, output=15, cache_write="3.75", cache_write_1h=6)
    cost = rates.cost(usage)
    assert cost is not None
    expected_input = (100 * 3 + 1000 * Decimal("3.75") + 2000 * 6) / Decimal(1_000_000)
    assert cost.input == expected_input
    assert cost.total == expected_input + Decimal(150) / Decimal(1_000_000)
    five_only = Usage(input_tokens=3100, output_tokens=10, cache_write_tokens=3000)
    cheaper = rates.cost(five_only)
    assert cheaper is not None and cheaper.input < cost.input


def _scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "turns": [
                {"tool_calls": [{"name": "click", "arguments": {"x": 3}}]},
                {"text": "done: {result:click}"},
            ]
        }
    )


@pytest.mark.parametrize("name", ["anthropic", "bedrock"])
async def test_a_resumed_run_sends_the_same_cache_markers(name: str, tmp_path: Path) -> None:
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    _, dialect, model = PROVIDERS[name]
    with EmulationServer(_scenario()) as server:
        provider = make_provider(name, base_url=server.url_for(dialect), api_key="k")
        agent = Agent(
            provider,
            model=model,
            tools=[click],
            system=["You are terse.", CachePoint(ttl="1h")],
            journal=journal,
        )
        try:
            prompt = ["a long context", toolwire.CachePoint(ttl="1h"), "click it"]
            first = await agent.run(prompt, run_id="run-c")
            assert first.outcome == "suspended"
            (pending,) = first.pending
            record_decision(journal, "run-c", Decision.allow(pending))
            resumed = await agent.resume("run-c")
        finally:
            await agent.aclose()
        assert resumed.output == "done: clicked 3"
        before, after = server.requests
    assert after["system"] == before["system"]
    assert after["messages"][0] == before["messages"][0]
    if name == "anthropic":
        assert before["system"][0]["cache_control"] == HOUR
        assert before["messages"][0]["content"][0]["cache_control"] == HOUR
    else:
        assert before["system"][1] == POINT
        assert before["messages"][0]["content"][1] == POINT
    journal.close()
