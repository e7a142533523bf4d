"""``register()`` refuses a dialect that does not hold together, naming the
dialect and the piece at fault, and every registered dialect holds together."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import toolwire
from toolwire.errors import RegistrationError, UsageError
from toolwire.stream.codecs import (
    _REGISTRY,
    Capabilities,
    ProviderInfo,
    RateLimitHeaders,
    WireDialect,
    register,
    registered,
    wire_dialect,
)
from toolwire.stream.codecs._checks import check_dialect
from toolwire.stream.framing import FramingKind
from toolwire.stream.parts import Part, TextPart


class _Puffs:
    """A toy codec: each payload is text."""

    dialect = "puffs"
    framings: frozenset[FramingKind] = frozenset({"sse"})

    def __init__(self) -> None:
        self.quirks: set[str] = set()

    def decode(self, event: str, data: str) -> list[Part]:
        return [TextPart(data, 0)]


class _WholePuffs(_Puffs):
    def decode_response(self, body: dict[str, Any]) -> list[Part]:
        return [TextPart(str(body), 0)]


class _KeptPuffs(_Puffs):
    @property
    def cursor(self) -> tuple[str, str] | None:
        return None

    def continue_after(self, stream_id: str, after: str | None) -> None:
        pass


class _ArgsPuffs(_Puffs):
    framings: frozenset[FramingKind] = frozenset({"eventstream"})
    args_event = None

    def args_delta(self, m: re.Match[Any]) -> tuple[int, int, str] | None:
        return None

    def args_frame(self, m: re.Match[Any]) -> tuple[str, str]:
        return "", ""

    def args_run(self, items: Sequence[Any], i: int) -> tuple[int, int, list[str], int] | None:
        return None


def _puffs(**fields: Any) -> WireDialect:
    return WireDialect(**{"name": "puffs", "codec": _Puffs, "finish_reasons": {}, **fields})


def _refused(dialect: WireDialect) -> str:
    before = dict(_REGISTRY)
    with pytest.raises(RegistrationError) as caught:
        register(dialect)
    assert _REGISTRY == before
    assert isinstance(caught.value, UsageError)  # what a duplicate name raised before
    message = caught.value.message
    assert message.startswith(f"dialect {dialect.name!r} cannot be registered: ")
    return message


def test_every_registered_dialect_holds_together() -> None:
    for dialect in registered():
        others = {d.name: d for d in registered() if d is not dialect}
        check_dialect(dialect, others)  # raises if not


def test_kept_streams_without_a_cursor_reader_is_refused() -> None:
    message = _refused(_puffs(capabilities=Capabilities(kept_streams=True)))
    assert "it declares kept_streams but its codec _Puffs has no cursor, continue_after" in message
    assert "ContinuedCodec" in message
    assert "it declares kept_streams but has no continuation_path" in message


def test_a_continuation_path_needs_kept_streams_declared() -> None:
    message = _refused(_puffs(codec=_KeptPuffs, continuation_path=lambda s, a: f"/p/{s}"))
    assert "it has a continuation_path but does not declare kept_streams" in message
    assert "its codec _KeptPuffs has cursor, continue_after (ContinuedCodec)" in message
    assert "capabilities=Capabilities(kept_streams=True)" in message


def test_a_fast_args_path_in_event_streams_needs_its_event_type() -> None:
    message = _refused(_puffs(codec=_ArgsPuffs, capabilities=Capabilities(args_events=True)))
    assert (
        "it declares args_events but its codec _ArgsPuffs has no args_event_type, "
        "args_event_bytes (EventStreamArgsCodec)"
    ) in message


def test_args_events_declared_without_the_codec_methods() -> None:
    message = _refused(_puffs(capabilities=Capabilities(args_events=True)))
    assert (
        "has no args_event, args_delta, args_frame, text_delta, args_run (ArgsEventCodec)"
        in message
    )


def test_a_whole_response_reader_that_is_not_declared_is_refused() -> None:
    message = _refused(_puffs(codec=_WholePuffs))
    assert "its codec _WholePuffs has decode_response (WholeCodec)" in message
    assert "capabilities=Capabilities(whole_responses=True)" in message
    declared = _puffs(capabilities=Capabilities(whole_responses=True))
    assert "declares whole_responses but its codec _Puffs has no decode_response" in _refused(
        declared
    )


def test_a_name_or_path_of_another_dialect_is_refused() -> None:
    anthropic = wire_dialect("anthropic-messages")
    assert "a dialect of that name is already registered" in _refused(anthropic)
    message = _refused(_puffs(paths=("/v1/messages",)))
    assert (
        "its path '/v1/messages' is told as 'anthropic-messages' (whose path is '/messages')"
        in message
    )
    assert "its whole_framing 'json-array'" in _refused(
        _puffs(codec=_JsonArrayPuffs, whole_framing="json-array")
    )


class _JsonArrayPuffs(_Puffs):
    framings: frozenset[FramingKind] = frozenset({"json-array"})


def test_fields_that_hold_only_together() -> None:
    message = _refused(_puffs(routes=("/puffs",), whole_framing="ndjson"))
    assert "it has routes for the emulation server but no decode_request, encoder" in message
    assert "its whole_framing 'ndjson' is not one its codec streams in" in message
    message = _refused(_puffs(encode_request=lambda **kw: {}, stream_paths=("/stream",)))
    assert "it has encode_request but no tool_schemas, request_path" in message
    assert "its stream_paths ['/stream'] are not among its paths" in message
    message = _refused(_puffs(continuation_routes=("/puffs/{id}",), finish_reasons={"x": "done"}))
    assert "continuation_routes and continuation_target without the other" in message
    assert "its finish_reasons map to ['done'], not toolwire finish reasons" in message


def test_a_sniff_rule_without_a_codec_class_is_refused() -> None:
    message = _refused(_puffs(codec=None, sniff_text="puff", usage=42))
    assert "its codec None is not a codec class: nothing would read its streams" in message
    assert "its sniff_text is not callable" in message
    assert "its usage is not callable" in message


def test_a_codec_of_another_dialect_is_refused() -> None:
    message = _refused(dataclasses.replace(_puffs(), name="smoke"))
    assert "its codec _Puffs says it reads 'puffs'" in message


def test_a_consistent_toy_dialect_registers() -> None:
    dialect = register(
        _puffs(
            codec=_KeptPuffs,
            capabilities=Capabilities(kept_streams=True),
            continuation_path=lambda s, a: f"/p/{s}",
        )
    )
    try:
        assert wire_dialect("puffs") is dialect
        decoder = toolwire.StreamDecoder("puffs")
        assert decoder.cursor is None
        decoder.continue_after("s", None)  # a declared capability, reached without probing
    finally:
        del _REGISTRY["puffs"]


def test_no_code_probes_a_codec_for_a_capability() -> None:
    """Only the registration checks look at a codec's members."""
    stream = Path(toolwire.__file__).resolve().parent / "stream"
    allowed = {stream / "codecs" / "_checks.py", stream / "codecs" / "sdk.py"}
    probing = []
    for path in sorted(stream.rglob("*.py")):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
            ):
                probing.append(f"{path.relative_to(stream)}:{node.lineno}")
    assert probing == []


def _provided(**fields: Any) -> ProviderInfo:
    return ProviderInfo(
        **{
            "names": ("puffer",),
            "class_name": "Puffer",
            "demo_model": "puff-1",
            "price_provider": "puffco",
            **fields,
        }
    )


def test_a_provider_needs_its_requests_and_the_emulation_server() -> None:
    message = _refused(_puffs(provider=_provided()))
    assert "it has a provider but no encode_request (a provider writes requests)" in message
    assert "the emulation server cannot serve it (no routes, decode_request and encoder)" in message


def test_a_providers_names_and_rate_limit_headers_are_checked() -> None:
    served = dataclasses.replace(wire_dialect("gemini"), name="puffs", paths=(), routes=("/p",))
    headers = RateLimitHeaders(limit="x-limit", remaining="x-{resource}-left", reset="x-{resource}")
    message = _refused(
        dataclasses.replace(
            served,
            codec=_Puffs,
            whole_framing=None,
            capabilities=Capabilities(),
            sdk_shape=None,
            provider=_provided(
                names=("anthropic", "gemini"),
                class_name="not a class",
                demo_model="",
                rate_limit_headers=headers,
            ),
        )
    )
    assert "its provider's class_name 'not a class' is not a class name" in message
    assert "its provider has no demo_model" in message
    assert "its rate-limit limit header 'x-limit' does not hold {resource}" in message
    assert "its provider name 'anthropic' is one of 'anthropic-messages''s provider's" in message
    assert "its provider name 'gemini' is another dialect's name" in message
    assert "remaining" not in message


def test_a_dialect_named_as_another_dialects_provider_is_refused() -> None:
    message = _refused(_puffs(name="bedrock", codec=_Bedrock))
    assert "its name 'bedrock' is the name of 'bedrock-converse''s provider" in message


class _Bedrock(_Puffs):
    dialect = "bedrock"


def test_each_built_in_provider_is_the_class_its_registration_names() -> None:
    import toolwire.providers as providers

    for dialect in registered():
        if dialect.provider is not None:
            cls = getattr(providers, dialect.provider.class_name)
            assert cls.dialect == dialect.name
            # BedrockInvoke shares Bedrock's default name: both are priced and
            # traced as AWS Bedrock.
            shared = dialect.name == "bedrock-invoke" and cls.default_name == "bedrock"
            assert cls.default_name in dialect.provider.names or shared
