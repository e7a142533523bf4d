"""The names the traces use: the conventions' version and ``gen_ai.provider.name``."""

from __future__ import annotations

from urllib.parse import urlsplit

from toolwire.http.urls import split_url
from toolwire.stream.codecs import registered

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
# ... the names people give providers for them (beside the names of each
# dialect's provider: its registration's) ...
_ALIASES = {
    "azure": "azure.ai.openai",
    "azure-openai": "azure.ai.openai",
    "google": "gcp.gemini",
    "vertex": "gcp.vertex_ai",
    "vertex-ai": "gcp.vertex_ai",
    "mistral": "mistral_ai",
    "xai": "x_ai",
    "anthropic-vertex": "gcp.vertex_ai",
    "gemini-vertex": "gcp.vertex_ai",
}


def provider_name(name: str, dialect: str, base_url: str | None = None) -> str:
    """The ``gen_ai.provider.name`` for a toolwire provider.

    A provider named after a well-known value (``deepseek``, ``groq``...)
    keeps it; the conventions' own hosts are recognised (Vertex AI, Azure
    OpenAI); any other name gets the flavour of its wire dialect
    (``openai`` for OpenAI-compatible servers), and ``server.address`` tells
    which server it really was. A name of a dialect's provider
    (``gemini``, ``bedrock``: its registration's ``provider.names``) gets
    that dialect's flavour, whichever dialect it speaks.

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
    known = {d.name: d for d in registered()}
    for other in known.values():
        if other.provider is not None and lowered in other.provider.names and other.otel_provider:
            return other.otel_provider
    # ... and the telemetry flavour of its wire dialect, for any other name.
    flavour = known[dialect].otel_provider if dialect in known else None
    return flavour or lowered or "_OTHER"


def _host_port(base_url: str) -> tuple[str | None, int | None]:
    address = split_url(base_url)
    if address.hidden:  # text that may be a credential's, not a host
        return None, None
    try:
        parts = urlsplit(f"{address.scheme}://{address.host}")
        port = parts.port
    except ValueError:  # a malformed URL: no address rather than an error in a trace hook
        return None, None
    if parts.hostname is None:
        return None, None
    if port is None:
        port = {"https": 443, "http": 80}.get(parts.scheme)
    return parts.hostname, port
