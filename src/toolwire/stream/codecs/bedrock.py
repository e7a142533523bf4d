"""Amazon Bedrock's Converse API (``ConverseStream`` / ``Converse``): its
:class:`WireDialect` and its paths.

The stream and whole responses are read in
:mod:`~toolwire.stream.codecs.bedrock_stream`, requests written in
:mod:`~toolwire.stream.codecs.bedrock_request`, answers for the emulation
server in :mod:`~toolwire.stream.codecs.emulation.bedrock`.
Reference: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
"""

from __future__ import annotations

from typing import Final
from urllib.parse import quote

from toolwire.stream.codecs import structured
from toolwire.stream.codecs._dialect import (
    Capabilities,
    ProviderInfo,
    RouteTarget,
    WireDialect,
    plain_schemas,
)
from toolwire.stream.codecs.bedrock_request import (
    DIALECT_NAME,
    encode_messages,
    encode_request,
    tool_schema,
)
from toolwire.stream.codecs.bedrock_stream import (
    RAW_FINISH_REASONS,
    BedrockConverseCodec,
    usage_from_bedrock,
)
from toolwire.stream.codecs.emulation import bedrock as emulation

__all__ = [
    "DIALECT",
    "RAW_FINISH_REASONS",
    "BedrockConverseCodec",
    "encode_messages",
    "encode_request",
    "tool_schema",
    "usage_from_bedrock",
]

_EVENTS: Final = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop"}
)
_STREAM_METHOD: Final = "converse-stream"
_WHOLE_METHOD: Final = "converse"


def model_path(model: str, method: str) -> str:
    """``/model/{model}/{method}``: where Bedrock's runtime takes a model call
    (the model id or ARN quoted whole)."""
    return f"/model/{quote(model, safe='')}/{method}"


def model_target(path: str, stream_method: str, whole_method: str) -> RouteTarget | None:
    """What a ``/model/{model}/{method}`` path says: the model and whether it
    streams (``None``: another method)."""
    model, _, method = path.partition("/model/")[2].rpartition("/")
    if not model or method not in (stream_method, whole_method):
        return None
    return model, method == stream_method, True


DIALECT: Final = WireDialect(
    name=DIALECT_NAME,
    codec=BedrockConverseCodec,
    capabilities=Capabilities(whole_responses=True, args_events=True),
    finish_reasons=RAW_FINISH_REASONS,
    usage=usage_from_bedrock,
    sniff_name=_EVENTS.__contains__,
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
    tool_schemas=plain_schemas(tool_schema),
    decode_request=emulation.decode_converse_request,
    encoder=emulation.BedrockConverseEncoder,
    otel_provider="aws.bedrock",
    structured_output=structured.BEDROCK,
    provider=ProviderInfo(
        names=("bedrock",),
        class_name="Bedrock",
        demo_model="us.amazon.nova-2-lite-v1:0",
        structured_models=structured.BEDROCK_MODELS,
        price_provider="aws",
    ),
)
"""Amazon Bedrock's Converse API, in AWS's event stream."""
