"""Tool schemas: from signatures and docstrings, per provider, strict mode."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Annotated, Any, Literal, Optional

import jsonschema
import pytest
from pydantic import BaseModel, Field

import toolwire
from toolwire import Tool, ToolArgumentsInvalid, Toolbox, ToolContext, UsageError, tool
from toolwire.examples import SAMPLE_TOOLS, PaymentLedger, payment_tool
from toolwire.stream.codecs.openai_schema import strict_form, to_openai_strict
from toolwire.tools._validation import validate_instance


class Unit(str, enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Item(BaseModel):
    name: str
    qty: int = 1


class Address(BaseModel):
    """A postal address."""

    street: str
    zip_code: Optional[str] = None  # noqa: UP045 - the Optional spelling is under test


class Node(BaseModel):
    name: str
    children: list[Node] = []


def f_basic(city: str, days: int = 3) -> None:
    """Forecast.

    Args:
        city: The city.
        days: How many days.
    """


def f_literal(unit: Literal["c", "f"] = "c", verbose: bool = False, ratio: float = 0.5) -> None:
    """Units."""


def f_enum(unit: Unit = Unit.CELSIUS) -> None:
    """Enum.

    Args:
        unit: Which unit.
    """


def f_annotated(n: Annotated[int, Field(ge=1, le=10, description="From Field")]) -> None:
    """Annotated.

    Args:
        n: From the docstring (Field wins).
    """


def f_optional(
    note: Optional[str] = None,  # noqa: UP045
    tag: str | None = None,
    must: str | None = ...,  # type: ignore[assignment]
) -> None:
    """Optionals."""


def f_lists(tags: list[str], items: list[Item] | None = None) -> None:
    """Lists."""


def f_nested(address: Address, ctx: ToolContext) -> None:
    """Nested.

    Args:
        address: Where to deliver.
    """


def f_nothing() -> None:
    """No arguments."""


ITEM = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "qty": {"type": "integer", "default": 1}},
    "required": ["name"],
}

CASES: list[tuple[Callable[..., Any], dict[str, Any], list[str]]] = [
    (
        f_basic,
        {
            "city": {"type": "string", "description": "The city."},
            "days": {"type": "integer", "default": 3, "description": "How many days."},
        },
        ["city"],
    ),
    (
        f_literal,
        {
            "unit": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "verbose": {"type": "boolean", "default": False},
            "ratio": {"type": "number", "default": 0.5},
        },
        [],
    ),
    (
        f_enum,
        {
            "unit": {
                "type": "string",
                "enum": ["celsius", "fahrenheit"],
                "default": "celsius",
                "description": "Which unit.",
            }
        },
        [],
    ),
    (
        f_annotated,
        {"n": {"type": "integer", "minimum": 1, "maximum": 10, "description": "From Field"}},
        ["n"],
    ),
    (
        f_optional,
        {
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "tag": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "must": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        ["must"],
    ),
    (
        f_lists,
        {
            "tags": {"type": "array", "items": {"type": "string"}},
            "items": {
                "anyOf": [{"type": "array", "items": ITEM}, {"type": "null"}],
                "default": None,
            },
        },
        ["tags"],
    ),
    (
        f_nested,
        {
            "address": {
                "type": "object",
                "description": "Where to deliver.",
                "properties": {
                    "street": {"type": "string"},
                    "zip_code": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                },
                "required": ["street"],
            }
        },
        ["address"],
    ),
    (f_nothing, {}, []),
]


@pytest.mark.parametrize(
    ("func", "properties", "required"), CASES, ids=[c[0].__name__ for c in CASES]
)
def test_schema_from_signature(
    func: Callable[..., Any], properties: dict[str, Any], required: list[str]
) -> None:
    t = tool(func)
    assert t.name == func.__name__
    params = t.parameters
    assert params["type"] == "object"
    assert params["additionalProperties"] is False
    assert params["properties"] == properties
    assert sorted(params.get("required", [])) == sorted(required)
    assert "$defs" not in params  # references are inlined
    jsonschema.Draft202012Validator.check_schema(params)


def test_description_and_context_parameter() -> None:
    t = tool(f_nested)
    assert t.description == "Nested."
    assert t.context_param == "ctx"
    assert "ctx" not in t.parameters["properties"]
    assert t.idempotent is True  # it can use the idempotency key
    assert tool(f_basic).idempotent is False
    assert tool(f_basic).description == "Forecast."


def test_decorator_options() -> None:
    @tool(
        name="lookup",
        description="Look something up.",
        timeout=2,
        retries=4,
        read_only=True,
        requires_approval=True,
        sequential=True,
        max_result_chars=99,
        dedupe=False,
    )
    async def anything(q: str) -> str:
        return q

    assert (anything.name, anything.description) == ("lookup", "Look something up.")
    assert (anything.timeout, anything.retries, anything.max_result_chars) == (2, 4, 99)
    assert anything.read_only and anything.requires_approval and anything.sequential
    assert anything.is_async and not anything.dedupe
    # default retries: 2 for tools safe to repeat, 0 for the others
    assert tool(read_only=True)(f_basic).retries == 2
    assert tool(f_basic).retries == 0


def test_parameter_names_that_clash_with_pydantic() -> None:
    def clash(json: str, model_config: int = 1, schema: str = "x") -> None:
        """Names Pydantic reserves for itself."""

    t = tool(clash)
    assert list(t.parameters["properties"]) == ["json", "model_config", "schema"]
    assert t.validate({"json": "a", "model_config": 2}) == {
        "json": "a",
        "model_config": 2,
        "schema": "x",
    }


# ---------------------------------------------------------------------------
# OpenAI strict mode, checked by an independent implementation of its rules

ALLOWED = {
    "type", "description", "enum", "anyOf", "$ref", "$defs", "properties", "required",
    "additionalProperties", "items", "pattern", "format", "multipleOf", "maximum",
    "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems",
}  # fmt: skip


def _nullable(schema: dict[str, Any]) -> bool:
    typ = schema.get("type")
    if typ == "null" or (isinstance(typ, list) and "null" in typ):
        return True
    return any(_nullable(v) for v in schema.get("anyOf", []))


def strict_problems(schema: dict[str, Any], original: dict[str, Any] | None) -> list[str]:
    """Every way ``schema`` breaks OpenAI's strict-mode rules."""
    problems: list[str] = []

    def walk(node: dict[str, Any], orig: dict[str, Any] | None, path: str) -> None:
        for key in node:
            if key not in ALLOWED:
                problems.append(f"{path}: unsupported keyword {key}")
        if node.get("type") == "object" or "properties" in node:
            if node.get("additionalProperties") is not False:
                problems.append(f"{path}: additionalProperties is not false")
            props = node.get("properties", {})
            if sorted(node.get("required", [])) != sorted(props):
                problems.append(f"{path}: not every property is required")
            orig_props = (orig or {}).get("properties", {})
            orig_required = set((orig or {}).get("required", []))
            for name, sub in props.items():
                if name in orig_props and name not in orig_required and not _nullable(sub):
                    problems.append(f"{path}.{name}: optional but not nullable")
                walk(sub, orig_props.get(name), f"{path}.{name}")
        if isinstance(node.get("items"), dict):
            walk(node["items"], (orig or {}).get("items"), f"{path}[]")
        for i, sub in enumerate(node.get("anyOf", [])):
            orig_variants = (orig or {}).get("anyOf", [])
            walk(sub, orig_variants[i] if i < len(orig_variants) else None, f"{path}|{i}")
        for name, sub in node.get("$defs", {}).items():
            walk(sub, None, f"$defs.{name}")

    if schema.get("type") != "object":
        problems.append("root is not an object")
    walk(schema, original, "$")
    return problems


STRICT_CASES = [c[0] for c in CASES] + [f.function for f in SAMPLE_TOOLS]


@pytest.mark.parametrize("func", STRICT_CASES, ids=[f.__name__ for f in STRICT_CASES])
def test_strict_schemas_follow_openai_rules(func: Callable[..., Any]) -> None:
    t = tool(func)
    strict = strict_form(t)[0]
    assert strict is not None, strict_form(t)[1]
    assert strict_problems(strict, t.parameters) == []
    jsonschema.Draft202012Validator.check_schema(strict)


def test_strict_checker_catches_violations() -> None:
    # The checker must be able to fail, or the test above proves nothing.
    t = tool(f_basic)
    assert strict_problems(t.parameters, t.parameters) == [
        "$: not every property is required",
        "$.days: optional but not nullable",
        "$.days: unsupported keyword default",
    ]


def test_strict_moves_unsupported_constraints_into_the_description() -> None:
    def limits(name: Annotated[str, Field(min_length=2, max_length=5)], n: int = 4) -> None:
        """Limits."""

    strict = strict_form(tool(limits))[0]
    assert strict is not None
    assert strict["properties"]["name"] == {
        "type": "string",
        "description": "At least 2 characters. At most 5 characters.",
    }
    assert strict["properties"]["n"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}],
        "description": "Default: 4.",
    }


def test_strict_null_for_a_defaulted_argument_means_the_default() -> None:
    # In strict mode the model must send every key; null stands for "default".
    t = tool(f_basic)
    strict = strict_form(t)[0]
    assert strict is not None
    sent = {"city": "Paris", "days": None}
    jsonschema.validate(sent, strict)
    assert t.validate(sent) == {"city": "Paris", "days": 3}


def test_strict_null_for_an_optional_argument_without_default_means_absent() -> None:
    # Explicit schemas (MCP tools, hand-written ones) often have optional
    # properties with no default: strict mode makes them nullable, so a model
    # sends null, which must read as "not given", not fail validation.
    schema = {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["query"],
    }
    t = Tool.from_schema(lambda **kw: kw, name="search", parameters=schema)
    strict = strict_form(t)[0]
    assert strict is not None
    sent = {"query": "x", "limit": None}
    jsonschema.validate(sent, strict)
    assert t.validate(sent) == {"query": "x"}
    # A required property stays required: its null is still an error.
    with pytest.raises(toolwire.ToolArgumentsInvalid):
        t.validate({"query": None, "limit": 3})


def test_recursive_models_keep_defs_and_stay_strict() -> None:
    def tree(root: Node) -> None:
        """Walk a tree."""

    t = tool(tree)
    assert "$defs" in t.parameters
    strict = strict_form(t)[0]
    assert strict is not None
    assert strict_problems(strict, None) == []
    jsonschema.Draft202012Validator.check_schema(strict)
    value = {"root": {"name": "a", "children": [{"name": "b", "children": []}]}}
    jsonschema.validate(value, t.parameters)
    assert t.validate(value)["root"]["children"][0]["name"] == "b"
    gemini = Toolbox([t]).schemas("gemini")[0]["functionDeclarations"][0]["parameters"]
    assert "$ref" not in str(gemini) and "$defs" not in gemini


def test_free_form_maps_are_not_strict() -> None:
    def counts(values: dict[str, int]) -> None:
        """Counts."""

    t = tool(counts)
    assert strict_form(t)[0] is None
    assert strict_form(t)[1] is not None and "free-form" in strict_form(t)[1]
    with pytest.raises(UsageError, match="strict-mode"):
        tool(strict=True)(counts)
    entry = Toolbox([t]).schemas("openai-chat")[0]
    assert entry["function"]["strict"] is False
    assert entry["function"]["parameters"] == t.parameters
    with pytest.raises(UsageError, match="counts"):
        Toolbox([t]).schemas("openai-chat", strict=True)


def test_to_openai_strict_rejects_untyped_values() -> None:
    with pytest.raises(ValueError, match="Any"):
        to_openai_strict({"type": "object", "properties": {"x": {}}, "required": ["x"]})


# ---------------------------------------------------------------------------
# dialects


@pytest.fixture
def box() -> Toolbox:
    return Toolbox([*SAMPLE_TOOLS, payment_tool(PaymentLedger()), tool(f_optional)])


def test_openai_chat_shape(box: Toolbox) -> None:
    entries = box.schemas("openai-chat")
    assert [e["function"]["name"] for e in entries] == list(box.names)
    weather = entries[1]
    assert weather["type"] == "function"
    assert weather["function"]["strict"] is True
    assert weather["function"]["description"].startswith("Get the current weather")
    params = weather["function"]["parameters"]
    assert params["required"] == ["city", "unit"]
    assert params["properties"]["unit"]["anyOf"][1] == {"type": "null"}
    loose = box.schemas("openai-chat", strict=False)[1]["function"]
    assert loose["strict"] is False and loose["parameters"]["required"] == ["city"]


def test_openai_responses_shape(box: Toolbox) -> None:
    entry = box.schemas("openai-responses")[2]
    assert entry["type"] == "function" and entry["name"] == "calculator"
    assert entry["strict"] is True  # always explicit: Responses defaults it to true
    assert set(entry) == {"type", "name", "description", "parameters", "strict"}


def test_anthropic_shape(box: Toolbox) -> None:
    entry = box.schemas("anthropic-messages")[3]
    assert entry["name"] == "send_payment"
    assert entry["input_schema"] == box["send_payment"].parameters
    assert entry["input_schema"]["properties"]["amount_cents"] == {
        "type": "integer",
        "exclusiveMinimum": 0,
        "maximum": 1_000_000,
        "description": "The amount in cents, e.g. 1250 for 12.50.",
    }
    assert "ctx" not in entry["input_schema"]["properties"]


def test_gemini_shape(box: Toolbox) -> None:
    [wrapper] = box.schemas("gemini")
    decls = {d["name"]: d for d in wrapper["functionDeclarations"]}
    assert list(decls) == list(box.names)
    optional = decls["f_optional"]["parameters"]
    assert optional["properties"]["note"] == {"type": "string", "nullable": True}
    assert optional["required"] == ["must"]
    for decl in decls.values():
        text = str(decl)
        assert "additionalProperties" not in text and "anyOf" not in text
        assert "$ref" not in text and "exclusiveMinimum" not in text


def test_gemini_omits_parameters_of_a_tool_without_arguments() -> None:
    [wrapper] = Toolbox([tool(f_nothing)]).schemas("gemini")
    assert wrapper == {
        "functionDeclarations": [{"name": "f_nothing", "description": "No arguments."}]
    }
    assert Toolbox().schemas("gemini") == []


def test_unknown_dialect(box: Toolbox) -> None:
    with pytest.raises(UsageError, match="openai-chat"):
        box.schemas("cohere")


# ---------------------------------------------------------------------------
# construction errors and explicit schemas


def test_bad_definitions_are_usage_errors() -> None:
    def star(*args: int) -> None: ...

    with pytest.raises(UsageError, match=r"\*args"):
        tool(star)
    with pytest.raises(UsageError, match="invalid tool name"):
        tool(name="has space")(f_basic)
    with pytest.raises(UsageError, match="unique"):
        Toolbox([tool(f_basic), tool(name="f_basic")(f_lists)])
    with pytest.raises(UsageError, match="timeout"):
        tool(timeout=0)(f_basic)
    with pytest.raises(UsageError, match="already a tool"):
        tool(tool(f_basic))  # type: ignore[arg-type]


def test_explicit_schema_tool() -> None:
    schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 20, "title": "Query"},
            "top_k": {"type": "integer", "minimum": 1, "maximum": 20, "default": 5},
            "category": {"enum": ["api", "architecture"]},
        },
        "required": ["query"],
        "additionalProperties": False,
    }

    def search(query: str, top_k: int = 5, category: str | None = None) -> str:
        return f"{query}:{top_k}:{category}"

    t = Tool.from_schema(search, name="search_kb", parameters=schema, description="Search.")
    assert "title" not in t.parameters["properties"]["query"]
    assert t.validate({"query": "x", "top_k": None}) == {"query": "x"}
    with pytest.raises(toolwire.ToolArgumentsInvalid) as info:
        t.validate({"top_k": 50, "category": "other", "extra": 1})
    message = info.value.message
    assert "- query: required argument is missing" in message
    assert "- top_k: must be <= 20 (got 50)" in message
    assert "- category: expected one of 'api', 'architecture' (got 'other')" in message
    assert "- extra: unexpected argument" in message


@pytest.mark.parametrize(
    ("value", "schema", "expected"),
    [
        (1, {"type": "integer"}, []),
        (True, {"type": "integer"}, [("(arguments)", "expected integer (got True)")]),
        ([1, "a"], {"type": "array", "items": {"type": "integer"}},
         [("[1]", "expected integer (got 'a')")]),
        ("ab", {"type": "string", "pattern": "^a+$"},
         [("(arguments)", "must match the pattern '^a+$' (got 'ab')")]),
        (3, {"anyOf": [{"type": "string"}, {"type": "null"}]},
         [("(arguments)", "does not match any of the allowed forms (got 3)")]),
        ({"a": {"b": 1}}, {"$defs": {"B": {"type": "string"}}, "type": "object",
                            "properties": {"a": {"properties": {"b": {"$ref": "#/$defs/B"}}}}},
         [("a.b", "expected string (got 1)")]),
        (0.3, {"type": "number", "multipleOf": 0.1}, []),
    ],
)  # fmt: skip
def test_validate_instance(value: Any, schema: dict[str, Any], expected: list[Any]) -> None:
    assert validate_instance(value, schema) == expected


def test_explicit_schema_tools_are_strict_about_json_types_unless_they_coerce() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}, "flag": {"type": "boolean"}},
        "required": ["n"],
    }
    strict = Tool.from_schema(lambda **kw: kw, name="strict", parameters=schema)
    lax = Tool.from_schema(lambda **kw: kw, name="lax", parameters=schema, coerce=True)
    assert strict.validate({"n": 5, "flag": True}) == {"n": 5, "flag": True}
    for bad in ({"n": 5.0}, {"n": True}, {"n": "5"}, {"n": 5, "flag": 1}):
        with pytest.raises(ToolArgumentsInvalid):
            strict.validate(bad)
    assert lax.validate({"n": 5.0}) == {"n": 5.0}


def test_deeply_nested_arguments_are_refused_not_a_recursion_error() -> None:
    def takes(data: dict[str, Any]) -> None:
        """Anything."""

    nested: dict[str, Any] = {}
    inner = nested
    for _ in range(5_000):
        inner["x"] = {}
        inner = inner["x"]
    with pytest.raises(ToolArgumentsInvalid, match="nested more than 100 levels deep"):
        tool(takes).validate({"data": nested})
