"""Usage limits, checked as the stream arrives: a crossing cancels the stream,
raises a typed error naming the limit and the figure, journals the run as
stopped by that limit, and no tool call that arrived after it runs.

Against the emulation server, over HTTP; wall time with an injected clock."""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from toolwire import Agent, TextDelta, ToolwireError, UsageLimitExceeded, tool
from toolwire.cli import main
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.cost import Budget, Prices, Rates, UsageLimits
from toolwire.errors import UsageError
from toolwire.journal import RunLog, RunSummary, SQLiteJournal
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

CHUNK = 8
"""Characters per streamed fragment: two estimated tokens."""
LONG_TEXT = "".join(f"word{n:04d} " for n in range(60))  # 600 characters


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Tools:
    """Tools that record what ran."""

    def __init__(self, clock: FakeClock | None = None) -> None:
        self.ran: list[str] = []

        @tool(read_only=True)
        def lookup(key: str) -> str:
            """Look a key up (read-only: eager agents start it mid-stream).

            Args:
                key: what to look up.
            """
            self.ran.append(f"lookup:{key}")
            if clock is not None:
                clock.now += 10
            return f"value of {key}"

        @tool
        def send_payment(amount: int) -> str:
            """Send money.

            Args:
                amount: how much.
            """
            self.ran.append(f"send_payment:{amount}")
            return "sent"

        self.tools = [lookup, send_payment]


def talk_then_call() -> Scenario:
    """A long answer, then (in the same turn) tool calls."""
    return Scenario.from_dict(
        {
            "name": "long",
            "turns": [
                {
                    "text": LONG_TEXT,
                    "tool_calls": [
                        {"name": "lookup", "arguments": {"key": "a"}},
                        {"name": "send_payment", "arguments": {"amount": 100}},
                    ],
                    "chunk_size": CHUNK,
                },
                {"text": "done"},
            ],
        }
    )


def two_turns() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "two",
            "turns": [
                {"tool_calls": [{"name": "lookup", "arguments": {"key": "a"}}]},
                {"tool_calls": [{"name": "lookup", "arguments": {"key": "b"}}]},
                {"text": "done"},
            ],
        }
    )


def agent_for(
    server: EmulationServer, name: str, tools: Tools, journal: Path | bool = False, **options: Any
) -> Agent:
    _, dialect, model = PROVIDERS[name]
    provider = make_provider(name, base_url=server.url_for(dialect), api_key="test-key")
    return Agent(provider, model=model, tools=tools.tools, journal=journal, **options)


def the_only_run(journal: Path) -> tuple[RunSummary, RunLog]:
    """The journal's one run, and its log."""
    store = SQLiteJournal(journal, read_only=True)
    try:
        (run,) = store.list_runs()
        return run, store.load_run(run.run_id)
    finally:
        store.close()


async def stream_until_error(agent: Agent, prompt: str = "go") -> tuple[str, ToolwireError]:
    """The text the caller saw before the run raised, and the error."""
    seen: list[str] = []
    try:
        with pytest.raises(ToolwireError) as caught:
            async for event in agent.stream(prompt):
                if isinstance(event, TextDelta):
                    seen.append(event.text)
    finally:
        await agent.aclose()
    return "".join(seen), caught.value


@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_an_output_limit_stops_a_long_answer_within_a_chunk_and_no_later_call_runs(
    name: str, tmp_path: Path
) -> None:
    limit = 20
    tools = Tools()
    journal = tmp_path / "journal.sqlite3"
    with EmulationServer(talk_then_call()) as server:
        agent = agent_for(
            server, name, tools, journal, eager=True, limits=UsageLimits(output_tokens=limit)
        )
        seen, error = await stream_until_error(agent)
        requests = len(server.requests)
    assert isinstance(error, UsageLimitExceeded)
    assert (error.limit, error.maximum, error.scope) == ("output_tokens", limit, "run")
    if name == "gemini":
        # The emulated Gemini reports the turn's whole output count with its
        # first chunk: that figure stops the stream at once.
        assert seen == "" and error.value > limit
    else:
        # The figure at the crossing: past the limit by at most one chunk.
        assert limit < error.value <= limit + math.ceil(CHUNK / 4)
    assert "output_tokens limit of 20" in error.message and f"{error.value:g}" in error.message
    # Nothing from the read that crossed it reached the caller, and no tool
    # call (they came after the crossing) ran, eager or not.
    assert len(seen) <= limit * 4 and LONG_TEXT.startswith(seen)
    assert tools.ran == [] and requests == 1
    run, log = the_only_run(journal)
    assert run.status == "limit"
    end = log.events[-1]
    assert end.kind == "run_failed" and end.data["error"]["limit"] == "output_tokens"
    assert end.data["error"]["value"] == error.value
    failed = [e for e in log.events if e.kind == "model_failed"]
    assert len(failed) == 1 and failed[0].data["usage"]["output_tokens"] == error.value
    assert not [e for e in log.events if e.kind == "tool_intent"]
    listed = CliRunner().invoke(main, ["runs", "list", "--journal", str(journal)])
    assert " limit " in listed.output


async def test_a_tool_call_limit_stops_the_stream_before_the_call_past_it(tmp_path: Path) -> None:
    tools = Tools()
    scenario = Scenario.from_dict(
        {
            "turns": [
                {
                    "tool_calls": [
                        {"name": "lookup", "arguments": {"key": str(n)}} for n in range(3)
                    ],
                    "chunk_size": 4,
                },
                {"text": "done"},
            ]
        }
    )
    with EmulationServer(scenario) as server:
        agent = agent_for(
            server, "openai-chat", tools, eager=True, limits=UsageLimits(tool_calls=2)
        )
        _, error = await stream_until_error(agent)
    assert isinstance(error, UsageLimitExceeded)
    assert (error.limit, error.value) == ("tool_calls", 3)
    # The calls before the crossing may have started eagerly; the third never.
    assert "lookup:2" not in tools.ran


async def test_a_request_limit_stops_before_the_request_is_sent() -> None:
    tools = Tools()
    with EmulationServer(two_turns()) as server:
        agent = agent_for(server, "anthropic", tools, limits=UsageLimits(model_requests=1))
        _, error = await stream_until_error(agent)
        requests = len(server.requests)
    assert isinstance(error, UsageLimitExceeded) and error.limit == "model_requests"
    assert requests == 1 and tools.ran == ["lookup:a"]


async def test_wall_time_is_measured_with_the_injected_clock() -> None:
    clock = FakeClock()
    tools = Tools(clock)  # each lookup takes ten (fake) seconds
    with EmulationServer(two_turns()) as server:
        agent = agent_for(server, "gemini", tools, limits=UsageLimits(wall_time=15, clock=clock))
        _, error = await stream_until_error(agent)
        requests = len(server.requests)
    assert isinstance(error, UsageLimitExceeded)
    assert (error.limit, error.maximum, error.value) == ("wall_time", 15, 20)
    assert tools.ran == ["lookup:a", "lookup:b"] and requests == 2


async def test_anthropics_early_input_count_stops_the_stream_at_its_start() -> None:
    tools = Tools()
    with EmulationServer(talk_then_call()) as server:
        agent = agent_for(server, "anthropic", tools, limits=UsageLimits(input_tokens=5))
        seen, error = await stream_until_error(agent)
    assert isinstance(error, UsageLimitExceeded) and error.limit == "input_tokens"
    assert seen == "" and tools.ran == []


async def test_a_cost_limit_counts_the_streamed_estimate() -> None:
    tools = Tools()
    # A dollar per output token: 20 tokens cross $19.5 (input is free).
    prices = Prices({"gpt-4.1-mini": Rates(input=0, output=1_000_000)}, data=False)
    with EmulationServer(talk_then_call()) as server:
        agent = agent_for(
            server, "openai-responses", tools, prices=prices, limits=UsageLimits(cost=19.5)
        )
        _, error = await stream_until_error(agent)
    assert isinstance(error, UsageLimitExceeded) and error.limit == "cost"
    assert 19.5 < error.value <= 19.5 + 2.5 and tools.ran == []
    assert "estimated while streaming" in error.message


async def test_a_budget_is_shared_by_the_runs_given_it() -> None:
    budget = Budget(UsageLimits(model_requests=4))
    tools = Tools()
    with EmulationServer(two_turns()) as server:
        first = agent_for(server, "openai-chat", tools, budget=budget)
        try:
            result = await first.run("go")
        finally:
            await first.aclose()
        assert result.ok and result.turns == 3
        second = agent_for(server, "openai-chat", tools, budget=budget)
        _, error = await stream_until_error(second)
    assert isinstance(error, UsageLimitExceeded)
    assert (error.scope, error.limit, error.value) == ("budget", "model_requests", 5)
    assert "the budget's model_requests limit" in error.message
    assert budget.used()["model_requests"] == 5


def test_limits_are_numbers() -> None:
    with pytest.raises(UsageError):
        UsageLimits(output_tokens=-1)
    with pytest.raises(UsageError):
        UsageLimits(cost="1")  # type: ignore[arg-type]
    assert UsageLimits(cost=0.5, tool_calls=3).to_dict() == {"cost": 0.5, "tool_calls": 3}
    assert UsageLimits(cost=0.5).cost == Decimal("0.5")


async def test_a_stream_that_stalls_is_cut_when_the_wall_time_runs_out() -> None:
    # The server waits three seconds between chunks; the run has half a second
    # (of the injected clock, which stands still: what is left when the
    # request is sent bounds the stream).
    clock = FakeClock()
    tools = Tools()
    scenario = Scenario.from_dict({"turns": [{"text": LONG_TEXT, "chunk_size": 100, "delay": 3}]})
    with EmulationServer(scenario) as server:
        agent = agent_for(
            server, "openai-chat", tools, limits=UsageLimits(wall_time=0.5, clock=clock)
        )
        with anyio.fail_after(8):
            _, error = await stream_until_error(agent)
    assert isinstance(error, UsageLimitExceeded)
    assert (error.limit, error.maximum, error.scope) == ("wall_time", 0.5, "run")
