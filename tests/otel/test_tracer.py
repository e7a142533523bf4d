"""Traces of real agent runs over loopback HTTP (the emulation server), read
back from the SDK's in-memory exporter: span tree, names, GenAI attributes,
token usage, content capture, errors, retried turns and eager tools."""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from toolwire import (
    Agent,
    Backoff,
    HttpRetryPolicy,
    HttpxTransport,
    ProviderError,
    RunResult,
    ToolwireError,
)
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.examples import get_current_time, get_weather
from toolwire.messages import UserMessage
from toolwire.otel import Tracer
from toolwire.testing import EmulationServer, Scenario

from .conftest import Spans

pytestmark = pytest.mark.anyio

QUESTION = "杭州天气怎么样?现在几点?"
CONTENT_KEYS = {
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
}
PROVIDER_VALUES = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "gemini-interactions": "gcp.gemini",
    "bedrock": "aws.bedrock",
    "bedrock-invoke": "aws.bedrock",
}


def weather(**turn_options: Any) -> Scenario:
    return Scenario.from_dict(
        {
            "name": "weather-otel",
            "turns": [
                {
                    "tool_calls": [
                        {"name": "get_weather", "arguments": {"city": "杭州"}},
                        {"name": "get_current_time", "arguments": {"timezone": "Asia/Shanghai"}},
                    ],
                    **turn_options,
                },
                {"text": "杭州{result:get_weather.condition_zh}。"},
            ],
        }
    )


def agent_for(server: EmulationServer, name: str, tracer: Tracer, **options: Any) -> Agent:
    _, dialect, model = PROVIDERS[name]
    provider = make_provider(name, base_url=server.url_for(dialect), api_key="test-key")
    return Agent(
        provider,
        model=model,
        tools=[get_weather, get_current_time],
        observers=[tracer],
        **options,
    )


def fast_transport(max_attempts: int) -> HttpxTransport:
    return HttpxTransport(
        retry=HttpRetryPolicy(
            retries=max_attempts - 1, backoff=Backoff(initial_delay=0.0, jitter=0.0)
        )
    )


async def run(agent: Agent, prompt: Any = QUESTION) -> RunResult:
    try:
        return await agent.run(prompt)
    finally:
        await agent.aclose()
        if agent.transport is not None:
            await agent.transport.aclose()


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def by_turn(spans: list[ReadableSpan]) -> list[ReadableSpan]:
    return sorted(spans, key=lambda s: (attrs(s)["toolwire.turn"], attrs(s)["toolwire.attempt"]))


@pytest.mark.parametrize("name", sorted(PROVIDERS))
async def test_a_two_turn_run_with_parallel_tools(name: str, spans: Spans) -> None:
    with EmulationServer(weather()) as server:
        tracer = Tracer(spans.provider, agent_name="weather-bot")
        result = await run(agent_for(server, name, tracer, max_tokens=256, temperature=0.5))
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
    assert result.output == "杭州小雨。"
    _, _, model = PROVIDERS[name]

    root = spans.one("invoke_agent")
    assert root.name == "invoke_agent weather-bot" and root.kind is SpanKind.INTERNAL
    assert root.parent is None
    assert attrs(root)["gen_ai.operation.name"] == "invoke_agent"
    assert attrs(root)["gen_ai.agent.name"] == "weather-bot"
    assert attrs(root)["toolwire.run.id"] == result.run_id
    assert attrs(root)["toolwire.run.outcome"] == "answered"

    chats = by_turn(spans.named("chat "))
    tools = spans.named("execute_tool ")
    assert len(spans.all) == 5 and len(chats) == 2 and len(tools) == 2
    assert {s.context.trace_id for s in spans.all if s.context} == {root.context.trace_id}  # type: ignore[union-attr]
    assert all(parent_id(s) == span_id(root) for s in chats + tools)
    assert sorted(spans.children(root), key=span_id) == sorted(chats + tools, key=span_id)

    for turn, chat in enumerate(chats, start=1):
        a = attrs(chat)
        assert chat.name == f"chat {model}" and chat.kind is SpanKind.CLIENT
        assert a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.provider.name"] == PROVIDER_VALUES[name]
        assert a["gen_ai.request.model"] == model
        if name == "bedrock":  # ConverseStream names neither the model nor the response
            assert "gen_ai.response.model" not in a and "gen_ai.response.id" not in a
        else:
            assert a["gen_ai.response.model"] == model
            assert isinstance(a["gen_ai.response.id"], str) and a["gen_ai.response.id"]
        assert (a["server.address"], a["server.port"]) == ("127.0.0.1", port)
        assert (a["gen_ai.request.max_tokens"], a["gen_ai.request.temperature"]) == (256, 0.5)
        assert (a["toolwire.turn"], a["toolwire.attempt"]) == (turn, 1)
        assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
        assert chat.status.status_code is StatusCode.UNSET
    assert attrs(chats[0])["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert attrs(chats[1])["gen_ai.response.finish_reasons"] == ("stop",)
    # The run's usage is the sum of its model requests, and the run's own total.
    for key, total in (
        ("gen_ai.usage.input_tokens", result.usage.input_tokens),
        ("gen_ai.usage.output_tokens", result.usage.output_tokens),
    ):
        assert attrs(root)[key] == sum(attrs(c)[key] for c in chats) == total

    records = {r.call.id: r for r in result.tool_calls}
    for tool_span in tools:
        a = attrs(tool_span)
        record = records[a["gen_ai.tool.call.id"]]
        assert tool_span.name == f"execute_tool {record.call.name}"
        assert tool_span.kind is SpanKind.INTERNAL
        assert a["gen_ai.operation.name"] == "execute_tool"
        assert (a["gen_ai.tool.name"], a["gen_ai.tool.type"]) == (record.call.name, "function")
        assert (a["toolwire.turn"], a["toolwire.tool.eager"]) == (1, False)
        assert tool_span.status.status_code is StatusCode.UNSET
        # Between the model request that asked for it and the next one.
        assert chats[0].end_time <= tool_span.start_time  # type: ignore[operator]
        assert tool_span.end_time <= chats[1].start_time  # type: ignore[operator]

    # Nothing the user or a tool said is recorded unless asked for.
    for span in spans.all:
        assert not CONTENT_KEYS & set(attrs(span))
        assert "杭州" not in repr(attrs(span)) and "小雨" not in repr(attrs(span))


async def test_content_is_recorded_when_opted_in(spans: Spans) -> None:
    with EmulationServer(weather()) as server:
        tracer = Tracer(spans.provider, capture_content=True)
        await run(agent_for(server, "openai-chat", tracer, system="你是天气助手。"))
    assert spans.one("invoke_agent").name == "invoke_agent"  # no agent name given
    weather_span = spans.one("execute_tool get_weather")
    assert json.loads(attrs(weather_span)["gen_ai.tool.call.arguments"]) == {"city": "杭州"}
    assert json.loads(attrs(weather_span)["gen_ai.tool.call.result"])["condition_zh"] == "小雨"

    first, second = by_turn(spans.named("chat "))
    assert json.loads(attrs(first)["gen_ai.system_instructions"]) == [
        {"type": "text", "content": "你是天气助手。"}
    ]
    assert json.loads(attrs(first)["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": QUESTION}]}
    ]
    (output,) = json.loads(attrs(first)["gen_ai.output.messages"])
    assert output["role"] == "assistant" and output["finish_reason"] == "tool_calls"
    assert [(p["type"], p["name"]) for p in output["parts"]] == [
        ("tool_call", "get_weather"),
        ("tool_call", "get_current_time"),
    ]
    # The second request carries the calls and their results, matched by id.
    history = json.loads(attrs(second)["gen_ai.input.messages"])
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "tool"]
    call_ids = [p["id"] for p in history[1]["parts"]]
    assert [m["parts"][0]["id"] for m in history[2:]] == call_ids
    assert json.loads(history[2]["parts"][0]["response"])["condition_zh"] == "小雨"
    (answer,) = json.loads(attrs(second)["gen_ai.output.messages"])
    assert answer["parts"] == [{"type": "text", "content": "杭州小雨。"}]


async def test_an_invalid_arguments_result_is_an_error_span(spans: Spans) -> None:
    scenario = Scenario.from_dict(
        {
            "name": "correction",
            "turns": [
                {"tool_calls": [{"name": "get_weather", "arguments": {"city": 123}}]},
                {"tool_calls": [{"name": "get_weather", "arguments": {"city": "杭州"}}]},
                {"text": "杭州{result:get_weather.condition_zh}"},
            ],
        }
    )
    with EmulationServer(scenario) as server:
        result = await run(agent_for(server, "anthropic", Tracer(spans.provider)))
    assert result.output == "杭州小雨"
    bad, good = sorted(spans.named("execute_tool"), key=lambda s: attrs(s)["toolwire.turn"])
    assert bad.status.status_code is StatusCode.ERROR
    assert attrs(bad)["error.type"] == "invalid_arguments"
    # Without content capture the description is the category, not the
    # message (which may quote the arguments).
    assert bad.status.description == "invalid_arguments"
    # (Ids and keys are random hex, which may hold "123" by chance: not content.)
    assert not any(
        "123" in str(v) for k, v in attrs(bad).items() if not k.endswith((".id", "idempotency_key"))
    )
    assert good.status.status_code is StatusCode.UNSET and "error.type" not in attrs(good)
    # The run recovered: it is not an error.
    root = spans.one("invoke_agent")
    assert root.status.status_code is StatusCode.UNSET
    assert attrs(root)["toolwire.run.turns"] == 3


async def test_a_500_storm_marks_the_model_and_run_spans_as_errors(spans: Spans) -> None:
    with EmulationServer(weather(faults=[{"status": 500}] * 10)) as server:
        tracer = Tracer(spans.provider)
        agent = agent_for(server, "openai-chat", tracer, transport=fast_transport(3))
        with pytest.raises(ProviderError) as caught:
            await run(agent)
        requests = len(server.requests)
    assert requests == 3
    root = spans.one("invoke_agent")
    chat = spans.one("chat ")
    assert spans.named("execute_tool") == []
    for span in (root, chat):
        assert span.status.status_code is StatusCode.ERROR
        assert attrs(span)["error.type"] == caught.value.type_name
        assert attrs(span)["http.response.status_code"] == 500
        assert [e.name for e in span.events] == ["exception"]
    assert parent_id(chat) == span_id(root)
    # One span for the model request: the transport's HTTP retries are part of it.
    assert attrs(chat)["toolwire.attempt"] == 1


async def _cut_offset(server: EmulationServer) -> int:
    """A byte offset inside the first call's arguments of the first turn."""
    _, dialect, model = PROVIDERS["openai-chat"]
    provider = make_provider("openai-chat", base_url=server.url_for(dialect), api_key="test-key")
    request = provider.build_request(
        model=model, messages=[UserMessage("probe")], tools=(), stream=True
    )
    async with httpx.AsyncClient() as client:
        response = await client.post(request.url, json=request.json, headers=dict(request.headers))
    start = response.content.find("杭".encode())
    assert start > 0
    return start + 2


async def test_a_retried_turn_is_a_span_per_attempt(spans: Spans) -> None:
    with EmulationServer(weather()) as probe:
        offset = await _cut_offset(probe)
    with EmulationServer(weather(faults=[{"cut_after_bytes": offset}])) as server:
        agent = agent_for(server, "openai-chat", Tracer(spans.provider), stream_retries=1)
        result = await run(agent)
    assert result.ok
    root = spans.one("invoke_agent")
    chats = by_turn(spans.named("chat "))
    assert [(attrs(c)["toolwire.turn"], attrs(c)["toolwire.attempt"]) for c in chats] == [
        (1, 1),
        (1, 2),
        (2, 1),
    ]
    failed, retried, _ = chats
    assert failed.status.status_code is StatusCode.ERROR
    assert attrs(failed)["error.type"] in ("read_error", "stream_truncated")
    assert "gen_ai.response.id" not in attrs(failed)
    assert retried.status.status_code is StatusCode.UNSET
    assert failed.end_time <= retried.start_time  # type: ignore[operator]
    assert all(parent_id(c) == span_id(root) for c in chats)
    assert root.status.status_code is StatusCode.UNSET
    assert len(spans.named("execute_tool")) == 2, "tools ran once, from the complete stream"


@pytest.mark.parametrize("name", ["openai-chat", "anthropic"])
async def test_eager_tools_nest_under_the_model_span_of_their_turn(name: str, spans: Spans) -> None:
    with EmulationServer(weather(delay=0.005)) as server:
        result = await run(agent_for(server, name, Tracer(spans.provider), eager=True))
    assert result.ok and all(r.eager for r in result.tool_calls)
    root = spans.one("invoke_agent")
    first = by_turn(spans.named("chat "))[0]
    tools = spans.named("execute_tool")
    assert len(tools) == 2
    assert parent_id(first) == span_id(root)
    for tool_span in tools:
        assert parent_id(tool_span) == span_id(first)
        assert tool_span.context.trace_id == root.context.trace_id  # type: ignore[union-attr]
        assert attrs(tool_span)["toolwire.tool.eager"] is True
        # Started while the model was streaming, inside its span.
        assert first.start_time <= tool_span.start_time  # type: ignore[operator]
        assert tool_span.end_time <= first.end_time  # type: ignore[operator]


async def test_the_run_span_joins_the_callers_trace(spans: Spans) -> None:
    app = spans.provider.get_tracer("app")
    with EmulationServer(weather()) as server:
        with app.start_as_current_span("handle request") as outer:
            await run(agent_for(server, "gemini", Tracer(spans.provider)))
    root = spans.one("invoke_agent")
    assert parent_id(root) == outer.get_span_context().span_id
    assert {s.context.trace_id for s in spans.all if s.context} == {
        outer.get_span_context().trace_id
    }


async def test_concurrent_runs_on_one_tracer_stay_apart(spans: Spans) -> None:
    tracer = Tracer(spans.provider)
    results: dict[str, RunResult] = {}
    with EmulationServer(weather()) as one, EmulationServer(weather()) as two:

        async def go(server: EmulationServer, name: str) -> None:
            results[name] = await run(agent_for(server, name, tracer))

        async with anyio.create_task_group() as tg:
            tg.start_soon(go, one, "openai-chat")
            tg.start_soon(go, two, "anthropic")
    roots = spans.named("invoke_agent")
    assert len(roots) == 2 and len(spans.all) == 10
    for root in roots:
        run_id = attrs(root)["toolwire.run.id"]
        assert run_id in {r.run_id for r in results.values()}
        children = spans.children(root)
        assert len(children) == 4
        trace_id = root.context.trace_id  # type: ignore[union-attr]
        assert all(c.context.trace_id == trace_id for c in children)  # type: ignore[union-attr]
        providers = {attrs(c).get("gen_ai.provider.name") for c in children} - {None}
        assert providers == {attrs(root)["gen_ai.provider.name"]}


async def test_a_failed_run_with_a_typed_error_records_it(spans: Spans) -> None:
    # A port nobody listens on: the connect error ends the run.
    async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener:
        port = listener.extra(anyio.abc.SocketAttribute.local_port)  # type: ignore[attr-defined]
    provider = make_provider("openai-chat", base_url=f"http://127.0.0.1:{port}/v1", api_key="k")
    agent = Agent(
        provider,
        model="m",
        tools=[get_weather],
        observers=[Tracer(spans.provider)],
        transport=fast_transport(1),
    )
    with pytest.raises(ToolwireError) as caught:
        await run(agent)
    root = spans.one("invoke_agent")
    assert root.status.status_code is StatusCode.ERROR
    assert attrs(root)["error.type"] == caught.value.type_name == "connect_error"
    assert spans.one("chat m").status.status_code is StatusCode.ERROR


async def test_a_repaired_call_is_flagged_on_its_span(spans: Spans) -> None:
    scenario = Scenario.from_dict(
        {
            "name": "repaired",
            "turns": [
                {"tool_calls": [{"name": "get_weather", "arguments": '{"city": "杭州",}'}]},
                {"tool_calls": [{"name": "get_weather", "arguments": {"city": "杭州"}}]},
                {"text": "杭州{result:get_weather.condition_zh}"},
            ],
        }
    )
    with EmulationServer(scenario) as server:
        await run(agent_for(server, "openai-chat", Tracer(spans.provider)))
    repaired, clean = sorted(spans.named("execute_tool"), key=lambda s: attrs(s)["toolwire.turn"])
    assert attrs(repaired)["toolwire.tool.arguments_repaired"] is True
    assert attrs(clean)["toolwire.tool.arguments_repaired"] is False
