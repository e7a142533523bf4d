"""Gemini function declarations: the OpenAPI 3.0 subset Gemini accepts.

:func:`to_gemini` rewrites a canonical parameters schema: no ``$ref``
(inlined, recursion cut at three levels), no ``additionalProperties``,
``nullable`` instead of null unions, string enums only (other enums are
described), and only the keywords and formats Gemini documents.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from toolwire.stream.jsonschema import JSONSchema, append_description, dump_default, inline_refs

__all__ = ["to_gemini"]

_GEMINI_KEYS: Final = frozenset(
    {
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
_GEMINI_FORMATS: Final = {
    "string": {"date-time", "enum"},
    "number": {"float", "double"},
    "integer": {"int32", "int64"},
}


def to_gemini(schema: JSONSchema) -> JSONSchema:
    """Rewrite a canonical parameters schema for Gemini function declarations.

    Args:
        schema: a schema from :func:`toolwire.tools.clean_schema`.

    Returns:
        A new schema in the OpenAPI 3.0 subset Gemini accepts.
    """
    flat = inline_refs(copy.deepcopy(schema), max_depth=3) if "$defs" in schema else schema
    return _node(flat)


def _node(node: JSONSchema) -> JSONSchema:
    node = _merged(dict(node))
    node = _without_null(node)
    _enum(node)
    if "default" in node and node["default"] is None:
        node.pop("default")  # says nothing that ``nullable`` does not
    fmt = node.get("format")
    if fmt is not None and fmt not in _GEMINI_FORMATS.get(str(node.get("type")), set()):
        node.pop("format")
    if isinstance(node.get("properties"), dict):
        node["properties"] = {k: _node(v) for k, v in node["properties"].items()}
    if isinstance(node.get("items"), dict):
        node["items"] = _node(node["items"])
    if isinstance(node.get("anyOf"), list):
        node["anyOf"] = [_node(v) for v in node["anyOf"] if isinstance(v, dict)]
    return {k: v for k, v in node.items() if k in _GEMINI_KEYS}


def _merged(node: JSONSchema) -> JSONSchema:
    """``const``, ``oneOf`` and ``allOf`` in the keywords Gemini reads."""
    if "const" in node:
        node["enum"] = [node.pop("const")]
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    if "allOf" in node:
        for part in node.pop("allOf"):
            if isinstance(part, dict):
                node = {**part, **node}
    return node


def _without_null(node: JSONSchema) -> JSONSchema:
    """``null`` in a type list or an ``anyOf`` said as ``nullable: true``."""
    nullable = False
    typ = node.get("type")
    if isinstance(typ, list):
        non_null = [t for t in typ if t != "null"]
        nullable = len(non_null) < len(typ)
        if len(non_null) == 1:
            node["type"] = non_null[0]
        else:
            node.pop("type")
            node["anyOf"] = [{"type": t} for t in non_null]
    variants = node.get("anyOf")
    if isinstance(variants, list):
        kept = [v for v in variants if not (isinstance(v, dict) and v.get("type") == "null")]
        nullable = nullable or len(kept) < len(variants)
        if len(kept) == 1 and isinstance(kept[0], dict):
            node.pop("anyOf")
            node = {**kept[0], **node}
        else:
            node["anyOf"] = kept
    if nullable:
        node["nullable"] = True
    return node


def _enum(node: JSONSchema) -> None:
    """String enums kept (``null`` as ``nullable``); others described."""
    enum: Any = node.get("enum")
    if not isinstance(enum, list):
        return
    values = [v for v in enum if v is not None]
    if len(values) < len(enum):
        node["nullable"] = True
    if all(isinstance(v, str) for v in values):
        node["enum"] = values
        node.setdefault("type", "string")
    else:
        node.pop("enum")
        append_description(node, "One of: " + ", ".join(dump_default(v) for v in values))
