"""The :class:`Tracer` observer: one span per run, model request, tool call
and completion a tool asked for (sampling)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

from toolwire import __version__
from toolwire.errors import ProviderError, ToolwireError
from toolwire.observe import RunObserver
from toolwire.otel._content import (
    _describe,
    _error_type,
    _input_messages,
    _mark_error,
    _output_messages,
)
from toolwire.otel._names import _SCHEMA_URL, _host_port, provider_name
from toolwire.run import RunInfo, RunResult
from toolwire.stream import jsonio
from toolwire.types import InvalidToolCall, ToolCall, Usage

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import TracerProvider
    from opentelemetry.util.types import AttributeValue

    from toolwire.cost import Cost
    from toolwire.messages import Message
    from toolwire.tools import Sample, ToolResult
    from toolwire.types import StreamResult


COST_ATTRIBUTE = "toolwire.cost.usd"
"""A model span's (and a run span's) cost in US dollars: the GenAI semantic
conventions have no attribute for it."""


@dataclass(slots=True)
class _ToolSpan:
    span: Span
    eager: bool
    attempt: int | None
    """The model attempt an eager tool started under (None for the others)."""


@dataclass(slots=True)
class _Run:
    span: Span
    model: str
    common: dict[str, AttributeValue]
    """Attributes every model span of the run repeats."""
    chats: dict[tuple[int, int], Span] = field(default_factory=dict[tuple[int, int], Span])
    attempts: dict[int, int] = field(default_factory=dict[int, int])
    """The latest attempt of each turn."""
    tools: dict[tuple[int, str], _ToolSpan] = field(
        default_factory=dict[tuple[int, str], _ToolSpan]
    )

    def context(self) -> Context:
        return trace.set_span_in_context(self.span)


class Tracer(RunObserver):
    """Records each agent run as an OpenTelemetry trace.

    Pass it to an agent: ``Agent(..., observers=[Tracer()])``. One tracer can
    observe any number of runs, concurrently.

    Args:
        tracer_provider: where spans go; the global provider when ``None``.
        capture_content: also record tool arguments and results, the
            messages sent to the model and its answers. Off by default:
            they may hold personal data.
        agent_name: ``gen_ai.agent.name``, and the run span's name
            (``invoke_agent {agent_name}``; ``invoke_agent`` without one).
        provider: ``gen_ai.provider.name`` for every run, instead of the one
            :func:`provider_name` derives from the agent's provider.
    """

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        *,
        capture_content: bool = False,
        agent_name: str | None = None,
        provider: str | None = None,
    ) -> None:
        self.capture_content = capture_content
        self.agent_name = agent_name
        self.provider = provider
        self._tracer = trace.get_tracer(
            "toolwire", __version__, tracer_provider=tracer_provider, schema_url=_SCHEMA_URL
        )
        self._runs: dict[str, _Run] = {}

    def __repr__(self) -> str:
        return (
            f"Tracer(capture_content={self.capture_content}, agent_name={self.agent_name!r}, "
            f"open_runs={len(self._runs)})"
        )

    # -- the run ---------------------------------------------------------------------

    async def run_started(self, info: RunInfo) -> None:
        """Start the run span (under the caller's current span, if any)."""
        stale = self._runs.pop(info.run_id, None)
        if stale is not None:  # the same run id again: the old run never reported its end
            self._close(stale, "cancelled", "the run was started again")
            stale.span.end()
        settings = info.settings
        base_url = settings.get("base_url")
        base_url = base_url if isinstance(base_url, str) else None
        common: dict[str, AttributeValue] = {
            "gen_ai.provider.name": self.provider
            or provider_name(info.provider, info.dialect, base_url),
            "gen_ai.request.model": info.model,
        }
        if base_url:
            host, port = _host_port(base_url)
            if host is not None:
                common["server.address"] = host
                if port is not None:
                    common["server.port"] = port
        max_tokens = settings.get("max_tokens")
        if isinstance(max_tokens, int) and not isinstance(max_tokens, bool):
            common["gen_ai.request.max_tokens"] = max_tokens
        temperature = settings.get("temperature")
        if isinstance(temperature, (int, float)) and not isinstance(temperature, bool):
            common["gen_ai.request.temperature"] = float(temperature)
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "invoke_agent",
            **common,
            "toolwire.run.id": info.run_id,
            "toolwire.dialect": info.dialect,
            "toolwire.tools": list(info.tools),
        }
        if self.agent_name:
            attributes["gen_ai.agent.name"] = self.agent_name
        if info.resumed:
            attributes["toolwire.run.resumed"] = True
        name = f"invoke_agent {self.agent_name}" if self.agent_name else "invoke_agent"
        span = self._tracer.start_span(name, kind=SpanKind.INTERNAL, attributes=attributes)
        self._runs[info.run_id] = _Run(span=span, model=info.model, common=common)

    async def run_finished(self, run_id: str, result: RunResult) -> None:
        """End the run span with the run's totals."""
        run = self._runs.pop(run_id, None)
        if run is None:
            return
        self._close(run, "cancelled", "the run ended before this step reported its outcome")
        span = run.span
        if result.usage.input_tokens is not None:
            span.set_attribute("gen_ai.usage.input_tokens", result.usage.input_tokens)
        if result.usage.output_tokens is not None:
            span.set_attribute("gen_ai.usage.output_tokens", result.usage.output_tokens)
        if result.cost is not None:
            span.set_attribute(COST_ATTRIBUTE, float(result.cost.total))
        span.set_attribute("toolwire.run.outcome", result.outcome)
        span.set_attribute("toolwire.run.turns", result.turns)
        span.set_attribute("toolwire.run.tool_calls", len(result.tool_calls))
        span.end()

    async def run_failed(self, run_id: str, error: BaseException) -> None:
        """End the run span, and whatever it still had open, as failed."""
        run = self._runs.pop(run_id, None)
        if run is None:
            return
        error_type = _error_type(error)
        self._close(run, "cancelled", f"the run failed: {error_type}")
        if error_type != "cancelled":
            run.span.record_exception(error)
        _mark_error(run.span, error_type, _describe(error))
        if isinstance(error, ProviderError) and error.status_code is not None:
            run.span.set_attribute("http.response.status_code", error.status_code)
        run.span.end()

    def _close(self, run: _Run, error_type: str, description: str) -> None:
        """End every span of ``run`` still open (children first)."""
        for entry in run.tools.values():
            _mark_error(entry.span, error_type, description)
            entry.span.end()
        run.tools.clear()
        for span in run.chats.values():
            _mark_error(span, error_type, description)
            span.end()
        run.chats.clear()

    # -- model requests ----------------------------------------------------------------

    async def model_request(
        self, run_id: str, turn: int, attempt: int, messages: Sequence[Message]
    ) -> None:
        """Start a model span (one per attempt of a turn)."""
        run = self._runs.get(run_id)
        if run is None:
            return
        attributes: dict[str, AttributeValue] = {"gen_ai.operation.name": "chat", **run.common}
        attributes["toolwire.turn"] = turn
        attributes["toolwire.attempt"] = attempt
        if self.capture_content:
            system, chat = _input_messages(messages)
            if system:
                attributes["gen_ai.system_instructions"] = jsonio.dumps(system)
            attributes["gen_ai.input.messages"] = jsonio.dumps(chat)
        span = self._tracer.start_span(
            f"chat {run.model}", context=run.context(), kind=SpanKind.CLIENT, attributes=attributes
        )
        stale = run.chats.pop((turn, attempt), None)
        if stale is not None:  # the same attempt reported twice: keep the newest
            _mark_error(stale, "cancelled", "the request was sent again")
            stale.end()
        run.chats[(turn, attempt)] = span
        run.attempts[turn] = attempt

    async def model_response(
        self, run_id: str, turn: int, attempt: int, result: StreamResult, elapsed: float
    ) -> None:
        """End the model span with the response's id, model, finish reasons, usage."""
        run = self._runs.get(run_id)
        span = run.chats.pop((turn, attempt), None) if run is not None else None
        if span is None:
            return
        if result.model:
            span.set_attribute("gen_ai.response.model", result.model)
        if result.response_id:
            span.set_attribute("gen_ai.response.id", result.response_id)
        reasons = [c.finish_reason for c in result.choices if c.finish_reason is not None]
        if reasons:
            span.set_attribute("gen_ai.response.finish_reasons", reasons)
        if result.usage is not None:
            _set_usage(span, result.usage)
        if self.capture_content:
            span.set_attribute("gen_ai.output.messages", jsonio.dumps(_output_messages(result)))
        span.end()

    async def model_usage(
        self, run_id: str, turn: int, attempt: int, usage: Usage | None, cost: Cost | None
    ) -> None:
        """Put the request's cost on its model span (the semantic conventions
        name none: ``toolwire.cost.usd``); a request a usage limit cut gets
        the usage its stream had revealed too."""
        run = self._runs.get(run_id)
        span = run.chats.get((turn, attempt)) if run is not None else None
        if span is None:
            return
        if cost is not None:
            span.set_attribute(COST_ATTRIBUTE, float(cost.total))
        if usage is not None:
            if usage.input_tokens is not None:
                span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
            if usage.output_tokens is not None:
                span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)

    async def model_failed(
        self, run_id: str, turn: int, attempt: int, error: ToolwireError, elapsed: float
    ) -> None:
        """End the model span as failed; tools its stream had started eagerly
        were cancelled with it, so their spans end too."""
        run = self._runs.get(run_id)
        if run is None:
            return
        for key, entry in list(run.tools.items()):
            if key[0] == turn and entry.eager and entry.attempt == attempt:
                del run.tools[key]
                _mark_error(entry.span, "cancelled", "the stream that started it failed")
                entry.span.end()
        span = run.chats.pop((turn, attempt), None)
        if span is None:
            return
        span.record_exception(error)
        _mark_error(span, error.type_name, _describe(error))
        if isinstance(error, ProviderError) and error.status_code is not None:
            span.set_attribute("http.response.status_code", error.status_code)
        span.end()

    async def model_sampled(self, run_id: str, turn: int, call_id: str, sample: Sample) -> None:
        """A completion a running tool asked for (an MCP server's sampling): a
        model span under that tool's span, spanning the sample's ``elapsed``;
        a refused one is an error with the reason."""
        run = self._runs.get(run_id)
        if run is None:
            return
        entry = run.tools.get((turn, call_id))
        context = trace.set_span_in_context(entry.span) if entry is not None else run.context()
        attributes: dict[str, AttributeValue] = {"gen_ai.operation.name": "chat", **run.common}
        attributes["toolwire.turn"] = turn
        attributes["toolwire.sampling.source"] = sample.source
        attributes["gen_ai.tool.call.id"] = call_id
        end = time.time_ns()
        span = self._tracer.start_span(
            f"chat {run.model}",
            context=context,
            kind=SpanKind.CLIENT,
            attributes=attributes,
            start_time=end - round(sample.elapsed * 1e9),
        )
        if sample.error is not None:
            _mark_error(span, "_OTHER", sample.error)
        else:
            span.set_attribute("gen_ai.response.model", sample.model)
            if sample.finish_reason is not None:
                span.set_attribute("gen_ai.response.finish_reasons", [sample.finish_reason])
            if self.capture_content:
                answer = {
                    "role": "assistant",
                    "parts": [{"type": "text", "content": sample.text}],
                    "finish_reason": sample.finish_reason or "",
                }
                span.set_attribute("gen_ai.output.messages", jsonio.dumps([answer]))
        if sample.usage is not None:
            _set_usage(span, sample.usage)
        if sample.cost is not None:
            span.set_attribute(COST_ATTRIBUTE, float(sample.cost.total))
        span.end(end_time=end)

    # -- tools -------------------------------------------------------------------------

    async def tool_started(
        self,
        run_id: str,
        turn: int,
        call: ToolCall | InvalidToolCall,
        idempotency_key: str,
        *,
        eager: bool = False,
    ) -> None:
        """Start a tool span: under the run, or under the model span of its
        turn for a tool started while that model was still streaming."""
        run = self._runs.get(run_id)
        if run is None:
            return
        context = run.context()
        attempt: int | None = None
        if eager:
            attempt = run.attempts.get(turn)
            chat = run.chats.get((turn, attempt)) if attempt is not None else None
            if chat is not None:
                context = trace.set_span_in_context(chat)
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.type": "function",
            "toolwire.turn": turn,
            "toolwire.tool.eager": eager,
            "toolwire.tool.idempotency_key": idempotency_key,
            "toolwire.tool.arguments_repaired": isinstance(call, ToolCall) and call.repaired,
        }
        if self.capture_content:
            arguments = call.arguments if isinstance(call, ToolCall) else call.raw_arguments
            attributes["gen_ai.tool.call.arguments"] = (
                arguments if isinstance(arguments, str) else jsonio.dumps(arguments)
            )
        name = f"execute_tool {call.name}" if call.name else "execute_tool"
        span = self._tracer.start_span(
            name, context=context, kind=SpanKind.INTERNAL, attributes=attributes
        )
        stale = run.tools.pop((turn, call.id), None)
        if stale is not None:  # a model that reused a call id within one turn
            _mark_error(stale.span, "_OTHER", "another call of the turn had the same id")
            stale.span.end()
        run.tools[(turn, call.id)] = _ToolSpan(span=span, eager=eager, attempt=attempt)

    async def tool_finished(
        self,
        run_id: str,
        turn: int,
        call: ToolCall | InvalidToolCall,
        result: ToolResult,
        *,
        eager: bool = False,
    ) -> None:
        """End a tool span; a failed result is an error of its category."""
        run = self._runs.get(run_id)
        entry = run.tools.pop((turn, call.id), None) if run is not None else None
        if entry is None:
            return
        span = entry.span
        span.set_attribute("toolwire.tool.attempts", result.attempts)
        if result.deduplicated_from is not None:
            span.set_attribute("toolwire.tool.deduplicated_from", result.deduplicated_from)
        if result.ok:
            if self.capture_content:
                span.set_attribute("gen_ai.tool.call.result", result.content)
        else:
            kind = result.error or "_OTHER"
            # The category only: the message may quote the arguments, which
            # are content.
            description = result.message if self.capture_content else kind
            _mark_error(span, kind, description)
        span.end()


def _set_usage(span: Span, usage: Usage) -> None:
    """A model span's token counts, in the semantic conventions' names."""
    counts = {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cached_tokens,
        "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
        "gen_ai.usage.reasoning.output_tokens": usage.reasoning_tokens,
    }
    for name, count in counts.items():
        if count is not None:
            span.set_attribute(name, count)
