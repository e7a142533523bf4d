"""Each dialect is one registered object, and nothing outside the codecs names
a dialect's wire vocabulary.

The vocabulary test reads every module of ``toolwire`` outside
``toolwire/stream/codecs/`` with ``ast`` and looks at its string constants
(docstrings excepted: prose may describe a format). A word of a dialect's
wire vocabulary there means that module knows the format itself instead of
asking the dialect's :class:`~toolwire.stream.codecs.WireDialect`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import toolwire
from toolwire import StreamDecoder
from toolwire.errors import UsageError
from toolwire.stream.codecs import (
    _REGISTRY,
    WireDialect,
    codec_for,
    dialect_for_path,
    register,
    registered,
    wire_dialect,
)
from toolwire.stream.decoder import sniff_dialect
from toolwire.stream.framing import FramingKind
from toolwire.stream.parts import Part, StreamEndPart, TextPart
from toolwire.types import DIALECTS

SRC = Path(toolwire.__file__).resolve().parent
CODECS = SRC / "stream" / "codecs"

VOCABULARY: dict[str, tuple[str, ...]] = {
    "openai-chat": (
        "chat.completion",
        "/chat/completions",
        "[DONE]",
        "stream_options",
        "include_usage",
        "prompt_tokens",
        "tool_call_id",
        "system_fingerprint",
    ),
    "openai-responses": (
        "response.output_item",
        "response.function_call_arguments",
        "response.completed",
        "response.created",
        "function_call_output",
        "/responses",
        "output_text",
        "reasoning_summary",
        "previous_response_id",
        "response.create",
        "previous_response_not_found",
    ),
    "anthropic-messages": (
        "content_block",
        "message_start",
        "message_delta",
        "message_stop",
        "input_json_delta",
        "partial_json",
        "tool_use",
        "stop_reason",
        "end_turn",
        "/v1/messages",
        "rawPredict",
        "input_schema",
        "server_tool_use",
        "redacted_thinking",
        "cache_read_input_tokens",
    ),
    "gemini": (
        "functionCall",
        "functionResponse",
        "functionDeclarations",
        "candidates",
        "usageMetadata",
        "finishReason",
        "streamGenerateContent",
        "generateContent",
        "partialArgs",
        "toolConfig",
        "alt=sse",
        "thoughtSignature",
        "promptTokenCount",
        "systemInstruction",
        "modelVersion",
    ),
    "ollama-ndjson": ("done_reason", "/api/chat", "prompt_eval_count"),
    "cohere-v2": (
        "tool-call-delta",
        "tool-call-start",
        "tool-plan-delta",
        "content-delta",
        "message-start",
        "message-end",
        "citation-start",
        "/v2/chat",
    ),
    "bedrock-converse": (
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "toolUse",
        "toolResult",
        "toolSpec",
        "inputSchema",
        "inferenceConfig",
        "reasoningContent",
        "stopReason",
        "inputTokens",
        "converse-stream",
        "/model/",
    ),
    "bedrock-invoke": ("invoke-with-response-stream", "bedrock-2023-05-31"),
    "gemini-interactions": (
        "step.delta",
        "interaction.completed",
        "arguments_delta",
        "previous_interaction_id",
        "last_event_id",
        "/interactions",
    ),
}
"""Words only a dialect's own format uses: event names, members, paths."""


def _docstrings(tree: ast.AST) -> set[int]:
    """The string statements of a module: docstrings, attribute docstrings."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for statement in body:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                found.add(id(statement.value))
    return found


def _strings(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, text)`` of each string constant of a module, docstrings excepted."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                yield node.lineno, node.value


def _modules(*, in_codecs: bool) -> list[Path]:
    return [p for p in sorted(SRC.rglob("*.py")) if p.is_relative_to(CODECS) is in_codecs]


def test_the_vocabulary_covers_every_dialect() -> None:
    assert tuple(VOCABULARY) == DIALECTS == tuple(d.name for d in registered())


SHARED_WORDS = {"ui": ("finishReason", "[DONE]")}
"""Words a chat front end's own protocol shares with a dialect: the AI SDK's
UI message stream has a ``finishReason`` and ends with ``[DONE]`` too."""


def test_no_module_outside_the_codecs_names_a_dialects_wire_vocabulary() -> None:
    found = [
        f"{path.relative_to(SRC)}:{line}: {word!r} ({dialect})"
        for path in _modules(in_codecs=False)
        for line, text in _strings(path)
        for dialect, words in VOCABULARY.items()
        for word in words
        if word in text and word not in SHARED_WORDS.get(path.relative_to(SRC).parts[0], ())
    ]
    assert found == [], "wire vocabulary outside toolwire/stream/codecs/:\n" + "\n".join(found)


def test_the_codecs_use_each_word_of_the_vocabulary() -> None:
    """A word no codec uses any more would make the test above vacuous."""
    text = "\n".join(s for path in _modules(in_codecs=True) for _, s in _strings(path))
    unused = [word for words in VOCABULARY.values() for word in words if word not in text]
    assert unused == []


def test_the_scan_sees_string_constants_but_not_docstrings(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        '"""Reads content_block_delta events."""\n'
        'X = 1\n"""An attribute docstring: candidates."""\n'
        'def f() -> str:\n    return f"{1}/v1/messages"\n',
        encoding="utf-8",
    )
    assert [text for _, text in _strings(module)] == ["/v1/messages"]


# -- the registry ---------------------------------------------------------------------


def test_every_dialect_is_registered_once_in_order() -> None:
    assert [d.name for d in registered()] == list(DIALECTS)
    for d in registered():
        assert wire_dialect(d.name) is d
        assert codec_for(d.name).dialect == d.name
    with pytest.raises(UsageError, match="already registered"):
        register(registered()[0])
    with pytest.raises(UsageError, match="unknown dialect"):
        wire_dialect("smoke-signals")


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/v1/chat/completions", "openai-chat"),
        ("/v1/responses/", "openai-responses"),
        ("/v1/messages", "anthropic-messages"),
        ("/v1beta/models/gemini-2.5-flash:streamGenerateContent", "gemini"),
        ("/api/chat", "ollama-ndjson"),
        ("/v2/chat", "cohere-v2"),
        ("/model/us.amazon.nova-2-lite-v1%3A0/converse-stream", "bedrock-converse"),
        ("/model/us.amazon.nova-2-lite-v1:0/converse", "bedrock-converse"),
        ("/model/anthropic.claude-sonnet-4-5/invoke-with-response-stream", "bedrock-invoke"),
        ("/model/anthropic.claude-sonnet-4-5/invoke", "bedrock-invoke"),
        ("/v1beta/interactions", "gemini-interactions"),
        ("/v1/embeddings", None),
    ],
)
def test_a_request_path_tells_its_dialect(path: str, name: str | None) -> None:
    found = dialect_for_path(path)
    assert (found.name if found is not None else None) == name


def test_the_tool_schemas_come_from_the_dialect() -> None:
    shaped = {d.name for d in registered() if d.tool_schemas is not None}
    strict = {d.name for d in registered() if d.strict_schema is not None}
    assert shaped == {
        "openai-chat",
        "openai-responses",
        "anthropic-messages",
        "gemini",
        "ollama-ndjson",
        "cohere-v2",
        "bedrock-converse",
        "bedrock-invoke",
        "gemini-interactions",
    }
    assert strict == {"openai-chat", "openai-responses"}


class _SmokeCodec:
    """A toy dialect's codec: each payload ``puff <text>`` is text."""

    dialect = "smoke-signals"
    framings: frozenset[FramingKind] = frozenset({"sse"})

    def __init__(self) -> None:
        self.quirks: set[str] = set()

    def decode(self, event: str, data: str) -> list[Part]:
        if data == "fire out":
            return [StreamEndPart()]
        return [TextPart(data.removeprefix("puff "), 0)]


@pytest.fixture
def smoke() -> Iterator[WireDialect]:
    dialect = register(
        WireDialect(
            name="smoke-signals",
            codec=_SmokeCodec,
            finish_reasons={},
            sniff_text=lambda text: text.startswith("puff "),
            paths=("/smoke",),
        )
    )
    try:
        yield dialect
    finally:
        del _REGISTRY["smoke-signals"]


def test_a_registered_dialect_is_sniffed_decoded_and_routed(smoke: Any) -> None:
    """Adding a dialect is one object and its registration: ``auto`` then
    tells it, the decoder reads it, and paths lead to it."""
    assert sniff_dialect("message", "puff hello") == "smoke-signals"
    decoder = StreamDecoder("auto")
    decoder.feed(b"data: puff hello\n\ndata: puff  world\n\ndata: fire out\n\n")
    decoder.close()
    result = decoder.result()
    assert result.dialect == "smoke-signals" and result.error is None
    assert result.choices[0].text == "hello world"
    assert dialect_for_path("/v1/smoke") is smoke
    assert StreamDecoder("smoke-signals").dialect == "smoke-signals"
