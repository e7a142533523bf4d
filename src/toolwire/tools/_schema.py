"""JSON Schema for tool parameters: building, cleaning, dialects.

Theory of operation: a function's signature becomes a Pydantic model (one field
per parameter, aliased so that parameter names such as ``json`` or
``model_name`` never clash with Pydantic's own attributes). The model gives two
things: the validator that runs before the tool, and a JSON Schema. That schema
is cleaned once into the tool's canonical ``parameters``: titles removed (they
repeat the names and cost tokens), ``$ref`` inlined unless the model is
recursive, ``additionalProperties: false`` on objects Pydantic forbids extras in.

Each provider then gets a view of that canonical schema:

* OpenAI strict mode (:func:`to_openai_strict`) follows the rules in OpenAI's
  Structured Outputs guide: every object closed with ``additionalProperties:
  false``, every property listed in ``required`` (optional ones made nullable,
  their default stated in the description), only the supported keywords. A
  schema that cannot be expressed (free-form maps, tuples) raises
  :class:`NotStrictCompatible`, and the tool is exported non-strict.
* Gemini (:func:`to_gemini`) accepts a subset of OpenAPI 3.0: no ``$ref``, no
  ``additionalProperties``, ``nullable`` instead of null unions, string enums
  only.

Because strict mode makes optional arguments nullable, a model may send
``null`` for an argument whose default is not ``None``. :func:`drop_null_defaults`
removes such nulls before validation so the Python default applies.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

__all__ = [
    "NotStrictCompatible",
    "allows_null",
    "clean_schema",
    "drop_null_defaults",
    "resolve_ref",
    "to_gemini",
    "to_openai_strict",
]

JSONSchema = dict[str, Any]

# Keywords whose values are one sub-schema, a list of them, or a map of them.
_SCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")
_SCHEMA_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAP = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


class NotStrictCompatible(ValueError):
    """The schema uses something OpenAI strict mode cannot express."""


def _map_subschemas(node: JSONSchema, fn: Callable[[Any], Any]) -> JSONSchema:
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


def _is_recursive(root: JSONSchema) -> bool:
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


def _inline_refs(root: JSONSchema, *, max_depth: int | None = None) -> JSONSchema:
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
            merged = {**target, **_map_subschemas(siblings, lambda s: go(s, depth))}
            return merged
        # ``allOf: [{"$ref": ...}]`` is how older generators attach a description.
        all_of = node.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
            rest = {k: v for k, v in node.items() if k != "allOf"}
            return {**go(all_of[0], depth), **go(rest, depth)}
        return _map_subschemas(node, lambda s: go(s, depth))

    out = go({k: v for k, v in root.items() if k not in ("$defs", "definitions")}, 0)
    return out


def _strip_titles(node: JSONSchema) -> JSONSchema:
    out = _map_subschemas(node, _strip_titles)
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
    if not _is_recursive(schema):
        schema = _inline_refs(schema)
    schema = _strip_titles(schema)
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


# --------------------------------------------------------------------------
# null handling


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


# --------------------------------------------------------------------------
# OpenAI strict mode

# From OpenAI's Structured Outputs guide, "Supported schemas".
_STRICT_COMMON = {
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
_STRICT_BY_TYPE = {
    "string": {"pattern", "format"},
    "number": {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"},
    "integer": {"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum"},
    "array": {"minItems", "maxItems"},
}
STRICT_STRING_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
STRICT_KEYWORDS = frozenset(_STRICT_COMMON.union(*_STRICT_BY_TYPE.values()))
"""Every keyword OpenAI strict mode accepts somewhere in a schema."""

# Validation keywords that strict mode rejects but that are still worth telling
# the model: they move into the description (Pydantic still enforces them).
_DESCRIBED = {
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


def _dump_default(value: Any) -> str:
    from toolwire._json import dumps

    try:
        return dumps(value)
    except TypeError:
        return repr(value)


def _append_description(node: JSONSchema, text: str) -> None:
    desc = node.get("description")
    if desc:
        sep = " " if str(desc).rstrip().endswith((".", "!", "?", ")")) else ". "
        node["description"] = f"{str(desc).rstrip()}{sep}{text}"
    else:
        node["description"] = text


def _make_nullable(node: JSONSchema) -> JSONSchema:
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


def to_openai_strict(schema: JSONSchema) -> JSONSchema:
    """Rewrite a canonical parameters schema for OpenAI strict mode.

    Args:
        schema: a schema from :func:`clean_schema`.

    Returns:
        A new schema that follows strict-mode rules.

    Raises:
        NotStrictCompatible: the schema needs a feature strict mode lacks
            (free-form objects, ``additionalProperties`` maps, tuples, ``not``...).
    """

    def go(node: JSONSchema, path: str) -> JSONSchema:
        if not node:
            raise NotStrictCompatible(f"{path or 'root'}: an untyped value (Any)")
        node = dict(node)
        notes: list[str] = []
        if "default" in node:
            default = node.pop("default")
            if default is not None:
                notes.append(f"Default: {_dump_default(default)}.")
        for drop in ("title", "examples", "$schema", "discriminator", "readOnly", "writeOnly"):
            node.pop(drop, None)
        if "const" in node:
            node["enum"] = [node.pop("const")]
        if "oneOf" in node:
            # Pydantic's discriminated unions: anyOf accepts the same values
            # here because the variants are told apart by their tag.
            node["anyOf"] = node.pop("oneOf")
        if "allOf" in node:
            parts = node.pop("allOf")
            for part in parts:
                if isinstance(part, dict):
                    node = {**part, **node}
        for bad in ("not", "if", "then", "else", "patternProperties", "prefixItems", "contains"):
            if bad in node:
                raise NotStrictCompatible(f"{path or 'root'}: keyword {bad!r}")

        typ = node.get("type")
        types = set(typ) if isinstance(typ, list) else {typ} if isinstance(typ, str) else set()
        if "object" in types or "properties" in node:
            extra = node.get("additionalProperties")
            if extra not in (None, False):
                raise NotStrictCompatible(f"{path or 'root'}: a free-form map of values")
            props = node.get("properties")
            if not isinstance(props, dict) or (not props and path):
                raise NotStrictCompatible(f"{path or 'root'}: an object without properties")
            required = set(node.get("required", []))
            new_props: JSONSchema = {}
            for key, sub in props.items():
                converted = go(sub, f"{path}.{key}" if path else key)
                if key not in required:
                    converted = _make_nullable(converted)
                new_props[key] = converted
            node["properties"] = new_props
            node["required"] = list(new_props)
            node["additionalProperties"] = False
        if "items" in node:
            if not isinstance(node["items"], dict):
                raise NotStrictCompatible(f"{path}: tuple-style items")
            node["items"] = go(node["items"], f"{path}[]")
        elif "array" in types:
            raise NotStrictCompatible(f"{path}: an array without an item type")
        if "anyOf" in node:
            node["anyOf"] = [go(v, path) for v in node["anyOf"] if isinstance(v, dict)]
        if "$defs" in node:
            node["$defs"] = {k: go(v, f"$defs.{k}") for k, v in node["$defs"].items()}
        if not types and not any(k in node for k in ("anyOf", "$ref", "enum")):
            raise NotStrictCompatible(f"{path or 'root'}: a value without a type")

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
        if notes:
            _append_description(node, " ".join(n[:1].upper() + n[1:] for n in notes))
        return node

    return go(copy.deepcopy(schema), "")


# --------------------------------------------------------------------------
# Gemini (OpenAPI 3.0 subset)

_GEMINI_KEYS = {
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
_GEMINI_FORMATS = {"string": {"date-time", "enum"}, "number": {"float", "double"}}
_GEMINI_FORMATS["integer"] = {"int32", "int64"}


def to_gemini(schema: JSONSchema) -> JSONSchema:
    """Rewrite a canonical parameters schema for Gemini function declarations.

    Args:
        schema: a schema from :func:`clean_schema`.

    Returns:
        A new schema in the OpenAPI 3.0 subset Gemini accepts.
    """
    flat = _inline_refs(copy.deepcopy(schema), max_depth=3) if "$defs" in schema else schema

    def go(node: JSONSchema) -> JSONSchema:
        node = dict(node)
        if "const" in node:
            node["enum"] = [node.pop("const")]
        if "oneOf" in node:
            node["anyOf"] = node.pop("oneOf")
        if "allOf" in node:
            for part in node.pop("allOf"):
                if isinstance(part, dict):
                    node = {**part, **node}
        nullable = False
        typ = node.get("type")
        if isinstance(typ, list):
            non_null = [t for t in typ if t != "null"]
            nullable = len(non_null) < len(typ)
            node["type"] = non_null[0] if len(non_null) == 1 else None
            if node["type"] is None:
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
        enum = node.get("enum")
        if isinstance(enum, list):
            values = [v for v in enum if v is not None]
            if len(values) < len(enum):
                node["nullable"] = True
            if all(isinstance(v, str) for v in values):
                node["enum"] = values
                node.setdefault("type", "string")
            else:
                node.pop("enum")
                _append_description(node, "One of: " + ", ".join(_dump_default(v) for v in values))
        if "default" in node and node["default"] is None:
            node.pop("default")  # says nothing that ``nullable`` does not
        fmt = node.get("format")
        if fmt is not None and fmt not in _GEMINI_FORMATS.get(str(node.get("type")), set()):
            node.pop("format")
        if isinstance(node.get("properties"), dict):
            node["properties"] = {k: go(v) for k, v in node["properties"].items()}
        if isinstance(node.get("items"), dict):
            node["items"] = go(node["items"])
        if isinstance(node.get("anyOf"), list):
            node["anyOf"] = [go(v) for v in node["anyOf"] if isinstance(v, dict)]
        return {k: v for k, v in node.items() if k in _GEMINI_KEYS}

    return go(flat)
