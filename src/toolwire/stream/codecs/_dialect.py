"""``WireDialect``: everything toolwire knows about one wire format, in one object.

Each dialect's module (``codecs/<dialect>.py``) builds one ``WireDialect`` and
the package registers it (:func:`toolwire.stream.codecs.register`). Whoever
needs to know a format asks the registry and never names the format's words
itself: the stream decoder sniffs with it, the tool layer shapes tool
schemas with it, the providers encode requests with it, the proxy and
``toolwire inspect`` tell a request's dialect by its path with it, the
emulation server reads requests and writes answers with it, and
OpenTelemetry names the provider with it. What the layers above keep per
dialect (the provider that speaks it, the demo's model, the price data's and
OpenTelemetry's names for it, the headers its service announces its rate
limits in) is plain data here too (:class:`ProviderInfo`,
:class:`RateLimitHeaders`): they read it, the registry imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, cast

from toolwire.stream.codecs._codec import (
    ArgsEventCodec,
    Codec,
    ContinuedCodec,
    WholeCodec,
)
from toolwire.stream.framing import FramingKind
from toolwire.stream.jsonschema import JSONSchema
from toolwire.types import FinishReason, Usage

if TYPE_CHECKING:
    from toolwire.stream.codecs.emulation import Encoder, ParsedRequest
    from toolwire.stream.codecs.sdk import Shape
    from toolwire.stream.codecs.websocket import SocketMode

__all__ = [
    "X_RATELIMIT",
    "Capabilities",
    "ProviderInfo",
    "RateLimitHeaders",
    "RouteTarget",
    "SchemaTool",
    "WireDialect",
    "as_args_event",
    "as_continued",
    "as_whole",
    "plain_schemas",
]


class SchemaTool(Protocol):
    """What tool-schema shaping reads of a tool (a :class:`toolwire.Tool`)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> JSONSchema: ...

    @property
    def strict(self) -> bool | None: ...

    @property
    def freeform(self) -> Mapping[str, str] | None:
        """``None`` for a function tool; a custom (freeform) tool's grammar,
        ``{}`` for free text."""

    @property
    def anthropic_eager_input_streaming(self) -> bool | None:
        """Anthropic's per-tool ``eager_input_streaming`` (``None``: not sent)."""

    @property
    def anthropic_toolset(self) -> str | None:
        """The Anthropic toolset the tool handles (``computer_toolset_20260801``),
        declared as ``{"type": ...}`` instead of a function; ``None`` for none."""

    @property
    def asynchronous(self) -> bool:
        """Declared asynchronous where the dialect has it (Responses ``async``)."""


def _never(_: Any) -> bool:
    return False


RouteTarget = tuple[str | None, bool | None, bool]
"""``(model, stream, sse)`` a request's URL tells: its model and whether it
streams where the URL says so (``None``: the body says), and whether it asked
for SSE where the dialect streams in another framing too."""


def _body_says(path: str, query: Mapping[str, str]) -> RouteTarget | None:
    return None, None, True


def plain_schemas(
    entry: Callable[[str, str, JSONSchema], dict[str, Any]],
) -> Callable[[Sequence[SchemaTool], bool | None], list[dict[str, Any]]]:
    """Tool schemas of a dialect that has no strict mode: one entry per tool."""

    def shape(tools: Sequence[SchemaTool], strict: bool | None) -> list[dict[str, Any]]:
        return [entry(t.name, t.description, t.parameters) for t in tools]

    return shape


@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    """What a dialect's codec does beyond :meth:`~toolwire.stream.codecs.Codec.decode`.

    Declared here, not found on the codec: the decoder reads these flags and
    never probes a codec for a method, and
    :func:`~toolwire.stream.codecs.register` checks each flag against the
    codec (both ways: a capability declared but missing, or present but not
    declared, is a :class:`~toolwire.errors.RegistrationError`).
    """

    whole_responses: bool = False
    """Its codec reads whole (non-streamed) responses: it is a
    :class:`~toolwire.stream.codecs.WholeCodec` (``decode_response``)."""
    args_events: bool = False
    """Its codec reads argument deltas by their exact text, the decoder's
    short path: an :class:`~toolwire.stream.codecs.ArgsEventCodec`, and in
    AWS event streams an :class:`~toolwire.stream.codecs.EventStreamArgsCodec`.
    Its codec streams in one framing, SSE or AWS event streams."""
    kept_streams: bool = False
    """Its provider keeps its streams and streams one again after an event:
    its codec is a :class:`~toolwire.stream.codecs.ContinuedCodec` (a
    ``cursor`` and ``continue_after``) and the dialect has a
    ``continuation_path``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLimitHeaders:
    """The response headers a service announces its rate limits in.

    Each name holds ``{resource}``, which is ``requests`` or ``tokens``. The
    HTTP layer's rate limiter learns from the headers of every registered
    dialect's service; the emulation server sends its dialect's.
    """

    limit: str
    """The limit per minute (``x-ratelimit-limit-{resource}``)."""
    remaining: str
    """What is left of it (``x-ratelimit-remaining-{resource}``)."""
    reset: str
    """When it is whole again (``x-ratelimit-reset-{resource}``)."""
    reset_format: Literal["duration", "time"] = "duration"
    """How ``reset`` says it: a duration from now (``6m0s``, ``1.5s``,
    ``20ms``) or an RFC 3339 time."""

    def names(self, resource: str) -> tuple[str, str, str]:
        """``(limit, remaining, reset)`` header names of ``resource``."""
        return (
            self.limit.format(resource=resource),
            self.remaining.format(resource=resource),
            self.reset.format(resource=resource),
        )


X_RATELIMIT: Final = RateLimitHeaders(
    limit="x-ratelimit-limit-{resource}",
    remaining="x-ratelimit-remaining-{resource}",
    reset="x-ratelimit-reset-{resource}",
)
"""OpenAI's rate-limit headers, which many OpenAI-compatible servers send too."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StructuredOutput:
    """One dialect's native structured output."""

    body: Callable[[str, JSONSchema], dict[str, Any]]
    """The body members that ask for an answer held to ``schema``, named
    ``name`` (merged into the request one level deep, as ``extra`` is).
    Raises ``ValueError`` for a schema the dialect cannot express."""
    asked: Callable[[dict[str, Any]], bool]
    """True for a request body that asks for structured output (the emulation server)."""


@dataclass(frozen=True, slots=True)
class ModelTable:
    """A yes or no per model id: the value of the longest prefix of the id
    the table names, else ``default``. An id may carry one of ``strip``
    first (Bedrock's inference profiles, ``us.``), read past."""

    default: bool
    prefixes: Mapping[str, bool] = field(default_factory=dict[str, bool])
    strip: tuple[str, ...] = ()

    def __call__(self, model: str) -> bool:
        for prefix in self.strip:
            if model.startswith(prefix):
                model = model[len(prefix) :]
                break
        longest, answer = -1, self.default
        for prefix, value in self.prefixes.items():
            if len(prefix) > longest and model.startswith(prefix):
                longest, answer = len(prefix), value
        return answer


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderInfo:
    """The toolwire provider that speaks a dialect, by plain names: the
    registry imports no provider, the layers above read these."""

    names: tuple[str, ...]
    """The names the provider goes by, its ``--provider`` name first
    (``toolwire demo``, ``toolwire chat``), then its default ``name`` where
    that differs (``openai``): the emulation server's ``url_for`` takes them
    beside the dialect's name, and price data and traces know it by them."""
    class_name: str
    """Its class in :mod:`toolwire.providers` (``OpenAIChat``)."""
    demo_model: str
    """The model ``toolwire demo --provider`` asks the emulated server for."""
    price_provider: str
    """Its provider id in ``genai-prices``' data (``openai``, ``google``)."""
    rate_limit_headers: RateLimitHeaders | None = None
    """The headers its service announces its rate limits in (``None``: none)."""
    structured_models: ModelTable | None = None
    """Which of its service's models have the dialect's native structured
    output (:attr:`WireDialect.structured_output`); ``None``: all of them.
    A typed run with ``output_mode="auto"`` asks the others by the tool."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WireDialect:
    """One wire dialect: its name, its codec and the rest of its format.

    Only ``name``, ``codec`` and the sniffing/path fields are needed to decode
    a stream; a dialect that toolwire also writes (requests, tool schemas)
    or serves (the emulation server) fills the rest.
    """

    name: str
    """The dialect's name, one of :data:`toolwire.types.DIALECTS`."""
    codec: type[Codec]
    """Reads its streamed payloads (a fresh instance per stream: codecs keep
    state) and, where ``capabilities`` says so, its whole responses."""
    finish_reasons: Mapping[str, FinishReason]
    """Its finish-reason words in toolwire's vocabulary."""
    usage: Callable[[dict[str, Any]], Usage] | None = None
    """Its usage object as a :class:`~toolwire.types.Usage`."""
    capabilities: Capabilities = Capabilities()
    """What its codec does beyond ``decode`` (checked when it is registered)."""

    # -- telling a stream's dialect (``dialect="auto"``) ---------------------------
    sniff_name: Callable[[str], bool] = _never
    """True for an SSE event name, or a payload's ``type`` member, that only
    this dialect sends."""
    sniff_text: Callable[[str], bool] = _never
    """True for a payload's (stripped) text that only this dialect sends."""
    sniff_shape: Callable[[dict[str, Any]], bool] = _never
    """True for a JSON object payload only this dialect's stream holds; asked
    after every dialect's ``sniff_name``, in registry order."""
    whole_framing: FramingKind | None = None
    """A framing only this dialect streams in (Gemini's JSON array), which
    tells the dialect by itself."""

    # -- requests: paths --------------------------------------------------------------
    paths: tuple[str, ...] = ()
    """The endings of its request paths (``toolwire proxy``, ``inspect``)."""
    stream_paths: tuple[str, ...] = ()
    """The endings of request paths whose answer is always a stream."""
    routes: tuple[str, ...] = ()
    """The emulation server's routes for it (Starlette path syntax)."""
    route_target: Callable[[str, Mapping[str, str]], RouteTarget | None] = _body_says
    """What a request's path and query say (``None``: no such method)."""
    base_path: str = ""
    """What an SDK's base URL adds to the server's root (``/v1``)."""
    client_path: str = ""
    """What a client adds to its base URL to call the model (``/v1/messages``);
    empty where the path holds the model (Gemini's)."""
    request_id_header: str = "x-request-id"
    """The response header that carries the request id."""
    continuation_routes: tuple[str, ...] = ()
    """The emulation server's routes that stream a cut answer again from an
    event (Starlette path syntax; GET)."""
    continuation_target: (
        Callable[[str, Mapping[str, str]], tuple[str, str | None] | None] | None
    ) = None
    """What such a GET's path and query say: ``(stream id, last event id)``
    (``None``: not a continuation); without ``stream=true`` the server
    answers the whole kept answer."""
    continuation_path: Callable[[str, str | None], str] | None = None
    """The path (after a provider's base URL) of the GET that streams a kept
    answer again after an event, given ``(stream id, last event id)`` (a
    decoder's ``cursor``; no event id: from the first event);
    ``None`` where the dialect cannot. One mechanism reads it for every
    dialect: :class:`toolwire.providers.ProviderStream`."""

    request_path: Callable[[str, bool], str] | None = None
    """The path a provider's base URL is followed by for a model call, given
    the model and whether it streams."""
    is_error_body: Callable[[Any], bool] = _never
    """True for a whole response body that is an error object (HTTP 200)."""

    # -- requests: bodies -----------------------------------------------------------
    answer_fields: tuple[str, ...] = ("stream",)
    """Request members that say how to answer, not what (the emulation server
    leaves them out of its made-up input token count)."""
    volatile_fields: tuple[str, ...] = ()
    """Request members that change between runs of the same code (user and
    request ids, cache keys, usage options): cassettes match without them."""
    encode_request: Callable[..., dict[str, Any]] | None = None
    """Builds a request body (keyword arguments: ``model``, ``messages``,
    ``tools``, ``tool_choice``, ``stream``... see the module's own)."""
    tool_schemas: Callable[[Sequence[SchemaTool], bool | None], list[dict[str, Any]]] | None = None
    """The value of a request's tools member for tools, given the caller's
    ``strict`` wish (``None``: where the dialect and the tool allow it)."""
    strict_schema: Callable[[JSONSchema], JSONSchema] | None = None
    """The dialect's strict form of a parameters schema, for dialects with a
    strict mode; raises ``ValueError`` for a schema it cannot express."""
    decode_request: Callable[[dict[str, Any], str | None, bool | None], ParsedRequest] | None = None
    """Reads a request body for the emulation server (``model`` and
    ``stream`` when the URL carries them)."""

    # -- answers, for the emulation server ----------------------------------------------
    encoder: type[Encoder] | None = None
    """Writes scripted answers, streamed and whole (given whether the request
    asked for SSE where the dialect has another framing)."""

    # -- the official SDK's stream objects (``toolwire.adapters``) ------------------------
    sdk_shape: Shape | None = None
    """Turns the SDK's stream objects back into payloads for the codec."""

    # -- observability ----------------------------------------------------------------
    silent_output: Callable[[str], str | None] | None = None
    """What the model wrote in a payload that gives no event (``toolwire
    inspect`` shows it): Anthropic's server-tool blocks, held until they end."""
    otel_provider: str | None = None
    """Its ``gen_ai.provider.name`` flavour, for providers of other names."""

    # -- typed output -------------------------------------------------------------------
    structured_output: StructuredOutput | None = None
    """How a request asks for an answer held to a JSON Schema (``None``: the
    dialect has no native structured output; typed runs use the tool)."""

    # -- the layers above: its provider -------------------------------------------------
    provider: ProviderInfo | None = None
    """The toolwire provider that speaks it, where one does (``None``: a
    dialect toolwire reads only)."""

    socket: SocketMode | None = None
    """Its WebSocket mode, where it has one (OpenAI Responses)."""

    def path_matches(self, path: str) -> bool:
        """True when a request path is one of this dialect's."""
        return bool(self.paths) and path.rstrip("/").endswith(self.paths)


def as_whole(dialect: WireDialect, codec: Codec) -> WholeCodec | None:
    """``codec`` (of ``dialect``) as a :class:`WholeCodec`, if its dialect
    declares whole responses."""
    return cast(WholeCodec, codec) if dialect.capabilities.whole_responses else None


def as_args_event(dialect: WireDialect, codec: Codec) -> ArgsEventCodec | None:
    """``codec`` (of ``dialect``) as an :class:`ArgsEventCodec` (an
    :class:`EventStreamArgsCodec` where it streams in AWS event streams), if
    its dialect declares argument events."""
    return cast(ArgsEventCodec, codec) if dialect.capabilities.args_events else None


def as_continued(dialect: WireDialect, codec: Codec) -> ContinuedCodec | None:
    """``codec`` (of ``dialect``) as a :class:`ContinuedCodec`, if its
    dialect declares kept streams."""
    return cast(ContinuedCodec, codec) if dialect.capabilities.kept_streams else None
