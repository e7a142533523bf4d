"""The OpenAI Chat Completions dialect, as OpenAI and every server that
copies it speak it: its :class:`WireDialect`.

Chunks and whole completions are read in
:mod:`~toolwire.stream.codecs.openai_chat_stream` (argument chunks by their
exact text in :mod:`~toolwire.stream.codecs.openai_chat_args`), requests
written in :mod:`~toolwire.stream.codecs.openai_chat_request`, answers for
the emulation server in :mod:`~toolwire.stream.codecs.emulation.openai_chat`.
"""

from __future__ import annotations

from typing import Final

from toolwire.stream.codecs import sdk, structured
from toolwire.stream.codecs._dialect import X_RATELIMIT, Capabilities, ProviderInfo, WireDialect
from toolwire.stream.codecs.emulation import openai_chat as emulation
from toolwire.stream.codecs.openai_chat_args import learn_openai_head, openai_args_event
from toolwire.stream.codecs.openai_chat_request import (
    DIALECT_NAME,
    call_arguments_text,
    custom_tool_schema,
    encode_messages,
    encode_request,
    tool_schema,
)
from toolwire.stream.codecs.openai_chat_stream import (
    ECHOED_FIELDS,
    RAW_FINISH_REASONS,
    OpenAIChatCodec,
    usage_from_openai,
)
from toolwire.stream.codecs.openai_schema import strict_schemas, to_openai_strict

__all__ = [
    "DIALECT",
    "ECHOED_FIELDS",
    "RAW_FINISH_REASONS",
    "OpenAIChatCodec",
    "call_arguments_text",
    "custom_tool_schema",
    "encode_messages",
    "encode_request",
    "learn_openai_head",
    "openai_args_event",
    "tool_schema",
    "usage_from_openai",
]


DIALECT: Final = WireDialect(
    name=DIALECT_NAME,
    codec=OpenAIChatCodec,
    capabilities=Capabilities(whole_responses=True, args_events=True),
    finish_reasons=RAW_FINISH_REASONS,
    usage=usage_from_openai,
    sniff_text=lambda text: text == "[DONE]",
    sniff_shape=lambda obj: (
        "choices" in obj or str(obj.get("object", "")).startswith("chat.completion")
    ),
    paths=("/chat/completions",),
    client_path="/chat/completions",
    routes=(
        "/v1/chat/completions",
        "/chat/completions",
        "/openai/v1/chat/completions",  # Azure OpenAI's v1 API
        "/openai/deployments/{deployment}/chat/completions",  # and its deployment URLs
    ),
    base_path="/v1",
    encode_request=encode_request,
    tool_schemas=strict_schemas(tool_schema, custom_tool_schema),
    strict_schema=to_openai_strict,
    otel_provider="openai",
    decode_request=emulation.decode_request,
    encoder=emulation.OpenAIChatEncoder,
    request_path=lambda model, stream: "/chat/completions",
    is_error_body=lambda body: (
        isinstance(body, dict) and "choices" not in body and body.get("error") is not None
    ),
    sdk_shape=sdk.OpenAIChatShape(),
    answer_fields=("stream", "stream_options"),
    volatile_fields=("metadata", "prompt_cache_key", "safety_identifier", "stream_options", "user"),
    structured_output=structured.CHAT,
    provider=ProviderInfo(
        names=(DIALECT_NAME, "openai"),
        class_name="OpenAIChat",
        demo_model="gpt-4.1-mini",
        structured_models=structured.OPENAI_MODELS,
        price_provider="openai",
        rate_limit_headers=X_RATELIMIT,
    ),
)
"""Chat Completions, as OpenAI and every compatible server speak it."""
