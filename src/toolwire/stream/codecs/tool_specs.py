"""Tool entries read back: a request's ``tools`` of any dialect as plain tools.

Theory of operation: every dialect writes its tool entries from the same
four facts (:class:`~toolwire.stream.codecs.SchemaTool`: a name, a
description, a JSON Schema of the parameters, and for a custom tool its
grammar). :func:`read_tools` reads those facts back from entries already in
a dialect's shape, telling the shape from the entry itself (OpenAI Chat's
``{"type": "function", "function": ...}``, Responses' flat one, Anthropic's
``input_schema``, Gemini's ``functionDeclarations``, Converse's
``toolSpec``), so that tools written for one dialect can be written again
for another (``WireDialect.tool_schemas``). An entry that is no function
(a provider's built-in tool: a web search, a code interpreter) has no
meaning in another dialect and is left out; :func:`read_tools` says which.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PlainTool", "read_tools"]


@dataclass(frozen=True, slots=True)
class PlainTool:
    """A tool as every dialect's schema shaping reads it (a ``SchemaTool``)."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    strict: bool | None = None
    freeform: Mapping[str, str] | None = None
    anthropic_eager_input_streaming: bool | None = None
    anthropic_toolset: str | None = None
    asynchronous: bool = False


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _schema(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {"type": "object", "properties": {}}


def _grammar(value: Any) -> Mapping[str, str]:
    """A custom tool's ``format`` as the grammar ``freeform`` holds (``{}``: free text)."""
    if not isinstance(value, Mapping) or value.get("type") != "grammar":
        return {}
    grammar = value.get("grammar", value)
    if not isinstance(grammar, Mapping):
        return {}
    return {k: str(grammar[k]) for k in ("syntax", "definition") if k in grammar}


def _lowered(schema: Any) -> Any:
    """A Gemini schema (``"type": "OBJECT"``) as JSON Schema (``"object"``)."""
    if isinstance(schema, Mapping):
        return {
            k: (v.lower() if k == "type" and isinstance(v, str) else _lowered(v))
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_lowered(v) for v in schema]
    return schema


def _entry(entry: Mapping[str, Any]) -> Iterable[PlainTool]:
    kind = entry.get("type")
    inner = entry.get("function")
    if kind == "function" and isinstance(inner, Mapping):  # OpenAI Chat
        yield PlainTool(
            _text(inner.get("name")),
            _text(inner.get("description")),
            _schema(inner.get("parameters")),
        )
    elif kind == "custom" and isinstance(entry.get("custom"), Mapping):  # OpenAI Chat, custom
        custom = entry["custom"]
        yield PlainTool(
            _text(custom.get("name")),
            _text(custom.get("description")),
            freeform=_grammar(custom.get("format")),
        )
    elif "input_schema" in entry:  # Anthropic
        eager = entry.get("eager_input_streaming")
        yield PlainTool(
            _text(entry.get("name")),
            _text(entry.get("description")),
            _schema(entry.get("input_schema")),
            anthropic_eager_input_streaming=eager if isinstance(eager, bool) else None,
        )
    elif kind == "function" and "name" in entry:  # OpenAI Responses
        yield PlainTool(
            _text(entry.get("name")),
            _text(entry.get("description")),
            _schema(entry.get("parameters")),
        )
    elif kind == "custom" and "name" in entry:  # OpenAI Responses, custom
        yield PlainTool(
            _text(entry.get("name")),
            _text(entry.get("description")),
            freeform=_grammar(entry.get("format")),
        )
    elif isinstance(entry.get("toolSpec"), Mapping):  # Bedrock Converse
        spec = entry["toolSpec"]
        schema = spec.get("inputSchema")
        schema = schema.get("json") if isinstance(schema, Mapping) else None
        yield PlainTool(_text(spec.get("name")), _text(spec.get("description")), _schema(schema))
    else:  # Gemini: a Tool holding declarations
        declarations = entry.get("functionDeclarations", entry.get("function_declarations"))
        for declaration in declarations if isinstance(declarations, list) else ():
            if isinstance(declaration, Mapping):
                parameters = declaration.get("parametersJsonSchema")
                if parameters is None:
                    parameters = _lowered(declaration.get("parameters"))
                yield PlainTool(
                    _text(declaration.get("name")),
                    _text(declaration.get("description")),
                    _schema(parameters),
                )


def read_tools(entries: Sequence[Any]) -> tuple[list[PlainTool], list[Any]]:
    """The function tools of a request's ``tools``, and the entries left out
    (a provider's own built-in tools, anything unreadable)."""
    tools: list[PlainTool] = []
    left: list[Any] = []
    for entry in entries:
        found = list(_entry(entry)) if isinstance(entry, Mapping) else []
        found = [tool for tool in found if tool.name]
        if found:
            tools.extend(found)
        else:
            left.append(entry)
    return tools, left
