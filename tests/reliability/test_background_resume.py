"""A Responses stream in background mode, cut mid-turn by the emulation
server, is resumed after its last event (``GET /v1/responses/{id}?stream=true&
starting_after=N``) into the same decoder: the turn is asked once (the server
counts its POSTs), and the run's calls and answer are those of an uncut run.
A resumption refused or expired falls back to asking again, and the
reconnections of one stream are bounded. A process that died mid-turn reads
the kept stream again on resume, a background response or an interaction."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from toolwire import (
    Agent,
    ModelRetrying,
    RunFinished,
    TextDelta,
    ToolCallDelta,
    ToolwireError,
    tool,
)
from toolwire.messages import UserMessage
from toolwire.providers import GeminiInteractions, OpenAIResponses
from toolwire.run import AgentEvent, RunResult
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

MODEL = "gpt-4.1-mini"


def scenario(*faults: dict[str, Any]) -> Scenario:
    return Scenario.from_dict(
        {
            "turns": [
                {
                    "text": "Let me look up the weather in Hangzhou for you.",
                    "tool_calls": [
                        {"name": "get_weather", "arguments": {"city": "Hangzhou, Zhejiang"}}
                    ],
                    "chunk_size": 3,
                    "faults": list(faults),
                },
                {"text": "It says: {result:get_weather}"},
            ]
        }
    )


def make_agent(
    server: EmulationServer, ran: list[str], agent_options: Any = None, **options: Any
) -> Agent:
    @tool(read_only=True)
    def get_weather(city: str) -> str:
        """The weather of a city.

        Args:
            city: the city.
        """
        ran.append(city)
        return f"light rain in {city}"

    kind = options.pop("provider", OpenAIResponses)
    provider = kind(base_url=server.url_for(kind.dialect), api_key="test-key", **options)
    return Agent(
        provider, model=MODEL, tools=[get_weather], stream_retries=2, **(agent_options or {})
    )


async def run(
    server: EmulationServer, **options: Any
) -> tuple[RunResult, list[str], list[AgentEvent]]:
    ran: list[str] = []
    events: list[AgentEvent] = []
    result: RunResult | None = None
    agent = make_agent(server, ran, **options)
    try:
        async for event in agent.stream("How is the weather in Hangzhou?"):
            events.append(event)
            if isinstance(event, RunFinished):
                result = event.result
    finally:
        await agent.aclose()
    assert result is not None
    return result, ran, events


def posts(server: EmulationServer) -> int:
    return len(server.requests)


def answer(result: RunResult) -> tuple[Any, ...]:
    calls = tuple((r.call.name, r.call.arguments, r.result.content) for r in result.tool_calls)
    return result.output, result.outcome, calls


async def uncut(**options: Any) -> RunResult:
    with EmulationServer(scenario()) as server:
        result, _, _ = await run(server, **(options or {"openai_background": True}))
    return result


async def test_a_stream_cut_at_half_is_resumed_without_asking_again() -> None:
    expected = await uncut()
    with EmulationServer(scenario({"cut_at_fraction": 0.5})) as server:
        result, ran, events = await run(server, openai_background=True)
        assert posts(server) == 2  # one per turn: the cut turn was not asked again
        assert all(body["background"] is True and body["store"] is True for body in server.requests)
        [resumed] = server.continuations
    assert resumed["after"] > 0
    assert ran == ["Hangzhou, Zhejiang"]
    assert answer(result) == answer(expected)
    assert result.output == "It says: light rain in Hangzhou, Zhejiang"
    assert not [e for e in events if isinstance(e, ModelRetrying)]
    # Every delta came once: the resumed events continue the cut ones.
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert "".join(texts) == "Let me look up the weather in Hangzhou for you." + result.output
    arguments = "".join(e.delta for e in events if isinstance(e, ToolCallDelta))
    assert arguments == '{"city":"Hangzhou, Zhejiang"}'


async def test_without_background_mode_the_cut_turn_is_asked_again() -> None:
    with EmulationServer(scenario({"cut_at_fraction": 0.5})) as server:
        result, ran, events = await run(server)
        assert posts(server) == 3
        assert "background" not in server.requests[0]
        assert server.continuations == []
    assert ran == ["Hangzhou, Zhejiang"]
    assert len([e for e in events if isinstance(e, ModelRetrying)]) == 1
    assert result.outcome == "answered"


@pytest.mark.parametrize("how", ["refused", "expired"])
async def test_a_resumption_refused_falls_back_to_asking_again(
    how: str, caplog: pytest.LogCaptureFixture
) -> None:
    expected = await uncut()
    caplog.set_level(logging.INFO, logger="toolwire.providers")
    if how == "refused":  # the reconnection is answered 404
        server = EmulationServer(scenario({"cut_at_fraction": 0.5}, {"status": 404}))
    else:  # the server kept no background response
        server = EmulationServer(scenario({"cut_at_fraction": 0.5}), max_kept_streams=0)
    with server:
        result, ran, events = await run(server, openai_background=True)
        assert posts(server) == 3  # the cut turn asked again, once
        assert len(server.continuations) == (1 if how == "refused" else 0)
    [said] = [r.getMessage() for r in caplog.records if r.name == "toolwire.providers._reads"]
    assert "refused" in said and "sent again" in said and "test-key" not in said
    assert ran == ["Hangzhou, Zhejiang"]
    assert len([e for e in events if isinstance(e, ModelRetrying)]) == 1
    assert answer(result) == answer(expected)


async def test_reconnections_of_one_stream_are_bounded() -> None:
    cut = {"cut_at_fraction": 0.5}
    # The POST and its two resumptions are cut; the turn is asked again, and
    # that stream's one cut is resumed.
    with EmulationServer(scenario(cut, cut, cut, cut)) as server:
        result, ran, events = await run(server, openai_background=True, continuation_attempts=2)
        assert posts(server) == 3
        first, second, third = server.continuations
    # Each resumption starts after the last event of the one before it.
    assert 0 < first["after"] < second["after"]
    assert third["after"] == first["after"]  # the new stream's cut
    assert ran == ["Hangzhou, Zhejiang"]
    assert len([e for e in events if isinstance(e, ModelRetrying)]) == 1
    assert result.output == "It says: light rain in Hangzhou, Zhejiang"


async def test_provider_complete_resumes_a_cut_stream() -> None:
    with EmulationServer(scenario({"cut_at_fraction": 0.3}, {"cut_at_fraction": 0.5})) as server:
        async with OpenAIResponses(
            base_url=server.url_for("openai-responses"), api_key="k", openai_background=True
        ) as provider:
            request = provider.build_request(
                model=MODEL, messages=[UserMessage("weather?")], stream=True
            )
            result = await provider.complete(request)
        assert posts(server) == 1 and len(server.continuations) == 2
    [choice] = result.choices
    assert [call.arguments for call in choice.tool_calls] == [{"city": "Hangzhou, Zhejiang"}]
    assert result.complete and result.error is None


def test_background_mode_needs_stored_responses() -> None:
    with pytest.raises(ToolwireError, match="openai_store"):
        OpenAIResponses(api_key="k", openai_background=True, openai_store=False)


KEEPING = {
    "responses": {"openai_background": True},
    "interactions": {"provider": GeminiInteractions},  # kept by default
}


@pytest.mark.parametrize("provider", sorted(KEEPING))
@pytest.mark.parametrize("kept", [True, False])
async def test_a_run_that_died_before_recording_the_answer_reads_it_again(
    kept: bool, provider: str, tmp_path: Path
) -> None:
    from tests.journal._support import CrashAt, expect_crash
    from toolwire.journal import JournalObserver, SQLiteJournal

    expected = await uncut(**KEEPING[provider])
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    ran: list[str] = []
    with EmulationServer(scenario(), max_kept_streams=1 if kept else 0) as server:
        # The process dies with the whole stream read, before its answer is
        # recorded (told to the journal after the crash: never).
        observers = [CrashAt("model_response"), JournalObserver(journal)]
        first = make_agent(server, ran, {"journal": False, "observers": observers},
                           **KEEPING[provider])  # fmt: skip
        await expect_crash(first.run("How is the weather in Hangzhou?", run_id="run-bg"))
        await first.aclose()
        [streaming] = [e for e in journal.load_run("run-bg").events if e.kind == "model_streaming"]
        prefix = "resp_" if provider == "responses" else "v1_"
        assert streaming.turn == 1 and streaming.data["response_id"].startswith(prefix)
        second = make_agent(server, ran, {"journal": journal}, **KEEPING[provider])
        try:
            result = await second.resume("run-bg")
        finally:
            await second.aclose()
        if kept:  # read again from its first event: the turn is not asked (nor paid) again
            assert posts(server) == 2
            assert server.continuations == [
                {"stream_id": streaming.data["response_id"], "after": -1}
            ]
        else:  # gone: asked again
            assert posts(server) == 3
    assert ran == ["Hangzhou, Zhejiang"]
    assert answer(result) == answer(expected)
    assert journal.load_run("run-bg").problems() == []
