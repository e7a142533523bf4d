"""The tracer's hooks called directly, for the orders a real run produces
only by chance: eager tools cut off by a failed stream, a run cancelled with
tools in flight, hooks interleaved across tasks that each carry a different
ambient span."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from toolwire import ReadError, RunResult, ToolResult, Usage
from toolwire.messages import UserMessage
from toolwire.observe import RunInfo
from toolwire.otel import SEMCONV_VERSION, Tracer, provider_name
from toolwire.tools import Sample
from toolwire.types import ChoiceResult, StreamResult, ToolCall

from .conftest import Spans

pytestmark = pytest.mark.anyio

RUN = "run-1"


def info(run_id: str = RUN, **settings: Any) -> RunInfo:
    return RunInfo(
        run_id=run_id,
        model="gpt-4.1-mini",
        provider="openai",
        dialect="openai-chat",
        tools=("get_weather",),
        settings={"base_url": "https://api.openai.com/v1", **settings},
    )


def call(call_id: str, city: str = "杭州") -> ToolCall:
    return ToolCall(id=call_id, name="get_weather", arguments={"city": city})


def ok(call_id: str) -> ToolResult:
    return ToolResult(call_id=call_id, name="get_weather", ok=True, content='{"t": 24}')


def answered(run_id: str = RUN) -> RunResult:
    return RunResult(
        output="done",
        outcome="answered",
        messages=(),
        usage=Usage(input_tokens=3, output_tokens=4),
        tool_calls=(),
        turns=1,
        run_id=run_id,
    )


def response(text: str = "ok") -> StreamResult:
    return StreamResult(
        dialect="openai-chat",
        choices=(ChoiceResult(text=text, finish_reason="stop"),),
        usage=Usage(input_tokens=3, output_tokens=4, cached_tokens=2),
        model="gpt-4.1-mini-2025",
        response_id="chatcmpl-1",
    )


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def sid(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def pid(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


async def test_eager_tools_of_a_failed_stream_end_as_cancelled(spans: Spans) -> None:
    tracer = Tracer(spans.provider)
    await tracer.run_started(info())
    await tracer.model_request(RUN, 1, 1, [UserMessage("hi")])
    await tracer.tool_started(RUN, 1, call("a"), "key-a", eager=True)
    await tracer.model_failed(RUN, 1, 1, ReadError("connection reset"), 0.1)
    await tracer.model_request(RUN, 1, 2, [UserMessage("hi")])
    await tracer.tool_started(RUN, 1, call("a"), "key-a", eager=True)
    await tracer.model_response(RUN, 1, 2, response(), 0.1)
    await tracer.tool_finished(RUN, 1, call("a"), ok("a"), eager=True)
    await tracer.run_finished(RUN, answered())

    failed, retried = sorted(spans.named("chat"), key=lambda s: attrs(s)["toolwire.attempt"])
    cut, done = sorted(spans.named("execute_tool"), key=lambda s: s.start_time or 0)
    assert (pid(cut), pid(done)) == (sid(failed), sid(retried))
    assert cut.status.status_code is StatusCode.ERROR and attrs(cut)["error.type"] == "cancelled"
    assert cut.end_time <= failed.end_time  # type: ignore[operator]
    assert failed.status.status_code is StatusCode.ERROR
    assert attrs(failed)["error.type"] == "read_error"
    assert failed.status.description == "connection reset"
    assert done.status.status_code is StatusCode.UNSET
    a = attrs(retried)
    assert a["gen_ai.response.model"] == "gpt-4.1-mini-2025"
    assert a["gen_ai.response.id"] == "chatcmpl-1"
    assert a["gen_ai.usage.cache_read.input_tokens"] == 2
    assert (a["server.address"], a["server.port"]) == ("api.openai.com", 443)
    assert not tracer._runs, "nothing is kept once the run ended"


async def a_cancellation() -> BaseException:
    """The event loop's own cancellation, as a cancelled run sees it (trio's
    cannot be built by hand)."""
    caught: list[BaseException] = []
    with anyio.CancelScope() as scope:
        scope.cancel()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class() as exc:
            caught.append(exc)
            raise
    return caught[0]


async def test_a_cancelled_run_ends_every_open_span(spans: Spans) -> None:
    tracer = Tracer(spans.provider)
    await tracer.run_started(info())
    await tracer.model_request(RUN, 1, 1, [UserMessage("hi")])
    await tracer.model_response(RUN, 1, 1, response(), 0.1)
    await tracer.tool_started(RUN, 1, call("a"), "key-a")
    await tracer.tool_started(RUN, 1, call("b"), "key-b")
    await tracer.run_failed(RUN, await a_cancellation())

    root = spans.one("invoke_agent")
    tools = spans.named("execute_tool")
    assert len(tools) == 2 and len(spans.all) == 4, "every span was ended and exported"
    for span in [root, *tools]:
        assert span.status.status_code is StatusCode.ERROR
        assert attrs(span)["error.type"] == "cancelled"
    assert root.events == (), "a cancellation is not an exception to record"
    assert all(t.end_time <= root.end_time for t in tools)  # type: ignore[operator]


async def test_a_failed_run_records_its_exception(spans: Spans) -> None:
    tracer = Tracer(spans.provider)
    await tracer.run_started(info())
    await tracer.run_failed(RUN, RuntimeError("an observer broke"))
    root = spans.one("invoke_agent")
    assert attrs(root)["error.type"] == "RuntimeError"
    assert root.status.description == "an observer broke"
    assert [e.name for e in root.events] == ["exception"]


async def test_hooks_from_many_tasks_nest_by_key_not_by_ambient_context(spans: Spans) -> None:
    """Each task runs with a different foreign span current; every tool span
    still hangs from its own run, and the runs do not mix."""
    tracer = Tracer(spans.provider)
    foreign = spans.provider.get_tracer("elsewhere")
    await tracer.run_started(info("r1"))
    await tracer.run_started(info("r2"))
    for run_id in ("r1", "r2"):
        await tracer.model_request(run_id, 1, 1, [UserMessage("hi")])
        await tracer.model_response(run_id, 1, 1, response(), 0.1)
    all_started = anyio.Event()
    started = 0

    async def one_tool(run_id: str, call_id: str) -> None:
        nonlocal started
        with foreign.start_as_current_span(f"foreign {run_id}/{call_id}"):
            await tracer.tool_started(run_id, 1, call(call_id), f"k-{call_id}")
            started += 1
            if started == 6:
                all_started.set()
            await all_started.wait()  # every tool span is open at once
            await tracer.tool_finished(run_id, 1, call(call_id), ok(call_id))

    async with anyio.create_task_group() as tg:
        for run_id in ("r1", "r2"):
            for n in range(3):
                tg.start_soon(one_tool, run_id, f"{run_id}-c{n}")
    await tracer.run_finished("r1", answered("r1"))
    await tracer.run_finished("r2", answered("r2"))

    roots = {attrs(s)["toolwire.run.id"]: s for s in spans.named("invoke_agent")}
    for tool_span in spans.named("execute_tool"):
        run_id = str(attrs(tool_span)["gen_ai.tool.call.id"]).split("-")[0]
        assert pid(tool_span) == sid(roots[run_id])
        assert tool_span.context.trace_id == roots[run_id].context.trace_id  # type: ignore[union-attr]
    assert len(spans.named("execute_tool")) == 6
    assert roots["r1"].context.trace_id != roots["r2"].context.trace_id  # type: ignore[union-attr]
    # The hooks did not leave a span of theirs current in the caller.
    assert trace.get_current_span() is trace.INVALID_SPAN
    assert otel_context.get_current() == otel_context.Context()


async def test_steps_of_an_unknown_run_are_ignored(spans: Spans) -> None:
    tracer = Tracer(spans.provider)
    await tracer.model_request("nobody", 1, 1, [])
    await tracer.tool_started("nobody", 1, call("a"), "k")
    await tracer.tool_finished("nobody", 1, call("a"), ok("a"))
    await tracer.model_response("nobody", 1, 1, response(), 0.0)
    await tracer.run_finished("nobody", answered("nobody"))
    assert spans.all == []


async def test_spans_name_their_scope_and_conventions_version(spans: Spans) -> None:
    tracer = Tracer(spans.provider)
    await tracer.run_started(info())
    await tracer.run_finished(RUN, answered())
    scope = spans.one("invoke_agent").instrumentation_scope
    assert scope is not None and scope.name == "toolwire"
    assert scope.schema_url == f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"


@pytest.mark.parametrize(
    ("name", "dialect", "base_url", "expected"),
    [
        ("openai", "openai-chat", None, "openai"),
        ("openai-responses", "openai-responses", None, "openai"),
        ("anthropic", "anthropic-messages", None, "anthropic"),
        ("gemini", "gemini", "https://generativelanguage.googleapis.com/v1beta", "gcp.gemini"),
        ("gemini", "gemini", "https://us-central1-aiplatform.googleapis.com/v1", "gcp.vertex_ai"),
        ("DeepSeek", "openai-chat", "https://api.deepseek.com", "deepseek"),
        ("groq", "openai-chat", None, "groq"),
        ("mistral", "openai-chat", None, "mistral_ai"),
        ("my-vllm", "openai-chat", "http://10.0.0.5:8000/v1", "openai"),
        ("corp", "openai-chat", "https://corp.openai.azure.com/openai", "azure.ai.openai"),
        ("local", "ollama-ndjson", "http://[::1", "local"),
        # A name of a dialect's provider (its registration's) gets its flavour.
        ("bedrock", "openai-chat", None, "aws.bedrock"),
        ("gemini-interactions", "openai-chat", None, "gcp.gemini"),
        ("openai-chat", "anthropic-messages", None, "openai"),
        ("cohere", "cohere-v2", None, "cohere"),
        ("toyco", "no-such-dialect", None, "toyco"),
    ],
)
def test_provider_names(name: str, dialect: str, base_url: str | None, expected: str) -> None:
    assert provider_name(name, dialect, base_url) == expected


async def test_an_explicit_provider_name_and_malformed_url(spans: Spans) -> None:
    tracer = Tracer(spans.provider, provider="azure.ai.inference")
    await tracer.run_started(info(base_url="http://[::1"))
    await tracer.run_finished(RUN, answered())
    root = spans.one("invoke_agent")
    assert attrs(root)["gen_ai.provider.name"] == "azure.ai.inference"
    assert "server.address" not in attrs(root)


async def test_a_refused_sample_is_a_failed_model_span_under_its_tool(spans: Spans) -> None:
    tracer = Tracer(spans.provider)
    await tracer.run_started(info())
    await tracer.tool_started(RUN, 1, call("c1"), "key-1")
    refused = Sample(source="docs-server", model="gpt-4.1-mini", error="the cost limit is reached")
    await tracer.model_sampled(RUN, 1, "c1", refused)
    await tracer.tool_finished(RUN, 1, call("c1"), ok("c1"))
    await tracer.model_sampled(RUN, 1, "gone", refused)  # its tool already ended
    await tracer.run_finished(RUN, answered())
    tool = spans.one("execute_tool")
    under_tool, under_run = spans.named("chat ")
    assert under_tool.parent and tool.context and under_tool.parent.span_id == tool.context.span_id
    assert under_tool.status.status_code is StatusCode.ERROR
    assert under_tool.status.description == "the cost limit is reached"
    assert "gen_ai.response.model" not in dict(under_tool.attributes or {})
    run = spans.one("invoke_agent")
    assert under_run.parent and run.context and under_run.parent.span_id == run.context.span_id
