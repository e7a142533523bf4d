"""JSON Schema walking, shared by the tool layer (which builds schemas) and the
codecs (which shape them for one provider): sub-schemas, local ``$ref``,
``null``. Pure functions over plain dicts; nothing is modified in place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from toolwire.stream.jsonio import dumps

__all__ = [
    "JSONSchema",
    "allows_null",
    "append_description",
    "dump_default",
    "inline_refs",
    "is_recursive",
    "map_subschemas",
    "resolve_ref",
]

JSONSchema = dict[str, Any]

# Keywords whose values are one sub-schema, a list of them, or a map of them.
_SCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_SCHEMA_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAP = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def map_subschemas(node: JSONSchema, fn: Callable[[Any], Any]) -> JSONSchema:
    """A copy of ``node`` with ``fn`` applied to each direct sub-schema."""
    out: JSONSchema = {}
    for key, value in node.items():
        if key in _SCHEMA_ONE and isinstance(value, dict):
            out[key] = fn(value)
        elif key in _SCHEMA_LIST and isinstance(value, list):
            out[key] = [fn(v) if isinstance(v, dict) else v for v in value]
        elif key in _SCHEMA_MAP and isinstance(value, dict):
            out[key] = {k: fn(v) if isinstance(v, dict) else v for k, v in value.items()}
        else:
            out[key] = value
    return out


def resolve_ref(ref: str, root: JSONSchema) -> JSONSchema:
    """The schema a local ``$ref`` (``#/$defs/Name``) points to in ``root``."""
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref are supported, got {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise ValueError(f"$ref {ref!r} does not resolve")
        node = node[part]
    if not isinstance(node, dict):
        raise ValueError(f"$ref {ref!r} does not point to a schema")
    return node


def is_recursive(root: JSONSchema) -> bool:
    """Whether some definition of ``root`` refers to itself, directly or not."""
    defs = {**root.get("definitions", {}), **root.get("$defs", {})}

    def refs_in(node: Any, acc: set[str]) -> set[str]:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                acc.add(ref.rsplit("/", 1)[-1])
            for v in node.values():
                refs_in(v, acc)
        elif isinstance(node, list):
            for v in node:
                refs_in(v, acc)
        return acc

    graph = {name: refs_in(body, set()) for name, body in defs.items()}

    def reaches(start: str, target: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == target or (nxt not in seen and reaches(nxt, target, seen | {nxt})):
                return True
        return False

    return any(reaches(name, name, {name}) for name in graph)


def inline_refs(root: JSONSchema, *, max_depth: int | None = None) -> JSONSchema:
    """Replace every local ``$ref`` by the schema it points to.

    Sibling keywords of a ``$ref`` (a field's description) win over the
    target's. With ``max_depth``, a reference nested deeper than that (only
    possible in a recursive schema) becomes a plain ``{"type": "object"}``.
    """

    def go(node: JSONSchema, depth: int) -> JSONSchema:
        ref = node.get("$ref")
        if isinstance(ref, str):
            if max_depth is not None and depth > max_depth:
                target: JSONSchema = {"type": "object"}
            else:
                target = go(resolve_ref(ref, root), depth + 1)
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            merged = {**target, **map_subschemas(siblings, lambda s: go(s, depth))}
            return merged
        # ``allOf: [{"$ref": ...}]`` is how older generators attach a description.
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
            rest = {k: v for k, v in node.items() if k != "allOf"}
            return {**go(all_of[0], depth), **go(rest, depth)}
        return map_subschemas(node, lambda s: go(s, depth))

    out = go({k: v for k, v in root.items() if k not in ("$defs", "definitions")}, 0)
    return out


def allows_null(schema: JSONSchema, root: JSONSchema | None = None) -> bool:
    """Whether ``null`` can validate against ``schema`` (a permissive reading).

    Args:
        schema: the schema to inspect.
        root: the document that ``$ref`` resolve against.
    """
    root = root if root is not None else schema
    if not schema:
        return True  # ``{}`` accepts anything
    ref = schema.get("$ref")
    if isinstance(ref, str):
        try:
            return allows_null(resolve_ref(ref, root), root)
        except ValueError:
            return False
    typ = schema.get("type")
    if typ == "null" or (isinstance(typ, list) and "null" in typ):
        return True
    if schema.get("nullable") is True:
        return True
    if "enum" in schema and None in schema["enum"]:
        return True
    if "const" in schema and schema["const"] is None:
        return True
    for key in ("anyOf", "oneOf"):
        variants = schema.get(key)
        if isinstance(variants, list) and any(
            isinstance(v, dict) and allows_null(v, root) for v in variants
        ):
            return True
    return False


def dump_default(value: Any) -> str:
    """A default value as JSON text for a description (its repr if not JSON)."""
    try:
        return dumps(value)
    except TypeError:
        return repr(value)


def append_description(node: JSONSchema, text: str) -> None:
    """Add a sentence to a schema node's description, in place."""
    desc = node.get("description")
    if desc:
        sep = " " if str(desc).rstrip().endswith((".", "!", "?", ")")) else ". "
        node["description"] = f"{str(desc).rstrip()}{sep}{text}"
    else:
        node["description"] = text
