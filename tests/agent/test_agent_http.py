"""The agent loop over real HTTP, against the emulation server, in all four
wire formats: multi-turn runs with parallel calls, corrections, faults,
eager execution, turn limits and cancellation."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable
from typing import Any, Literal

import anyio
import httpx
import pytest

from toolwire import (
    Agent,
    Backoff,
    HttpRetryPolicy,
    HttpxTransport,
    ModelRetrying,
    ProviderError,
    RunFinished,
    Toolbox,
    ToolExecutionFinished,
    ToolExecutionStarted,
    ToolwireError,
    TurnStarted,
    tool,
)
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.examples import get_current_time as sample_time
from toolwire.examples import get_weather as sample_weather
from toolwire.messages import UserMessage
from toolwire.run import AgentEvent, RunResult
from toolwire.stream.framing import EventStreamDecoder
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

PROVIDER_NAMES = sorted(PROVIDERS)
ASKED_AGAIN = [n for n in PROVIDER_NAMES if n != "gemini-interactions"]
"""The providers whose cut streams are reported (Gemini Interactions continues
them from their last event: tests/providers/test_gemini_interactions_provider.py)."""
QUESTION = "杭州天气怎么样?现在几点?"


class Recorder:
    """Sample-like tools that record every execution."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []
        self.on_run: Callable[[], object] | None = None
        """Called as each tool starts."""

        @tool(read_only=True)
        def get_weather(city: str) -> dict[str, Any]:
            """Current weather of a city.

            Args:
                city: the city name.
            """
            if self.on_run is not None:
                self.on_run()
            self.ran.append(("get_weather", {"city": city}))
            return {"city": city, "condition_zh": "小雨", "temperature": 24}

        @tool(read_only=True)
        def get_current_time(timezone: str = "UTC") -> dict[str, Any]:
            """The current time in a time zone.

            Args:
                timezone: an IANA zone name.
            """
            if self.on_run is not None:
                self.on_run()
            self.ran.append(("get_current_time", {"timezone": timezone}))
            return {"timezone": timezone, "time": "10:30", "date": "2026-11-23"}

        self.tools = [get_weather, get_current_time]


def agent_for(server: EmulationServer, name: str, tools: list[Any], **options: Any) -> Agent:
    _, dialect, model = PROVIDERS[name]
    provider = make_provider(name, base_url=server.url_for(dialect), api_key="test-key")
    return Agent(provider, model=model, tools=tools, **options)


def fast_transport(max_attempts: int = 3) -> HttpxTransport:
    return HttpxTransport(
        retry=HttpRetryPolicy(
            retries=max_attempts - 1, backoff=Backoff(initial_delay=0.0, jitter=0.0)
        )
    )


async def close(agent: Agent) -> None:
    """Close the agent's connections, and the transport the test gave it."""
    await agent.aclose()
    if agent.transport is not None:
        await agent.transport.aclose()


async def collect(agent: Agent, prompt: Any = QUESTION) -> tuple[list[AgentEvent], RunResult]:
    events: list[AgentEvent] = []
    try:
        async for event in agent.stream(prompt):
            events.append(event)
    finally:
        await close(agent)
    last = events[-1]
    assert isinstance(last, RunFinished)
    return events, last.result


def weather(**turn_options: Any) -> Scenario:
    return Scenario.from_dict(
        {
            "name": "weather-test",
            "turns": [
                {
                    "tool_calls": [
                        {"name": "get_weather", "arguments": {"city": "杭州"}},
                        {"name": "get_current_time", "arguments": {"timezone": "Asia/Shanghai"}},
                    ],
                    "chunk_size": 5,
                    **turn_options,
                },
                {
                    "text": "杭州{result:get_weather.condition_zh},"
                    "{result:get_current_time.time}。",
                },
            ],
        }
    )


@pytest.mark.parametrize("name", PROVIDER_NAMES)
async def test_multi_turn_run_with_parallel_calls(name: str) -> None:
    recorder = Recorder()
    with EmulationServer(weather()) as server:
        events, result = await collect(agent_for(server, name, recorder.tools))
        requests = list(server.requests)
    assert result.ok and result.outcome == "answered"
    assert result.output == "杭州小雨,10:30。"
    assert result.turns == 2 and len(requests) == 2
    assert sorted(recorder.ran) == [
        ("get_current_time", {"timezone": "Asia/Shanghai"}),
        ("get_weather", {"city": "杭州"}),
    ]
    records = result.tool_calls
    assert [r.call.name for r in records] == ["get_weather", "get_current_time"]
    assert all(r.result.ok and r.result.attempts == 1 and r.turn == 1 for r in records)
    # The results went back with the ids the model gave, in call order.
    second = json.dumps(requests[1], ensure_ascii=False)
    positions = [second.find(r.call.id) for r in records if not r.call.minted_id]
    assert all(p >= 0 for p in positions) and positions == sorted(positions)
    assert "小雨" in second and "10:30" in second
    kinds = [type(e).__name__ for e in events]
    assert kinds.count("TurnStarted") == 2 and kinds.count("ToolExecutionFinished") == 2
    assert result.usage.total_tokens is not None and result.usage.total_tokens > 0


def _tool_choice_of(body: dict[str, Any]) -> Any:
    """What a request body says about tool choice (Gemini: ``toolConfig``;
    Bedrock Converse: ``toolConfig.toolChoice``, beside the tools; Gemini
    Interactions: ``generation_config.tool_choice``)."""
    generation = body.get("generation_config")
    if isinstance(generation, dict):
        return generation.get("tool_choice")
    config = body.get("toolConfig")
    if isinstance(config, dict) and "tools" in config:
        return config.get("toolChoice")
    return body.get("tool_choice", config)


@pytest.mark.parametrize("name", PROVIDER_NAMES)
@pytest.mark.parametrize(
    ("choice", "later"),
    [(None, False), ("required", False), ({"name": "get_weather"}, False), ("auto", True)],
    ids=["unset", "required", "named", "auto"],
)
async def test_later_turns_send_a_tool_choice_only_when_asked(
    name: str, choice: Any, later: bool
) -> None:
    recorder = Recorder()
    with EmulationServer(weather()) as server:
        _, result = await collect(agent_for(server, name, recorder.tools, tool_choice=choice))
        first, second = list(server.requests)
    assert result.ok
    assert (_tool_choice_of(first) is not None) is (choice is not None)
    assert (_tool_choice_of(second) is not None) is later


@pytest.mark.parametrize(
    ("name", "bad"),
    [(n, {"city": 123}) for n in PROVIDER_NAMES]
    + [(n, '{"city" "杭州"}') for n in PROVIDER_NAMES if n != "gemini"],
    ids=[f"{n}-wrong-type" for n in PROVIDER_NAMES]
    + [f"{n}-not-json" for n in PROVIDER_NAMES if n != "gemini"],
)
async def test_invalid_arguments_are_corrected_on_the_next_turn(name: str, bad: Any) -> None:
    recorder = Recorder()
    scenario = Scenario.from_dict(
        {
            "name": "correction",
            "turns": [
                {"tool_calls": [{"name": "get_weather", "arguments": bad}]},
                {
                    "text": "the error was not reported",
                    "if_error": {
                        "tool_calls": [{"name": "get_weather", "arguments": {"city": "杭州"}}]
                    },
                },
                {"text": "杭州{result:get_weather.condition_zh}"},
            ],
        }
    )
    with EmulationServer(scenario) as server:
        _, result = await collect(agent_for(server, name, recorder.tools))
    assert result.output == "杭州小雨"
    first, second = result.tool_calls
    assert (first.result.ok, first.result.error) == (False, "invalid_arguments")
    assert json.loads(first.result.content)["error"] == "invalid_arguments"
    assert second.result.ok and second.turn == 2
    assert recorder.ran == [("get_weather", {"city": "杭州"})], "the bad call never ran"


@pytest.mark.parametrize("name", PROVIDER_NAMES)
async def test_rate_limited_then_success(name: str) -> None:
    recorder = Recorder()
    with EmulationServer(weather(faults=[{"status": 429, "retry_after": 0.01}])) as server:
        agent = agent_for(server, name, recorder.tools, transport=fast_transport())
        _, result = await collect(agent)
        count = len(server.requests)
    assert result.output == "杭州小雨,10:30。"
    assert count == 3, "the 429, its retry, and the second turn"


async def _cut_offset(server: EmulationServer, name: str) -> int:
    """A byte offset inside the first call's arguments of the first turn."""
    _, dialect, model = PROVIDERS[name]
    provider = make_provider(name, base_url=server.url_for(dialect), api_key="test-key")
    request = provider.build_request(
        model=model, messages=[UserMessage("probe")], tools=(), stream=True
    )
    async with httpx.AsyncClient() as client:
        response = await client.post(request.url, json=request.json, headers=dict(request.headers))
    body = response.content
    start = body.find("杭".encode())
    if dialect == "bedrock-invoke":  # the events are base64 in event-stream messages
        start = _invoke_offset(body, "杭")
    assert start > 0
    return start + 2  # in the middle of the character's UTF-8 bytes, mid-arguments


def _invoke_offset(body: bytes, text: str) -> int:
    """An offset inside the first event-stream message whose base64 event holds ``text``."""
    offset = 0
    for message in EventStreamDecoder().feed(body):
        size = 16 + sum(len(k) + 2 for k in message.headers) + len(message.payload)
        size += sum(len(str(v).encode()) + 2 for v in message.headers.values())
        inner = base64.b64decode(json.loads(message.payload)["bytes"]).decode()
        if text in json.loads(inner).get("delta", {}).get("partial_json", ""):
            return offset + size // 2 - 2
        offset += size
    return -1


@pytest.mark.parametrize("name", ASKED_AGAIN)
async def test_a_stream_cut_mid_arguments_runs_no_tool(name: str) -> None:
    recorder = Recorder()
    with EmulationServer(weather()) as probe:
        offset = await _cut_offset(probe, name)
    with EmulationServer(weather(faults=[{"cut_after_bytes": offset}])) as server:
        agent = agent_for(server, name, recorder.tools, transport=fast_transport())
        events: list[AgentEvent] = []
        with pytest.raises(ToolwireError) as caught:
            async for event in agent.stream(QUESTION):
                events.append(event)
        await close(agent)
    assert recorder.ran == []
    assert not any(isinstance(e, ToolExecutionStarted) for e in events)
    assert caught.value.type_name in ("read_error", "stream_truncated")


@pytest.mark.parametrize("name", ASKED_AGAIN)
async def test_a_cut_stream_is_sent_again_when_configured(name: str) -> None:
    recorder = Recorder()
    with EmulationServer(weather()) as probe:
        offset = await _cut_offset(probe, name)
    with EmulationServer(weather(faults=[{"cut_after_bytes": offset}])) as server:
        agent = agent_for(
            server, name, recorder.tools, transport=fast_transport(), stream_retries=1
        )
        events, result = await collect(agent)
    assert result.output == "杭州小雨,10:30。"
    retries = [e for e in events if isinstance(e, ModelRetrying)]
    assert [(e.turn, e.attempt) for e in retries] == [(1, 2)]
    assert len(recorder.ran) == 2, "each tool ran once, from the complete stream"


@pytest.mark.parametrize("name", PROVIDER_NAMES)
async def test_a_500_storm_ends_in_a_typed_error(name: str) -> None:
    recorder = Recorder()
    with EmulationServer(weather(faults=[{"status": 500}] * 10)) as server:
        agent = agent_for(server, name, recorder.tools, transport=fast_transport(3))
        with pytest.raises(ProviderError) as caught:
            await agent.run(QUESTION)
        await close(agent)
        count = len(server.requests)
    assert caught.value.status_code == 500
    assert count == 3, "exactly the transport's attempts"
    assert recorder.ran == []


class HeldEnd:
    """An ASGI wrapper holding the end of each answer's body until ``released``
    is set (30 seconds at most), whatever the machine's load: a tool that sets
    it proves it started before its stream ended."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.released = threading.Event()
        self.ends: list[bool] = []
        """Per answer, whether ``released`` was set before its body ended."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        async def held(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                self.ends.append(await anyio.to_thread.run_sync(self.released.wait, 30.0))
            await send(message)

        await self.app(scope, receive, held)


@pytest.mark.parametrize("name", PROVIDER_NAMES)
async def test_eager_read_only_tools_start_before_the_stream_ends(name: str) -> None:
    recorder = Recorder()
    server = EmulationServer(weather())
    server.app = gate = HeldEnd(server.app)
    recorder.on_run = gate.released.set
    with server:
        agent = agent_for(server, name, recorder.tools, eager=True)
        events, result = await collect(agent)
    assert result.output == "杭州小雨,10:30。"
    assert gate.ends[0], "a read-only tool started while the model was still streaming"
    started = [e for e in events if isinstance(e, ToolExecutionStarted)]
    assert len(started) == 2 and all(e.eager for e in started)
    assert all(r.eager for r in result.tool_calls)
    assert len(recorder.ran) == 2


@pytest.mark.parametrize("name", PROVIDER_NAMES)
async def test_the_turn_limit_ends_the_run_with_a_typed_outcome(name: str) -> None:
    recorder = Recorder()
    with EmulationServer(weather()) as server:
        _, result = await collect(agent_for(server, name, recorder.tools, max_turns=1))
    assert (result.outcome, result.ok, result.output) == ("max_turns", False, "")
    assert recorder.ran == [] and result.turns == 1


@pytest.mark.parametrize("name", PROVIDER_NAMES)
async def test_cancelling_a_run_leaves_no_tool_running(name: str) -> None:
    entered = anyio.Event()
    state: dict[str, Literal["running", "cancelled", "finished"]] = {}

    @tool(read_only=True, timeout=None)
    async def get_weather(city: str) -> str:
        """Weather that never comes.

        Args:
            city: the city.
        """
        state[city] = "running"
        entered.set()
        try:
            await anyio.sleep_forever()
        finally:
            state[city] = "cancelled"
        return "never"  # pragma: no cover

    scenario = Scenario.from_dict(
        {
            "name": "hang",
            "turns": [
                {"tool_calls": [{"name": "get_weather", "arguments": {"city": "杭州"}}]},
                {"text": "x"},
            ],
        }
    )
    before = {task.id for task in anyio.get_running_tasks()}
    with EmulationServer(scenario) as server:
        agent = agent_for(server, name, [get_weather])
        seen: list[AgentEvent] = []

        async def consume() -> None:
            async for event in agent.stream(QUESTION):
                seen.append(event)

        async with anyio.create_task_group() as tg:
            tg.start_soon(consume)
            await entered.wait()
            tg.cancel_scope.cancel()
        await agent.aclose()
        leftover = {task.id for task in anyio.get_running_tasks()} - before
    assert state == {"杭州": "cancelled"}, "the tool was cancelled with the run"
    assert leftover == set(), "no task of the run is left behind"
    assert not any(isinstance(e, ToolExecutionFinished) for e in seen)


def test_run_sync_with_the_sample_tools() -> None:
    with EmulationServer(Scenario.builtin("weather").with_delay(0)) as server:
        agent = agent_for(server, "openai-chat", [sample_weather, sample_time])
        result = agent.run_sync(QUESTION)
    assert result.ok and "杭州现在小雨" in result.output
    assert [type(m).__name__ for m in result.messages] == [
        "UserMessage",
        "AssistantMessage",
        "ToolResultMessage",
        "ToolResultMessage",
        "AssistantMessage",
    ]


async def test_turn_events_bracket_each_turn() -> None:
    with EmulationServer(weather()) as server:
        events, _ = await collect(agent_for(server, "anthropic", Recorder().tools))
    turns = [e.turn for e in events if isinstance(e, TurnStarted)]
    assert turns == [1, 2]


async def test_a_run_keeps_the_settings_it_started_with() -> None:
    # The driver gets a frozen configuration, not the live Agent: a tool that
    # changes the agent's settings mid-run changes the next run only.
    recorder = Recorder()
    with EmulationServer(weather()) as server:
        agent = agent_for(server, "openai-chat", recorder.tools, max_tokens=50)

        @tool(read_only=True)
        def get_current_time(timezone: str = "UTC") -> dict[str, Any]:
            """The current time in a time zone.

            Args:
                timezone: an IANA zone name.
            """
            agent.max_tokens, agent.max_turns, agent.model = 7, 1, "another-model"
            return {"timezone": timezone, "time": "10:30"}

        agent.toolbox = Toolbox([recorder.tools[0], get_current_time])
        _, result = await collect(agent)
        requests = list(server.requests)
    assert result.outcome == "answered" and result.turns == 2
    assert [(r["model"], r["max_tokens"]) for r in requests] == [
        (PROVIDERS["openai-chat"][2], 50)
    ] * 2
    later = agent.build_request([UserMessage("hi")], 1).json
    assert later is not None and (later["model"], later["max_tokens"]) == ("another-model", 7)
