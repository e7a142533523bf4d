"""Amazon Bedrock's InvokeModel API for Anthropic models
(``InvokeModelWithResponseStream`` / ``InvokeModel``).

The request and the response are Anthropic's Messages format, with the
model in the URL and ``anthropic_version: "bedrock-2023-05-31"`` in the body
instead of a header. The stream is AWS event-stream framed: each ``chunk``
event's JSON payload holds ``bytes``, one Anthropic Messages event encoded
in base64 (the last, ``message_stop``, adds Bedrock's
``amazon-bedrock-invocationMetrics``). Those events are read by the
Anthropic codec itself: this module only unwraps them.
Reference: https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages.html
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, Final

from toolwire.errors import RemoteProtocolError
from toolwire.messages import Message
from toolwire.stream.codecs import anthropic
from toolwire.stream.codecs._common import as_str, load_payload
from toolwire.stream.codecs._dialect import Capabilities, ProviderInfo, WireDialect
from toolwire.stream.codecs.bedrock import model_path, model_target
from toolwire.stream.codecs.emulation import bedrock as emulation
from toolwire.stream.codecs.request import ToolChoice
from toolwire.stream.framing import FramingKind
from toolwire.stream.parts import Part

__all__ = ["ANTHROPIC_VERSION", "DIALECT", "BedrockInvokeCodec", "encode_request"]

DIALECT_NAME = "bedrock-invoke"
ANTHROPIC_VERSION: Final = "bedrock-2023-05-31"
"""The ``anthropic_version`` Bedrock wants in the body of Claude requests."""


class BedrockInvokeCodec:
    """Decodes InvokeModelWithResponseStream ``chunk`` events with the
    Anthropic codec."""

    dialect = DIALECT_NAME
    framings: frozenset[FramingKind] = frozenset({"eventstream"})

    def __init__(self) -> None:
        self._inner = anthropic.AnthropicCodec()
        self.quirks: set[str] = self._inner.quirks

    def decode(self, event: str, data: str) -> list[Part]:
        if event != "chunk":
            return []  # no other event is documented; nothing to read in one
        obj = load_payload(data, DIALECT_NAME)
        encoded = as_str(obj.get("bytes"), f"{DIALECT_NAME}: chunk bytes")
        if encoded is None:
            raise RemoteProtocolError(f"{DIALECT_NAME}: a chunk event has no 'bytes'", raw=data)
        try:
            inner = base64.b64decode(encoded, validate=True).decode("utf-8")
        except (binascii.Error, ValueError) as exc:
            raise RemoteProtocolError(
                f"{DIALECT_NAME}: a chunk's bytes are not base64 UTF-8 ({exc})", raw=data
            ) from None
        # The inner event names itself in its "type"; "message" stands for
        # the SSE event name it does not have.
        return self._inner.decode("message", inner)

    def decode_response(self, body: dict[str, Any]) -> list[Part]:
        """A whole ``InvokeModel`` response: an Anthropic ``message`` object."""
        return self._inner.decode_response(body)


def encode_request(
    *,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] = (),
    tool_choice: ToolChoice | None = None,
    max_tokens: int | None = None,
    temperature: float | None = None,
    default_max_tokens: int = 4096,
    thinking: Mapping[str, Any] | None = None,
    anthropic_version: str = ANTHROPIC_VERSION,
) -> dict[str, Any]:
    """The JSON body of an ``InvokeModel`` request for Claude: Anthropic's,
    without ``model`` and ``stream`` (the URL says both), with
    ``anthropic_version``. Tools are in Anthropic's shape."""
    return anthropic.encode_platform_request(
        anthropic_version=anthropic_version,
        messages=messages,
        tools=tools,
        tool_choice=tool_choice,
        stream=False,
        max_tokens=max_tokens,
        temperature=temperature,
        default_max_tokens=default_max_tokens,
        thinking=thinking,
    )


_STREAM_METHOD: Final = "invoke-with-response-stream"
_WHOLE_METHOD: Final = "invoke"

DIALECT: Final = WireDialect(
    name=DIALECT_NAME,
    codec=BedrockInvokeCodec,
    capabilities=Capabilities(whole_responses=True),
    finish_reasons=anthropic.RAW_FINISH_REASONS,
    usage=anthropic.usage_from_anthropic,
    sniff_name=lambda name: name == "chunk",
    paths=("/" + _STREAM_METHOD, "/" + _WHOLE_METHOD),
    stream_paths=("/" + _STREAM_METHOD,),
    routes=(f"/model/{{model}}/{_STREAM_METHOD}", f"/model/{{model}}/{_WHOLE_METHOD}"),
    route_target=lambda path, query: model_target(path, _STREAM_METHOD, _WHOLE_METHOD),
    request_path=lambda model, stream: model_path(
        model, _STREAM_METHOD if stream else _WHOLE_METHOD
    ),
    request_id_header="x-amzn-requestid",
    answer_fields=(),
    encode_request=encode_request,
    tool_schemas=anthropic.DIALECT.tool_schemas,
    decode_request=emulation.decode_invoke_request,
    encoder=emulation.BedrockInvokeEncoder,
    otel_provider="aws.bedrock",
    provider=ProviderInfo(
        names=("bedrock-invoke",),
        class_name="BedrockInvoke",
        demo_model="us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        price_provider="aws",
    ),
)
"""Amazon Bedrock's InvokeModel API for Claude: Anthropic's Messages in AWS's
event stream."""
