"""The Anthropic Messages dialect: its :class:`WireDialect`, and what the
clouds that serve Claude change (Vertex AI's paths, the platform body).

The stream and whole responses are read in
:mod:`~toolwire.stream.codecs.anthropic_stream`, requests written in
:mod:`~toolwire.stream.codecs.anthropic_request`, answers for the emulation
server in :mod:`~toolwire.stream.codecs.emulation.anthropic`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote

from toolwire.stream.codecs import sdk, structured
from toolwire.stream.codecs._dialect import (
    Capabilities,
    ProviderInfo,
    RateLimitHeaders,
    RouteTarget,
    WireDialect,
)
from toolwire.stream.codecs.anthropic_request import (
    DIALECT_NAME,
    _tool_schemas,
    encode_messages,
    encode_request,
    tool_schema,
)
from toolwire.stream.codecs.anthropic_stream import (
    RAW_FINISH_REASONS,
    AnthropicCodec,
    usage_from_anthropic,
)
from toolwire.stream.codecs.emulation import anthropic as emulation
from toolwire.stream.jsonio import loads_fast as _loads

__all__ = [
    "DIALECT",
    "RAW_FINISH_REASONS",
    "AnthropicCodec",
    "encode_messages",
    "encode_platform_request",
    "encode_request",
    "tool_schema",
    "usage_from_anthropic",
]

_EVENTS: Final = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    }
)
"""The stream's event types (its ``ping`` and ``error`` tell nothing: other
dialects send those words too)."""


VERTEX_VERSION: Final = "vertex-2023-10-16"
"""The ``anthropic_version`` Vertex AI wants in the body of Claude requests."""
_VERTEX_METHODS: Final = ("streamRawPredict", "rawPredict")


def encode_platform_request(*, anthropic_version: str, **options: Any) -> dict[str, Any]:
    """A Messages body as the clouds take it (Vertex AI, Bedrock): the model
    in the URL, not the body, and the API version in the body
    (``anthropic_version``), not a header. ``options`` as for
    :func:`encode_request`, ``model`` excepted."""
    body = encode_request(model="", **options)
    del body["model"]
    return {"anthropic_version": anthropic_version, **body}


def vertex_request_path(model: str, stream: bool) -> str:
    """Claude's path on Vertex AI after a publisher's URL (``.../publishers/anthropic``)."""
    method = _VERTEX_METHODS[0] if stream else _VERTEX_METHODS[1]
    return f"/models/{quote(model, safe='-._~@')}:{method}"


def _route_target(path: str, query: Mapping[str, str]) -> RouteTarget | None:
    """``/v1/messages`` (the body says the rest), or Vertex AI's
    ``.../models/{model}:{method}`` (the model in the URL)."""
    if path.rstrip("/").endswith("/messages"):
        return None, None, True
    model, _, method = path.rpartition("/models/")[2].rpartition(":")
    return (model, None, True) if model and method in _VERTEX_METHODS else None


def silent_output(data: str) -> str | None:
    """What the model wrote in a payload that makes no event: the name and the
    input of a server tool (run by the provider, never by toolwire), which the
    codec keeps whole until the block ends (``toolwire inspect`` shows it)."""
    try:
        payload = _loads(data)
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    block, delta = payload.get("content_block"), payload.get("delta")
    if isinstance(block, dict) and str(block.get("type", "")).endswith("tool_use"):
        return f"server tool call name {block.get('name')} ({block.get('type')})"
    if isinstance(delta, dict) and delta.get("type") == "input_json_delta":
        partial = delta.get("partial_json")
        if isinstance(partial, str) and partial:
            return f"server tool input += {_dumps_short(partial)}"
    return None


def _dumps_short(text: str, limit: int = 120) -> str:
    shown = json.dumps(text, ensure_ascii=False)
    return shown if len(shown) <= limit else shown[: limit - 4] + '..."'


DIALECT: Final = WireDialect(
    name=DIALECT_NAME,
    codec=AnthropicCodec,
    capabilities=Capabilities(whole_responses=True, args_events=True),
    finish_reasons=RAW_FINISH_REASONS,
    usage=usage_from_anthropic,
    sniff_name=_EVENTS.__contains__,
    paths=("/messages",),
    client_path="/v1/messages",
    routes=(
        "/v1/messages",
        "/v1/projects/{project}/locations/{region}/publishers/anthropic/models/{target}",
    ),
    route_target=_route_target,
    request_id_header="request-id",
    encode_request=encode_request,
    tool_schemas=_tool_schemas,
    otel_provider="anthropic",
    silent_output=silent_output,
    decode_request=emulation.decode_request,
    encoder=emulation.AnthropicEncoder,
    request_path=lambda model, stream: "/v1/messages",
    is_error_body=lambda body: isinstance(body, dict) and body.get("type") == "error",
    sdk_shape=sdk.AnthropicShape(),
    volatile_fields=("metadata",),
    structured_output=structured.ANTHROPIC,
    provider=ProviderInfo(
        names=("anthropic",),
        class_name="Anthropic",
        demo_model="claude-sonnet-4-5",
        structured_models=structured.ANTHROPIC_MODELS,
        price_provider="anthropic",
        rate_limit_headers=RateLimitHeaders(
            limit="anthropic-ratelimit-{resource}-limit",
            remaining="anthropic-ratelimit-{resource}-remaining",
            reset="anthropic-ratelimit-{resource}-reset",
            reset_format="time",
        ),
    ),
)
"""Anthropic's Messages API."""
