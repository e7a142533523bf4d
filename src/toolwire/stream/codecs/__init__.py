"""Wire dialects: the registry, and one module per dialect owning its format.

Each dialect's module reads and writes its whole format, sans-I/O, and
describes it in one :class:`WireDialect`, its ``DIALECT``:

* streamed chunks: a codec class with ``decode(event, data) -> list[Part]``,
  one framed payload in, provider-neutral parts out (``framings`` says how
  its stream is framed; ``quirks`` names the departures from the dialect's
  reference it noticed on the way, at no cost on the hot path), and, for the
  commonest payload, the exact text of an argument delta (``args_event``, its
  regular expression in the same module; see ``decoder.py``);
* whole (non-streamed) responses: ``decode_response(body)``, the parts the
  same response's stream would give, read by the same accumulator
  (:func:`toolwire.stream.decoder.decode_response`);
* its finish-reason and usage tables;
* how to tell it: the event names, texts and shapes only it sends
  (``sniff_*``) and its request paths;
* requests: ``encode_request(...)`` and its tool entries (``tool_schemas``,
  with the strict mode of ``openai_schema`` or the shaping of ``gemini_schema``),
  and the reverse, ``decode_request``, for the emulation server and the proxy;
* answers for the emulation server, streamed and whole (``encoder``);
* its OpenTelemetry provider flavour;
* what its codec does beyond ``decode`` (:class:`Capabilities`: whole
  responses, argument events, kept streams), declared, never probed for.

Nothing outside this package names a dialect's wire vocabulary (its event
names, members, paths): the stream decoder, the tool layer, the providers,
the proxy, ``toolwire inspect``, the emulation server and the OpenTelemetry
layer ask the registry (``tests/stream/test_registry.py`` checks it).
``providers/`` adds only HTTP: credentials, base URLs, headers, error bodies.

Adding a dialect
----------------
A dialect is its module and its registration, nothing else. Write
``codecs/<dialect>.py`` with its codec and a ``DIALECT =
WireDialect(name=..., codec=..., finish_reasons=..., ...)`` (a large dialect
keeps its codec in ``<dialect>_stream.py`` and its requests in
``<dialect>_request.py``, as ``anthropic`` and ``openai_chat`` do) and
register it (``register(<dialect>.DIALECT)``; a built-in one below, in the
order of :data:`toolwire.types.DIALECTS`, whose :data:`~toolwire.types.Dialect`
type names it for type checkers). :func:`register` refuses a dialect that
does not hold together (a declared capability its codec lacks, a field
without the ones it needs, a name, path or provider name of another
dialect's) with a :class:`~toolwire.errors.RegistrationError` naming the
piece. Sniffing, ``toolwire inspect`` and ``toolwire proxy`` then know it;
it takes part in request building and the emulation server as far as it
fills ``encode_request``, ``tool_schemas``, ``decode_request`` and
``encoder``; and ``toolwire demo``, ``url_for``, price data, traces and the
rate limiter know its provider by its ``provider`` (:class:`ProviderInfo`).
The docs' lists of dialects are made from the registry
(``tests/docs/test_dialect_lists.py``).
"""

from __future__ import annotations

from toolwire.errors import UsageError
from toolwire.stream.codecs import (
    anthropic,
    bedrock,
    bedrock_invoke,
    cohere,
    gemini,
    gemini_interactions,
    ollama,
    openai_chat,
    openai_responses,
)
from toolwire.stream.codecs._checks import check_dialect
from toolwire.stream.codecs._codec import (
    ArgsEventCodec,
    Codec,
    ContinuedCodec,
    EventStreamArgsCodec,
    WholeCodec,
)
from toolwire.stream.codecs._common import error_event
from toolwire.stream.codecs._dialect import (
    X_RATELIMIT,
    Capabilities,
    ModelTable,
    ProviderInfo,
    RateLimitHeaders,
    SchemaTool,
    StructuredOutput,
    WireDialect,
    as_args_event,
    as_continued,
    as_whole,
)
from toolwire.stream.codecs.anthropic import AnthropicCodec
from toolwire.stream.codecs.bedrock import BedrockConverseCodec
from toolwire.stream.codecs.bedrock_invoke import BedrockInvokeCodec
from toolwire.stream.codecs.cohere import CohereCodec
from toolwire.stream.codecs.gemini import GeminiCodec
from toolwire.stream.codecs.gemini_interactions import GeminiInteractionsCodec
from toolwire.stream.codecs.ollama import OllamaCodec
from toolwire.stream.codecs.openai_chat import OpenAIChatCodec
from toolwire.stream.codecs.openai_responses import OpenAIResponsesCodec
from toolwire.types import DIALECTS, PROVIDER_DIALECTS

__all__ = [
    "X_RATELIMIT",
    "AnthropicCodec",
    "ArgsEventCodec",
    "BedrockConverseCodec",
    "BedrockInvokeCodec",
    "Capabilities",
    "Codec",
    "CohereCodec",
    "ContinuedCodec",
    "EventStreamArgsCodec",
    "GeminiCodec",
    "GeminiInteractionsCodec",
    "ModelTable",
    "OllamaCodec",
    "OpenAIChatCodec",
    "OpenAIResponsesCodec",
    "ProviderInfo",
    "RateLimitHeaders",
    "SchemaTool",
    "StructuredOutput",
    "WholeCodec",
    "WireDialect",
    "as_args_event",
    "as_continued",
    "as_whole",
    "codec_for",
    "dialect_for_path",
    "error_event",
    "model_has_structured_output",
    "register",
    "registered",
    "structured_output",
    "unregister",
    "wire_dialect",
]


_REGISTRY: dict[str, WireDialect] = {}


def register(dialect: WireDialect) -> WireDialect:
    """Add a dialect to the registry (once per name); returns it.

    The dialect is checked first (see :mod:`._checks`): its codec has what
    its :class:`Capabilities` declare and declares what it has, the fields
    that hold only together are given together, and its name, paths and
    routes are no other dialect's.

    Raises:
        RegistrationError: the dialect does not hold together, or clashes
            with a registered one; the message names each piece at fault.
    """
    check_dialect(dialect, _REGISTRY)
    _REGISTRY[dialect.name] = dialect
    return dialect


register(openai_chat.DIALECT)
register(openai_responses.DIALECT)
register(anthropic.DIALECT)
register(gemini.DIALECT)
register(ollama.DIALECT)
register(cohere.DIALECT)
register(bedrock.DIALECT)
register(bedrock_invoke.DIALECT)
register(gemini_interactions.DIALECT)

assert tuple(_REGISTRY) == DIALECTS, "one registered dialect per name of DIALECTS, in order"
assert tuple(d.name for d in _REGISTRY.values() if d.provider) == PROVIDER_DIALECTS, (
    "a provider for each name of PROVIDER_DIALECTS, and for no other dialect"
)


def unregister(name: str) -> WireDialect:
    """Take the dialect called ``name`` out of the registry (a test's or a
    plugin's own dialect); returns it. What was built from the registry
    before (a server's routes, a CLI's choices) keeps it.

    Raises:
        UsageError: no dialect of that name, or a built-in one.
    """
    if name in DIALECTS:
        raise UsageError(f"{name!r} is a built-in dialect: it stays registered")
    dialect = wire_dialect(name)
    del _REGISTRY[name]
    return dialect


def structured_output(dialect: str) -> StructuredOutput | None:
    """The native structured output of the registered dialect ``dialect``
    (``None``: it has none, or no dialect has that name)."""
    found = _REGISTRY.get(dialect)
    return found.structured_output if found is not None else None


def model_has_structured_output(dialect: str, model: str) -> bool:
    """Whether a request to ``model`` over ``dialect`` can ask for native
    structured output: the dialect has it, and its provider's
    :attr:`ProviderInfo.structured_models` counts the model in."""
    found = _REGISTRY.get(dialect)
    if found is None or found.structured_output is None:
        return False
    table = found.provider.structured_models if found.provider is not None else None
    return table is None or table(model)


def registered() -> tuple[WireDialect, ...]:
    """Every registered dialect: the built-in ones in the order of
    :data:`toolwire.types.DIALECTS`, then any registered since, in order."""
    return tuple(_REGISTRY.values())


def wire_dialect(name: str) -> WireDialect:
    """The registered dialect called ``name``.

    Raises:
        UsageError: no dialect of that name.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UsageError(
            f"unknown dialect {name!r}; expected one of: {', '.join(_REGISTRY)} or auto"
        ) from None


def dialect_for_path(path: str) -> WireDialect | None:
    """The dialect whose requests go to ``path``, or ``None`` for other endpoints."""
    for dialect in _REGISTRY.values():
        if dialect.path_matches(path):
            return dialect
    return None


def codec_for(dialect: str) -> Codec:
    """A fresh codec for ``dialect`` (one per stream: codecs keep state)."""
    return wire_dialect(dialect).codec()
