"""Native structured output: how each dialect asks for an answer held to a
JSON Schema, and how the emulation server tells that a request asked.

Theory of operation: a typed run (``Agent(output_type=...)``) asks the model
either natively, with the dialect's own structured-output member added to the
request body (:attr:`StructuredOutput.body`), or through a final-result tool,
which every dialect with tools can call. Each dialect's words live here:

* OpenAI Chat: ``response_format: {"type": "json_schema", "json_schema":
  {"name", "schema", "strict": true}}`` (strict-mode schema);
* OpenAI Responses: ``text: {"format": {"type": "json_schema", "name",
  "schema", "strict": true}}``;
* Anthropic Messages: ``output_config: {"format": {"type": "json_schema",
  "schema"}}`` (the generally available form; objects closed as in strict mode);
* Gemini: ``generationConfig: {"responseMimeType": "application/json",
  "responseJsonSchema"}``;
* Bedrock Converse: ``outputConfig: {"textFormat": {"type": "json_schema",
  "structure": {"jsonSchema": {"schema": "<the schema as a JSON string>",
  "name"}}}}``.

The answer then comes back as the turn's text, which the agent validates.
The other dialects have no entry: a typed run over them uses the tool.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolwire.stream.codecs.openai_schema import to_openai_strict
from toolwire.stream.codecs.request import dict_or_empty, list_or_empty
from toolwire.stream.jsonio import dumps
from toolwire.stream.jsonschema import JSONSchema

__all__ = ["StructuredOutput", "structured_output", "tool_names"]


def _always(model: str) -> bool:
    return True


@dataclass(frozen=True, slots=True, kw_only=True)
class StructuredOutput:
    """One dialect's native structured output."""

    body: Callable[[str, JSONSchema], dict[str, Any]]
    """The body members that ask for an answer held to ``schema``, named
    ``name`` (merged into the request one level deep, as ``extra`` is).
    Raises ``ValueError`` for a schema the dialect cannot express."""
    asked: Callable[[dict[str, Any]], bool]
    """True for a request body that asks for structured output (the emulation server)."""
    supports: Callable[[str], bool] = _always
    """True for a model id that has it (older models of the dialect have not)."""


def _chat(name: str, schema: JSONSchema) -> dict[str, Any]:
    strict = to_openai_strict(schema)
    return {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": strict, "strict": True},
        }
    }


def _responses(name: str, schema: JSONSchema) -> dict[str, Any]:
    strict = to_openai_strict(schema)
    fmt = {"type": "json_schema", "name": name, "schema": strict, "strict": True}
    return {"text": {"format": fmt}}


def _anthropic(name: str, schema: JSONSchema) -> dict[str, Any]:
    fmt = {"type": "json_schema", "schema": to_openai_strict(schema)}
    return {"output_config": {"format": fmt}}


def _gemini(name: str, schema: JSONSchema) -> dict[str, Any]:
    config = {"responseMimeType": "application/json", "responseJsonSchema": schema}
    return {"generationConfig": config}


def _bedrock(name: str, schema: JSONSchema) -> dict[str, Any]:
    structure = {"jsonSchema": {"schema": dumps(to_openai_strict(schema)), "name": name}}
    return {"outputConfig": {"textFormat": {"type": "json_schema", "structure": structure}}}


def _member_type(body: dict[str, Any], *path: str) -> bool:
    node: Any = body
    for key in path:
        node = dict_or_empty(node).get(key)
    return bool(node == "json_schema")


def _gemini_asked(body: dict[str, Any]) -> bool:
    config = dict_or_empty(body.get("generationConfig"))
    return "responseJsonSchema" in config or "responseSchema" in config


def _not_older(*prefixes: str) -> Callable[[str], bool]:
    def supports(model: str) -> bool:
        return not model.startswith(prefixes)

    return supports


_TABLE: dict[str, StructuredOutput] = {
    "openai-chat": StructuredOutput(
        body=_chat, asked=lambda b: _member_type(b, "response_format", "type")
    ),
    "openai-responses": StructuredOutput(
        body=_responses, asked=lambda b: _member_type(b, "text", "format", "type")
    ),
    "anthropic-messages": StructuredOutput(
        body=_anthropic,
        asked=lambda b: _member_type(b, "output_config", "format", "type"),
        supports=_not_older("claude-2", "claude-3", "claude-instant"),
    ),
    "gemini": StructuredOutput(
        body=_gemini, asked=_gemini_asked, supports=_not_older("gemini-1.0", "gemini-pro")
    ),
    "bedrock-converse": StructuredOutput(
        body=_bedrock, asked=lambda b: _member_type(b, "outputConfig", "textFormat", "type")
    ),
}


def structured_output(dialect: str) -> StructuredOutput | None:
    """The native structured output of ``dialect``; ``None`` where it has none."""
    return _TABLE.get(dialect)


def tool_names(body: dict[str, Any]) -> list[str]:
    """The names of the tools a request body declares, in any of the dialects
    above (``function.name``, ``name``, Gemini's ``functionDeclarations``,
    Bedrock's ``toolConfig.tools[].toolSpec.name``)."""
    entries = list_or_empty(body.get("tools"))
    entries += list_or_empty(dict_or_empty(body.get("toolConfig")).get("tools"))
    names: list[str] = []
    for entry in entries:
        entry = dict_or_empty(entry)
        for declared in list_or_empty(entry.get("functionDeclarations")):
            names.append(str(dict_or_empty(declared).get("name", "")))
        name = (
            dict_or_empty(entry.get("function")).get("name")
            or dict_or_empty(entry.get("toolSpec")).get("name")
            or entry.get("name")
        )
        if isinstance(name, str) and name:
            names.append(name)
    return names
