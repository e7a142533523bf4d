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
Each dialect's registration holds its entry (``WireDialect.structured_output``)
and which models of its service have it (``ProviderInfo.structured_models``);
:func:`toolwire.stream.codecs.structured_output` reads them. The other
dialects have none: a typed run over them uses the tool.
"""

from __future__ import annotations

from typing import Any, Final

from toolwire.stream.codecs._dialect import ModelTable, StructuredOutput
from toolwire.stream.codecs.openai_schema import to_openai_strict
from toolwire.stream.codecs.request import dict_or_empty, list_or_empty
from toolwire.stream.jsonio import dumps
from toolwire.stream.jsonschema import JSONSchema

__all__ = [
    "ANTHROPIC",
    "ANTHROPIC_MODELS",
    "BEDROCK",
    "BEDROCK_MODELS",
    "CHAT",
    "GEMINI",
    "GEMINI_MODELS",
    "OPENAI_MODELS",
    "RESPONSES",
    "StructuredOutput",
    "tool_names",
]


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


CHAT: Final = StructuredOutput(
    body=_chat, asked=lambda b: _member_type(b, "response_format", "type")
)
RESPONSES: Final = StructuredOutput(
    body=_responses, asked=lambda b: _member_type(b, "text", "format", "type")
)
ANTHROPIC: Final = StructuredOutput(
    body=_anthropic, asked=lambda b: _member_type(b, "output_config", "format", "type")
)
GEMINI: Final = StructuredOutput(body=_gemini, asked=_gemini_asked)
BEDROCK: Final = StructuredOutput(
    body=_bedrock, asked=lambda b: _member_type(b, "outputConfig", "textFormat", "type")
)


OPENAI_MODELS: Final = ModelTable(
    True,
    {
        "gpt-3.5": False,
        "gpt-4": False,  # gpt-4, gpt-4-turbo (not the families below)
        "gpt-4o": True,
        "gpt-4o-2024-05-13": False,  # json_schema came with gpt-4o-2024-08-06
        "gpt-4.1": True,
        "gpt-4.5": True,
        "o1-mini": False,
        "o1-preview": False,
    },
)
"""OpenAI's models with ``json_schema`` structured outputs (Chat and Responses)."""

ANTHROPIC_MODELS: Final = ModelTable(
    True,
    {
        "claude-instant": False,
        "claude-2": False,
        "claude-3": False,  # 3, 3.5, 3.7
        "claude-sonnet-4-0": False,
        "claude-sonnet-4-2": False,  # claude-sonnet-4-20250514
        "claude-opus-4-0": False,
        "claude-opus-4-2": False,  # claude-opus-4-20250514
    },
)
"""Claude models with structured outputs: Sonnet 4.5, Opus 4.1 and later."""

GEMINI_MODELS: Final = ModelTable(True, {"gemini-1.": False, "gemini-pro": False})
"""Gemini models with ``responseJsonSchema``: 2.0 and later."""

BEDROCK_MODELS: Final = ModelTable(
    True,
    {
        "anthropic.claude-instant": False,
        "anthropic.claude-v2": False,
        "anthropic.claude-3": False,
        "anthropic.claude-sonnet-4-2": False,
        "anthropic.claude-opus-4-2": False,
    },
    strip=("us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global."),
)
"""Bedrock models with ``outputConfig.textFormat``: where Converse has it
(older Claude models have not); an inference profile's region is read past."""


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
