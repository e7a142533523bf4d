"""``@tool``'s options are declared once, in :class:`ToolOptions`: the
decorator's keyword parameters (spelled out for type checkers and IDEs)
match that declaration exactly, the docstrings do not list them again, and
every option reaches the tool."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from pathlib import Path

import pytest

import toolwire
from toolwire.errors import UsageError
from toolwire.tools import Tool, ToolOptions, _options, _tool, tool

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _overload_options() -> list[tuple[str, str, object]]:
    """(name, annotation, default) of each keyword option of the ``@tool(...)``
    overload, as written in the source."""
    tree = ast.parse(Path(_tool.__file__).read_text(encoding="utf-8"))
    (overload,) = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and node.name == "tool"
        and any(ast.unparse(d) == "overload" for d in node.decorator_list)
        and node.args.kwonlyargs
    ]
    args = overload.args
    return [
        (arg.arg, ast.unparse(arg.annotation) if arg.annotation else "", ast.literal_eval(default))
        for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)
        if default is not None and arg.arg not in ("name", "description")
    ]


def test_the_decorator_spells_the_options_as_declared() -> None:
    declared = [(f.name, f.type, f.default) for f in dataclasses.fields(ToolOptions)]
    assert _overload_options() == declared
    assert len(declared) == 19


def test_every_option_is_documented_where_it_is_declared() -> None:
    tree = ast.parse(Path(_options.__file__).read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ToolOptions"]
    documented = {}
    for field, after in zip(cls.body, cls.body[1:], strict=False):
        if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name):
            doc = after.value.value if isinstance(after, ast.Expr) else None
            documented[field.target.id] = doc if isinstance(doc, str) else ""
    names = [f.name for f in dataclasses.fields(ToolOptions)]
    assert list(documented) == names
    assert [name for name, doc in documented.items() if len(doc) < 20] == []


def test_no_docstring_lists_the_options_again() -> None:
    names = {f.name for f in dataclasses.fields(ToolOptions)}
    for obj in (tool, Tool, Tool.from_function, Tool.from_schema):
        listed = set(re.findall(r"^\s+(\w+):", inspect.getdoc(obj) or "", re.MULTILINE))
        assert listed & names == set(), obj
    assert "::: toolwire.tools.ToolOptions" in (DOCS / "api.md").read_text(encoding="utf-8")


def test_every_option_reaches_the_tool() -> None:
    def fallback(city: str) -> str:
        return "unknown"

    given = ToolOptions(
        timeout=3.0,
        retries=1,
        retry_on=KeyError,
        fallback=fallback,
        read_only=True,
        requires_approval=True,
        external=True,
        sequential=True,
        strict=False,
        max_result_chars=99,
        idempotent=True,
        dedupe=False,
        coerce=True,
        allow_nul=True,
        freeform=False,
        anthropic_eager_input_streaming=True,
        anthropic_toolset="computer_toolset_20260801",
        accept_repaired=False,
    )
    assert {f.name: f.default for f in dataclasses.fields(ToolOptions)}.keys() == {
        f.name for f in dataclasses.fields(given)
    }

    def weather(city: str) -> str:
        """The weather of a city."""
        return city

    made = tool(**{f.name: getattr(given, f.name) for f in dataclasses.fields(given)})(weather)
    assert made.options == given
    for f in dataclasses.fields(given):
        if f.name in ("coerce", "allow_nul"):
            continue  # the argument validator's, below
        assert getattr(made, f.name) == (None if f.name == "freeform" else getattr(given, f.name))
    assert made.arguments.coerce and made.arguments.allow_nul


def test_the_defaults_resolve_on_the_tool() -> None:
    @tool(read_only=True)
    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    assert lookup.options == ToolOptions(read_only=True)
    assert (lookup.retries, lookup.accept_repaired, lookup.idempotent) == (2, True, False)
    schema_tool = Tool.from_schema(
        lambda: None, name="ping", parameters={"type": "object"}, description="Ping."
    )
    assert schema_tool.options == ToolOptions()
    assert schema_tool.retries == 0


def test_an_unknown_option_is_refused_by_name() -> None:
    with pytest.raises(UsageError, match=r"unknown tool option.*: read_onyl"):
        tool(read_onyl=True)  # type: ignore[call-overload]
    with pytest.raises(UsageError, match=r"unknown tool option.*: retires"):
        Tool.from_schema(
            lambda: None, name="ping", parameters={"type": "object"}, description="P.", retires=2
        )


def test_the_options_are_exported() -> None:
    assert toolwire.ToolOptions is ToolOptions
