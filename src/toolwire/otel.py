"""OpenTelemetry traces of agent runs (the optional extra ``toolwire[otel]``).

Theory of operation
-------------------
:class:`Tracer` is a :class:`~toolwire.observe.RunObserver`: the agent awaits
its hooks at every step boundary, and each hook starts or ends a span at
that moment, so span times are the times of the steps themselves::

    invoke_agent {agent}            run_started .. run_finished / run_failed
      chat {model}                  model_request .. model_response / model_failed
        execute_tool {tool}         an eager tool, started while its turn streams
      chat {model}                  a retried turn: one span per attempt
      execute_tool {tool}           tool_started .. tool_finished

The hooks of one run are called from several tasks (eager and parallel tools
run concurrently), so nothing here relies on the *current* span of a
context: every span is kept in a table keyed by ``(run_id, turn, attempt)``
(model requests) or ``(run_id, turn, call id)`` (tools), and every child is
started with an explicit parent context built from its parent span object.
The run span alone takes the caller's current context as its parent, so a
run started inside an application span shows up under it.

Steps of a run the tracer did not see start are not recorded. A step whose
outcome never arrives still gets an end: tools that a failed
stream cancelled are ended when that attempt's failure is reported, and
whatever is still open when the run ends is ended with the run, as
``cancelled``.

Names and attributes follow the OpenTelemetry semantic conventions for
generative AI (status: Development) as published with semantic-conventions
v1.41.0: the inference span (``gen-ai-spans.md``), the invoke-agent internal
span (``gen-ai-agent-spans.md``) and the execute-tool span. Arguments,
results and messages are sensitive, and are recorded only with
``capture_content=True`` (the conventions' opt-in attributes, as JSON text
since span attributes cannot hold structured values).

``error.type`` values: a toolwire error's ``type_name`` (``rate_limited``,
``overloaded``, ``provider_error``, ``stream_truncated``, ``connect_error``...),
a failed tool result's category (``invalid_arguments``, ``unknown_tool``,
``timeout``, ``failed``, ``denied``), ``cancelled`` for work cut short by
cancellation or by a failed stream, and the exception's qualified class name
for anything else. Attributes in the ``toolwire.`` namespace add what the
conventions have no name for (turn, attempt, run id, eager, attempts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from toolwire import __version__, _json
from toolwire.errors import ProviderError, ToolwireError, UsageError
from toolwire.messages import AssistantMessage, SystemMessage, ToolResultMessage, UserMessage
from toolwire.observe import RunObserver
from toolwire.run import RunInfo, RunResult
from toolwire.types import InvalidToolCall, StreamResult, ToolCall

try:
    from opentelemetry import trace
    from opentelemetry.trace import Span, SpanKind, Status, StatusCode
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise UsageError(
        "toolwire.otel needs OpenTelemetry, an optional extra: pip install 'toolwire[otel]'"
    ) from exc

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import TracerProvider
    from opentelemetry.util.types import AttributeValue

    from toolwire.messages import Message
    from toolwire.tools import ToolResult

__all__ = ["SEMCONV_VERSION", "Tracer", "provider_name"]

SEMCONV_VERSION = "1.41.0"
"""The version of the semantic conventions the spans follow."""

_SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"

# The conventions' well-known gen_ai.provider.name values ...
_WELL_KNOWN = frozenset(
    {
        "anthropic",
        "aws.bedrock",
        "azure.ai.inference",
        "azure.ai.openai",
        "cohere",
        "deepseek",
        "gcp.gemini",
        "gcp.gen_ai",
        "gcp.vertex_ai",
        "groq",
        "ibm.watsonx.ai",
        "mistral_ai",
        "openai",
        "perplexity",
        "x_ai",
    }
)
# ... the names people give providers for them ...
_ALIASES = {
    "openai-responses": "openai",
    "azure": "azure.ai.openai",
    "azure-openai": "azure.ai.openai",
    "gemini": "gcp.gemini",
    "google": "gcp.gemini",
    "vertex": "gcp.vertex_ai",
    "vertex-ai": "gcp.vertex_ai",
    "mistral": "mistral_ai",
    "xai": "x_ai",
    "bedrock": "aws.bedrock",
}
# ... and the telemetry flavour of each wire dialect, for any other name.
_BY_API = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic-messages": "anthropic",
    "gemini": "gcp.gemini",
    "cohere-v2": "cohere",
}


def provider_name(name: str, dialect: str, base_url: str | None = None) -> str:
    """The ``gen_ai.provider.name`` for a toolwire provider.

    A provider named after a well-known value (``deepseek``, ``groq``...)
    keeps it; the conventions' own hosts are recognised (Vertex AI, Azure
    OpenAI); any other name gets the flavour of its wire dialect
    (``openai`` for OpenAI-compatible servers), and ``server.address`` tells
    which server it really was.

    Args:
        name: the provider's ``name`` (``openai``, ``anthropic``, ``deepseek``...).
        dialect: its wire dialect (``openai-chat``, ``anthropic-messages``...).
        base_url: its base URL, if known.
    """
    lowered = name.lower()
    if lowered in _WELL_KNOWN:
        return lowered
    host = (_host_port(base_url)[0] or "") if base_url else ""
    if host.endswith("aiplatform.googleapis.com"):
        return "gcp.vertex_ai"
    if host.endswith(".openai.azure.com"):
        return "azure.ai.openai"
    if lowered in _ALIASES:
        return _ALIASES[lowered]
    return _BY_API.get(dialect, lowered or "_OTHER")


def _host_port(base_url: str) -> tuple[str | None, int | None]:
    try:
        parts = urlsplit(base_url)
        port = parts.port
    except ValueError:  # a malformed URL: no address rather than an error in a trace hook
        return None, None
    if parts.hostname is None:
        return None, None
    if port is None:
        port = {"https": 443, "http": 80}.get(parts.scheme)
    return parts.hostname, port


def _is_cancellation(error: BaseException) -> bool:
    try:
        return isinstance(error, anyio.get_cancelled_exc_class())
    except Exception:  # no async library running here: not a cancellation of ours
        return False


def _error_type(error: BaseException) -> str:
    if isinstance(error, ToolwireError):
        return error.type_name
    if _is_cancellation(error):
        return "cancelled"
    cls = type(error)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _mark_error(span: Span, error_type: str, description: str) -> None:
    span.set_attribute("error.type", error_type)
    span.set_status(Status(StatusCode.ERROR, description))


# -- content (opt-in) -------------------------------------------------------------------


def _call_part(call: ToolCall | InvalidToolCall) -> dict[str, Any]:
    arguments: Any = call.arguments if isinstance(call, ToolCall) else call.raw_arguments
    return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": arguments}


def _assistant_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if message.reasoning:
        parts.append({"type": "reasoning", "content": message.reasoning})
    if message.text:
        parts.append({"type": "text", "content": message.text})
    parts.extend(_call_part(call) for call in message.tool_calls)
    return parts


def _input_messages(messages: Sequence[Message]) -> tuple[list[Any], list[Any]]:
    """The conversation in the conventions' input-messages shape, and the
    system instructions apart (toolwire's providers send them apart)."""
    system: list[Any] = []
    chat: list[Any] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            system.append({"type": "text", "content": message.text})
        elif isinstance(message, UserMessage):
            chat.append({"role": "user", "parts": [{"type": "text", "content": message.text}]})
        elif isinstance(message, AssistantMessage):
            chat.append({"role": "assistant", "parts": _assistant_parts(message)})
        elif isinstance(message, ToolResultMessage):
            part = {
                "type": "tool_call_response",
                "id": message.call_id,
                "response": message.content,
            }
            chat.append({"role": "tool", "parts": [part]})
    return system, chat


def _output_messages(result: StreamResult) -> list[Any]:
    out: list[Any] = []
    for choice in result.choices:
        message = AssistantMessage.from_choice(choice)
        out.append(
            {
                "role": "assistant",
                "parts": _assistant_parts(message),
                "finish_reason": choice.finish_reason or "",
            }
        )
    return out


# -- the observer -----------------------------------------------------------------------


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
            "toolwire.api": info.dialect,
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
                attributes["gen_ai.system_instructions"] = _json.dumps(system)
            attributes["gen_ai.input.messages"] = _json.dumps(chat)
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
        usage = result.usage
        if usage is not None:
            if usage.input_tokens is not None:
                span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
            if usage.output_tokens is not None:
                span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
            if usage.cached_tokens is not None:
                span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cached_tokens)
        if self.capture_content:
            span.set_attribute("gen_ai.output.messages", _json.dumps(_output_messages(result)))
        span.end()

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
        }
        if self.capture_content:
            arguments = call.arguments if isinstance(call, ToolCall) else call.raw_arguments
            attributes["gen_ai.tool.call.arguments"] = (
                arguments if isinstance(arguments, str) else _json.dumps(arguments)
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


def _describe(error: BaseException) -> str:
    if isinstance(error, ToolwireError):
        return error.message
    return str(error) or type(error).__name__
