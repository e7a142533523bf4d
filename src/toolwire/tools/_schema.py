"""JSON Schema for tool parameters: building and cleaning.

Theory of operation: a function's signature becomes a Pydantic model (one field
per parameter, aliased so that parameter names such as ``json`` or
``model_name`` never clash with Pydantic's own attributes). The model gives two
things: the validator that runs before the tool, and a JSON Schema. That schema
is cleaned once into the tool's canonical ``parameters``: titles removed (they
repeat the names and cost tokens), ``$ref`` inlined unless the model is
recursive, ``additionalProperties: false`` on objects Pydantic forbids extras in.

Each provider then gets its own view of that canonical schema, shaped by its
codec: OpenAI strict mode (:mod:`toolwire.stream.codecs.openai_schema`), Gemini's
OpenAPI subset (:mod:`toolwire.stream.codecs.gemini_schema`).

Because strict mode makes optional arguments nullable, a model may send
``null`` for an argument whose default is not ``None``. :func:`drop_null_defaults`
removes such nulls before validation so the Python default applies.
"""

from __future__ import annotations

import copy
from typing import Any

from toolwire.stream.jsonschema import (
    JSONSchema,
    allows_null,
    inline_refs,
    is_recursive,
    map_subschemas,
    resolve_ref,
)

__all__ = [
    "JSONSchema",
    "allows_null",
    "clean_schema",
    "drop_null_defaults",
    "resolve_ref",
]


def _strip_titles(node: JSONSchema) -> JSONSchema:
    out = map_subschemas(node, _strip_titles)
    out.pop("title", None)
    return out


def clean_schema(schema: JSONSchema) -> JSONSchema:
    """The canonical form of a parameters schema.

    Titles are removed, references inlined (unless the schema is recursive,
    where ``$defs`` stay), and the root is guaranteed to be an object schema.

    Args:
        schema: a JSON Schema as Pydantic or a user wrote it.

    Returns:
        A new schema; the input is not modified.
    """
    schema = copy.deepcopy(schema)
    if not is_recursive(schema):
        schema = inline_refs(schema)
    schema = _strip_titles(schema)
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


def _object_branch(schema: JSONSchema, root: JSONSchema) -> JSONSchema | None:
    """The object-typed schema to descend into, if there is exactly one."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        try:
            return _object_branch(resolve_ref(ref, root), root)
        except ValueError:
            return None
    if "properties" in schema:
        return schema
    for key in ("anyOf", "oneOf"):
        variants = schema.get(key)
        if isinstance(variants, list):
            branches = [
                b
                for v in variants
                if isinstance(v, dict) and (b := _object_branch(v, root)) is not None
            ]
            if len(branches) == 1:
                return branches[0]
    return None


def drop_null_defaults(value: Any, schema: JSONSchema, root: JSONSchema | None = None) -> Any:
    """Remove ``null`` given for optional properties that are not nullable.

    OpenAI strict mode requires every property and makes optional ones
    nullable, so ``null`` is how a model says "use the default" (or, for an
    optional property without a default, "not given"). Removing the key lets
    the function's own default apply instead of failing validation.

    Args:
        value: the arguments (or a nested value of them).
        schema: the schema ``value`` is meant to match.
        root: the document that ``$ref`` resolve against.

    Returns:
        ``value`` with those nulls removed (a copy where something changed).
    """
    root = root if root is not None else schema
    if isinstance(value, dict):
        branch = _object_branch(schema, root)
        if branch is None:
            return value
        props = branch.get("properties", {})
        required = branch.get("required", ())
        out: dict[str, Any] = {}
        for key, item in value.items():
            prop = props.get(key) if isinstance(props, dict) else None
            if not isinstance(prop, dict):
                out[key] = item
                continue
            optional = "default" in prop or not (isinstance(required, list) and key in required)
            if item is None and optional and not allows_null(prop, root):
                continue
            out[key] = drop_null_defaults(item, prop, root)
        return out
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            return [drop_null_defaults(v, items, root) for v in value]
    return value
