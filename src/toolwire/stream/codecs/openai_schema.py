"""OpenAI strict-mode tool schemas (Chat Completions and Responses alike).

:func:`to_openai_strict` follows the rules of OpenAI's Structured Outputs
guide, "Supported schemas": every object closed with ``additionalProperties:
false``, every property listed in ``required`` (optional ones made nullable,
their default stated in the description), only the supported keywords;
validation keywords strict mode rejects move into the description (the tool
layer still enforces them). A schema strict mode cannot express (free-form
maps, tuples, ``not``...) raises :class:`NotStrictCompatible`, and the tool
is sent non-strict.
"""

from __future__ import annotations

import contextlib
import copy
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from toolwire.errors import NotStrictCompatible, UsageError
from toolwire.stream.codecs._dialect import SchemaTool
from toolwire.stream.jsonschema import JSONSchema, allows_null, append_description, dump_default

__all__ = [
    "STRICT_KEYWORDS",
    "STRICT_STRING_FORMATS",
    "NotStrictCompatible",
    "strict_form",
    "strict_schemas",
    "to_openai_strict",
]

_STRICT_COMMON: Final = frozenset(
    {
        "type",
        "description",
        "enum",
        "anyOf",
        "$ref",
        "$defs",
        "properties",
        "required",
        "additionalProperties",
        "items",
    }
)
_STRICT_BY_TYPE: Final = {
    "string": {"pattern", "format"},
    "number": {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"},
    "integer": {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"},
    "array": {"minItems", "maxItems"},
}
STRICT_STRING_FORMATS: Final = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
STRICT_KEYWORDS: Final = frozenset(_STRICT_COMMON.union(*_STRICT_BY_TYPE.values()))
"""Every keyword OpenAI strict mode accepts somewhere in a schema."""

# Validation keywords that strict mode rejects but that are still worth telling
# the model: they move into the description.
_DESCRIBED: Final = {
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
    "minimum": "minimum {}",
    "maximum": "maximum {}",
    "exclusiveMinimum": "greater than {}",
    "exclusiveMaximum": "less than {}",
    "uniqueItems": "items must be unique",
    "pattern": "must match the pattern {}",
    "format": "format: {}",
}
_DROPPED: Final = ("title", "examples", "$schema", "discriminator", "readOnly", "writeOnly")
_UNSUPPORTED: Final = ("not", "if", "then", "else", "patternProperties", "prefixItems", "contains")


def to_openai_strict(schema: JSONSchema) -> JSONSchema:
    """Rewrite a canonical parameters schema for OpenAI strict mode.

    Args:
        schema: a schema from :func:`toolwire.tools.clean_schema`.

    Returns:
        A new schema that follows strict-mode rules.

    Raises:
        NotStrictCompatible: the schema needs a feature strict mode lacks.
    """
    return _node(copy.deepcopy(schema), "")


def _node(node: JSONSchema, path: str) -> JSONSchema:
    where = path or "root"
    if not node:
        raise NotStrictCompatible(f"{where}: an untyped value (Any)")
    notes: list[str] = []
    node = _normalized(dict(node), where, notes)
    typ = node.get("type")
    types = set(typ) if isinstance(typ, list) else {typ} if isinstance(typ, str) else set()
    if "object" in types or "properties" in node:
        _close_object(node, path)
    if "items" in node:
        if not isinstance(node["items"], dict):
            raise NotStrictCompatible(f"{path}: tuple-style items")
        node["items"] = _node(node["items"], f"{path}[]")
    elif "array" in types:
        raise NotStrictCompatible(f"{path}: an array without an item type")
    if "anyOf" in node:
        node["anyOf"] = [_node(v, path) for v in node["anyOf"] if isinstance(v, dict)]
    if "$defs" in node:
        node["$defs"] = {k: _node(v, f"$defs.{k}") for k, v in node["$defs"].items()}
    if not types and not any(k in node for k in ("anyOf", "$ref", "enum")):
        raise NotStrictCompatible(f"{where}: a value without a type")
    _keep_supported(node, types, notes)
    if notes:
        append_description(node, " ".join(n[:1].upper() + n[1:] for n in notes))
    return node


def _normalized(node: JSONSchema, where: str, notes: list[str]) -> JSONSchema:
    """Defaults into notes, ``const``/``oneOf``/``allOf`` into what strict
    mode reads; a keyword it cannot express refused."""
    if "default" in node:
        default = node.pop("default")
        if default is not None:
            notes.append(f"Default: {dump_default(default)}.")
    for drop in _DROPPED:
        node.pop(drop, None)
    if "const" in node:
        node["enum"] = [node.pop("const")]
    if "oneOf" in node:
        # Pydantic's discriminated unions: anyOf accepts the same values here
        # because the variants are told apart by their tag.
        node["anyOf"] = node.pop("oneOf")
    if "allOf" in node:
        for part in node.pop("allOf"):
            if isinstance(part, dict):
                node = {**part, **node}
    for bad in _UNSUPPORTED:
        if bad in node:
            raise NotStrictCompatible(f"{where}: keyword {bad!r}")
    return node


def _close_object(node: JSONSchema, path: str) -> None:
    """Every property required (optional ones nullable), no other properties."""
    where = path or "root"
    if node.get("additionalProperties") not in (None, False):
        raise NotStrictCompatible(f"{where}: a free-form map of values")
    props = node.get("properties")
    if not isinstance(props, dict) or (not props and path):
        raise NotStrictCompatible(f"{where}: an object without properties")
    required = set(node.get("required", []))
    closed: JSONSchema = {}
    for key, sub in props.items():
        converted = _node(sub, f"{path}.{key}" if path else key)
        closed[key] = converted if key in required else _nullable(converted)
    node["properties"] = closed
    node["required"] = list(closed)
    node["additionalProperties"] = False


def _keep_supported(node: JSONSchema, types: set[Any], notes: list[str]) -> None:
    """Drop the keywords strict mode rejects; the telling ones become notes."""
    allowed = set(_STRICT_COMMON)
    for t in types:
        allowed |= _STRICT_BY_TYPE.get(t, set())
    if node.get("format") not in STRICT_STRING_FORMATS:
        allowed.discard("format")
    dropped = {key: node.pop(key) for key in list(node) if key not in allowed}
    for key, template in _DESCRIBED.items():  # a stable order, whatever the input's
        if key in dropped:
            value = dropped[key]
            notes.append(template.format(value if value is not True else "") + ".")


def _nullable(node: JSONSchema) -> JSONSchema:
    if allows_null(node, {}) and "$ref" not in node:
        return node
    description = node.get("description")
    inner = {k: v for k, v in node.items() if k != "description"}
    out: JSONSchema = {"anyOf": [inner, {"type": "null"}]}
    if "anyOf" in inner and len(inner) == 1:
        out = {"anyOf": [*inner["anyOf"], {"type": "null"}]}
    if description:
        out["description"] = description
    return out


# -- tool entries -------------------------------------------------------------------

_STRICT_FORMS: weakref.WeakKeyDictionary[Any, tuple[JSONSchema | None, str | None]] = (
    weakref.WeakKeyDictionary()
)


def strict_form(tool: SchemaTool) -> tuple[JSONSchema | None, str | None]:
    """``(strict parameters, None)`` of a tool, or ``(None, why not)``;
    computed once per tool."""
    try:
        return _STRICT_FORMS[tool]
    except (KeyError, TypeError):
        pass
    try:
        form: tuple[JSONSchema | None, str | None] = (to_openai_strict(tool.parameters), None)
    except NotStrictCompatible as exc:
        form = (None, str(exc))
    with contextlib.suppress(TypeError):  # an object that takes no weak reference
        _STRICT_FORMS[tool] = form
    return form


def strict_schemas(
    entry: Callable[..., dict[str, Any]],
    custom: Callable[[str, str, Mapping[str, str] | None], dict[str, Any]],
) -> Callable[[Sequence[SchemaTool], bool | None], list[dict[str, Any]]]:
    """The tool schemas of an OpenAI dialect whose one entry ``entry`` builds
    (``entry(name, description, parameters, strict=...)``), and whose
    ``custom(name, description, grammar)`` builds a custom (freeform) tool's.

    ``strict=None`` sends a strict-mode schema for each tool that allows one
    (and whose own ``strict`` is not ``False``), ``True`` requires it for
    every tool (:class:`~toolwire.errors.UsageError` otherwise), ``False``
    never sends one.
    """

    def shape(tools: Sequence[SchemaTool], strict: bool | None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for t in tools:
            if t.freeform is not None:
                out.append(custom(t.name, t.description, t.freeform or None))  # {}: free text
                continue
            parameters, is_strict = t.parameters, False
            if strict is not False and not (strict is None and t.strict is False):
                form, problem = strict_form(t)
                if form is not None:
                    parameters, is_strict = form, True
                elif strict:
                    raise UsageError(
                        f"tool {t.name!r} cannot have an OpenAI strict-mode schema: {problem}"
                    )
            out.append(entry(t.name, t.description, parameters, strict=is_strict))
        return out

    return shape
