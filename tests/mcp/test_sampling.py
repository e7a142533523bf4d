"""A server's tool asks the client's model mid-call (MCP sampling): refused
unless the connection permits it; then served by the agent's own provider
(the emulation server), under the run's limits, counted in the run's usage
and journaled. The server is a real process built with the official SDK."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import toolwire
from toolwire import Agent, Toolbox, ToolCall, UsageLimitExceeded, UsageLimits
from toolwire.journal import (
    ModelResponse,
    ModelSampled,
    SQLiteJournal,
    ToolOutcome,
    plan_resume,
)
from toolwire.journal._totals import derived_totals
from toolwire.mcp import MCPConnection, MCPProtocol, connect_http, connect_stdio
from toolwire.messages import AssistantMessage, UserMessage
from toolwire.otel import Tracer
from toolwire.testing import EmulationServer, Scenario
from toolwire.types import Usage

from .conftest import serve_http

pytestmark = pytest.mark.anyio

SERVER = [str(Path(__file__).parent / "sampling_server.py")]
SRC = Path(__file__).parent.parent.parent / "src"
# The emulation server answers by the number of assistant messages in the
# request: the run's own conversation starts with one, so its turns are 1
# and 2, and a sampled request (a conversation of its own) gets turn 0.
OPENING = [UserMessage("hi"), AssistantMessage("hello"), UserMessage("summarize the text")]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def scenario(tool: str) -> Scenario:
    turns = [
        {"text": "A one-line summary."},
        {"tool_calls": [{"name": tool, "arguments": {"text": "a long text"}}]},
        {"text": "Done: {result:0}"},
    ]
    return Scenario.from_dict({"name": "sampling", "turns": turns})


async def run_agent(
    server: MCPConnection,
    tool: str,
    journal: SQLiteJournal,
    read_only: bool | None = None,
    **options: Any,
) -> tuple[toolwire.RunResult, list[dict[str, Any]]]:
    with EmulationServer(scenario(tool)) as model:
        provider = toolwire.OpenAIChat(base_url=model.url_for("openai-chat"), api_key="k")
        tools = await server.tools(read_only=read_only)
        agent = Agent(provider, model="m", tools=tools, journal=journal, **options)
        try:
            result = await agent.run(OPENING)
        finally:
            await agent.aclose()
        return result, list(model.requests)


def usages(journal: SQLiteJournal, run_id: str, kind: type) -> list[Usage]:
    records = [e.record for e in journal.load_run(run_id).events]
    return [Usage(**r.usage) for r in records if isinstance(r, kind) and r.usage is not None]


def connect(
    transport: str, protocol: MCPProtocol, **options: Any
) -> AbstractAsyncContextManager[MCPConnection]:
    """A connection to a new sampling_server.py process."""
    if transport == "stdio":
        return connect_stdio(sys.executable, SERVER, protocol=protocol, **options)

    @asynccontextmanager
    async def over_http() -> AsyncIterator[MCPConnection]:
        with serve_http(Path(SERVER[0])) as url:
            async with connect_http(url, protocol=protocol, **options) as server:
                yield server

    return over_http()


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize(
    ("protocol", "tool", "expected"),
    [
        # The tool sends sampling/createMessage itself, on the back channel.
        ("handshake", "summarize", "summary by m: A one-line summary. (endTurn)"),
        # The SDK's resolver: the request rides an InputRequiredResult.
        ("auto", "headline", "headline: A one-line summary."),
    ],
)
async def test_permitted_sampling_is_served_by_the_runs_provider_and_counted(
    tmp_path: Path, transport: str, protocol: MCPProtocol, tool: str, expected: str
) -> None:
    journal = SQLiteJournal(tmp_path / "runs.db")
    async with connect(transport, protocol, sampling=True) as server:
        result, requests = await run_agent(server, tool, journal)
    assert result.outcome == "answered"
    assert result.output == f'Done: {{"result":"{expected}"}}'
    # The sampled request reached the agent's provider, between the two turns.
    assert len(requests) == 3
    sampled = requests[1]
    assert "tools" not in sampled and sampled["model"] == "m"
    said = [m["content"] for m in sampled["messages"]]
    if tool == "summarize":
        assert said == ["You write one-line summaries.", "Summarize: a long text"]
        assert sampled["max_tokens"] == 40
    else:
        assert said == ["Headline: a long text"] and sampled["max_tokens"] == 20
    # Journaled, by the call that asked, and counted in the run's usage.
    run = journal.load_run(result.run_id)
    (event,) = [e for e in run.events if isinstance(e.record, ModelSampled)]
    record = event.record
    assert isinstance(record, ModelSampled)
    assert event.call_id == result.tool_calls[0].call.id and event.turn == 1
    assert (record.source, record.text, record.finish_reason) == (
        "sampling-server",
        "A one-line summary.",
        "stop",
    )
    (sample_usage,) = usages(journal, result.run_id, ModelSampled)
    turn_usages = usages(journal, result.run_id, ModelResponse)
    assert sample_usage.output_tokens and len(turn_usages) == 2
    assert result.usage == turn_usages[0] + turn_usages[1] + sample_usage
    assert plan_resume(run).usage == result.usage  # a resume counts it too
    totals = derived_totals(run.events)
    assert totals.model_requests == 3 and totals.usage == result.usage
    header = run.events[0].record
    assert getattr(header, "settings", {})["tool_sources"] == {
        "sampling-server": server.protocol_version
    }


async def test_a_sampled_completion_is_a_model_span_under_the_tool_that_asked(
    tmp_path: Path,
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    journal = SQLiteJournal(tmp_path / "runs.db")
    tracer = Tracer(provider, capture_content=True)
    async with connect("stdio", "handshake", sampling=True) as server:
        result, _ = await run_agent(server, "summarize", journal, observers=[tracer])
    assert result.outcome == "answered"
    spans = exporter.get_finished_spans()
    chats = [s for s in spans if s.name == "chat m"]
    (tool,) = [s for s in spans if s.name.startswith("execute_tool")]
    (run,) = [s for s in spans if s.name.startswith("invoke_agent")]
    assert tool.context is not None and run.context is not None
    sampled = [s for s in chats if s.parent and s.parent.span_id == tool.context.span_id]
    assert len(chats) == 3 and len(sampled) == 1, "the run's two turns and the sampled one"
    (span,) = sampled
    attributes = dict(span.attributes or {})
    assert attributes["toolwire.sampling.source"] == "sampling-server"
    assert attributes["gen_ai.tool.call.id"] == result.tool_calls[0].call.id
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    (record,) = [
        e.record
        for e in journal.load_run(result.run_id).events
        if isinstance(e.record, ModelSampled)
    ]
    assert record.usage is not None
    assert attributes["gen_ai.usage.output_tokens"] == record.usage["output_tokens"]
    said = json.loads(str(attributes["gen_ai.output.messages"]))
    assert said[0]["parts"] == [{"type": "text", "content": "A one-line summary."}]
    # It spans the completion's own time, as the journal recorded it.
    assert span.start_time is not None and span.end_time is not None and record.elapsed
    assert span.end_time - span.start_time == round(record.elapsed * 1e9)
    provider.shutdown()


async def test_sampling_is_refused_unless_permitted(tmp_path: Path) -> None:
    journal = SQLiteJournal(tmp_path / "runs.db")
    async with connect_stdio(sys.executable, SERVER) as server:
        result, requests = await run_agent(server, "headline", journal)
    # The server refused its own request: the model read the tool's failure.
    assert "did not declare the sampling capability" in result.output
    assert len(requests) == 2  # the run's two turns: nothing was sampled
    events = journal.load_run(result.run_id).events
    assert not [e for e in events if isinstance(e.record, ModelSampled)]


async def test_sampling_is_under_the_runs_limits(tmp_path: Path) -> None:
    journal = SQLiteJournal(tmp_path / "runs.db")
    limits = UsageLimits(model_requests=1)
    async with connect_stdio(sys.executable, SERVER, sampling=True) as server:
        with pytest.raises(UsageLimitExceeded, match="model_requests"):
            await run_agent(server, "headline", journal, limits=limits)
    (run,) = journal.list_runs()
    events = journal.load_run(run.run_id).events
    (sampled,) = [e.record for e in events if isinstance(e.record, ModelSampled)]
    assert isinstance(sampled, ModelSampled)
    assert sampled.error is not None and "model_requests" in sampled.error
    assert sampled.usage is None  # refused before it was sent
    (outcome,) = [e.record for e in events if isinstance(e.record, ToolOutcome)]
    assert isinstance(outcome, ToolOutcome) and outcome.result is not None
    assert not outcome.result["ok"] and "sampling refused" in outcome.result["content"]
    assert run.status == "limit"  # the next model request met the limit
    env = {**os.environ, "PYTHONPATH": str(SRC), "TOOLWIRE_JOURNAL": str(tmp_path / "runs.db")}
    with anyio.fail_after(60):
        shown = await anyio.run_process(
            [sys.executable, "-m", "toolwire", "runs", "show", run.run_id], env=env
        )
    text = shown.stdout.decode()
    assert "sampling-server sampled the model" in text
    assert "refused: the run's model_requests limit of 1 was crossed" in text


async def test_without_a_run_a_permitted_request_is_refused() -> None:
    async with connect_stdio(sys.executable, SERVER, sampling=True) as server:
        (made,) = await Toolbox(await server.tools()).execute(
            [ToolCall(id="c", name="headline", arguments={"text": "a long text"})]
        )
    assert not made.ok and "only to a call of an agent's run" in made.message
    assert json.loads(made.content)["error"] == "failed"


async def test_an_eager_call_cannot_sample(tmp_path: Path) -> None:
    journal = SQLiteJournal(tmp_path / "runs.db")
    async with connect_stdio(sys.executable, SERVER, sampling=True) as server:
        # Read-only, so the eager agent starts it while the model streams.
        result, requests = await run_agent(server, "headline", journal, True, eager=True)
    assert result.tool_calls[0].eager
    assert "not to an eager call" in result.output
    assert len(requests) == 2  # nothing was sampled
