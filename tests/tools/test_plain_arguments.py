"""Tools whose parameters are all plain ``str``/``bool`` take a shorter way
through validation: it must give back exactly what the full path gives, for
any arguments, and leave every refusal (and its wording) to the full path."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import Field

from tests._hypothesis import examples
from toolwire.tools import ToolContext, _arguments, tool
from toolwire.tools._arguments import Arguments, _prepare_plain, json_problems


async def weather(city: str) -> str:
    return city


async def flags(name: str, loud: bool, /, note: str) -> str:
    return name


async def with_context(city: str, ctx: ToolContext) -> str:
    return city


def _full(arguments: Arguments) -> Arguments:
    """The same validator without the shorter way."""
    other = copy.copy(arguments)
    other._plain = None
    return other


NAMES = ("city", "name", "loud", "note", "p0", "p1", "")
_text = st.lists(
    st.one_of(
        st.characters(),
        # a lone surrogate too: a JSON parser yields one for "\ud800"
        st.sampled_from(["\x00", '"', "\\", "杭", "州", "😀", "\u2028", "\ud800"]),
    ),
    max_size=8,
).map("".join)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(),  # NaN and infinities too
    _text,
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)),
    max_leaves=6,
)
_keys = st.one_of(st.sampled_from(NAMES), _text)
_pairs = st.lists(st.tuples(_keys, _values), max_size=5)


def _raw(pairs: list[tuple[str, Any]]) -> str:
    """JSON object text of ``pairs`` as written, a key possibly twice."""
    body = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in pairs)
    return "{" + body + "}"


def _agree(arguments: Arguments, value: Any, raw: str | None) -> None:
    fast = arguments.prepare(value, raw=raw)
    full = _full(arguments).prepare(value, raw=raw)
    assert fast == full
    if fast[0] is not None and full[0] is not None:
        assert list(fast[0].arguments.items()) == list(full[0].arguments.items())
        assert list(fast[0].kwargs.items()) == list(full[0].kwargs.items())


@pytest.mark.parametrize("function", [weather, flags, with_context])
@settings(max_examples=examples(100), deadline=None)
@given(pairs=_pairs, with_raw=st.booleans())
def test_the_shorter_way_agrees_with_the_full_path(
    function: Callable[..., Any], pairs: list[tuple[str, Any]], with_raw: bool
) -> None:
    arguments = tool(function).arguments
    assert arguments._plain is not None
    _agree(arguments, dict(pairs), _raw(pairs) if with_raw else None)


@pytest.mark.parametrize("function", [weather, flags, with_context])
@settings(max_examples=examples(100), deadline=None)
@given(data=st.data())
def test_well_typed_arguments_agree_with_the_full_path(
    function: Callable[..., Any], data: st.DataObject
) -> None:
    """Arguments close to right (every name given, some of the right type) reach deeper."""
    arguments = tool(function).arguments
    kinds = {"city": str, "name": str, "loud": bool, "note": str}
    names = arguments.names
    value: dict[str, Any] = {}
    for name in data.draw(st.permutations(names)):
        right = st.booleans() if kinds[name] is bool else _text
        value[name] = data.draw(st.one_of(right, right, _scalars), label=name)
    if data.draw(st.booleans(), label="extra"):
        value[data.draw(_keys, label="extra key")] = data.draw(_scalars, label="extra value")
    pairs = list(value.items())
    if pairs and data.draw(st.booleans(), label="twice"):
        pairs.append(pairs[0])
    _agree(arguments, value, _raw(pairs))
    _agree(arguments, value, None)


@pytest.mark.parametrize(
    ("value", "raw"),
    [
        ({"city": "杭州"}, '{"city": "杭州"}'),
        ({"city": "a\x00b"}, None),
        ({"city": "x"}, '{"city": "y", "city": "x"}'),
        ({"city": None}, None),
        ({"city": 1}, None),
        ({"city": "x", "extra": "y"}, None),
        ({}, None),
        ("not an object", None),
        ({"city": "\ud800"}, None),
    ],
)
def test_known_cases_agree(value: Any, raw: str | None) -> None:
    _agree(tool(weather).arguments, value, raw)


def test_the_wording_of_an_error_is_the_full_paths() -> None:
    prepared, errors = tool(weather).arguments.prepare({"city": 5})
    assert prepared is None
    assert errors == [("city", "Input should be a valid string (got 5)")]


def test_the_arguments_are_in_declaration_order() -> None:
    prepared, _ = tool(flags).arguments.prepare({"note": "n", "loud": True, "name": "x"})
    assert prepared is not None
    assert list(prepared.arguments) == ["name", "loud", "note"]
    assert prepared.args == ("x", True)
    assert prepared.kwargs == {"note": "n"}


async def _defaulted(city: str = "Paris") -> str:
    return city


async def _number(count: int) -> str:
    return str(count)


async def _constrained(city: Annotated[str, Field(max_length=3)]) -> str:
    return city


async def _optional(city: str | None) -> str:
    return str(city)


@pytest.mark.parametrize("function", [_defaulted, _number, _constrained, _optional])
def test_other_parameters_take_the_full_path(function: Callable[..., Any]) -> None:
    assert tool(function).arguments._plain is None


def test_a_tool_that_coerces_takes_the_full_path() -> None:
    arguments = tool(weather, coerce=True).arguments
    assert arguments.coerce
    _agree(arguments, {"city": "x"}, None)
    _agree(arguments, {"city": 5}, None)


def test_an_explicit_schema_takes_the_full_path() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    assert Arguments(schema)._plain is None


def test_well_typed_arguments_take_the_shorter_way() -> None:
    arguments = tool(flags).arguments
    assert arguments._plain is not None
    value = {"name": "杭州\u2028", "loud": False, "note": ""}
    assert _prepare_plain(value, arguments._plain) == arguments.prepare(value)[0]
    assert _prepare_plain({**value, "loud": 0}, arguments._plain) is None


_flat_values = st.one_of(_scalars, st.integers(), st.lists(_scalars, max_size=2))


@settings(max_examples=examples(200), deadline=None)
@given(
    pairs=st.lists(st.tuples(_text, _flat_values), max_size=5),
    with_raw=st.booleans(),
    allow_nul=st.booleans(),
)
def test_a_flat_object_is_checked_as_the_walk_checks_it(
    pairs: list[tuple[str, Any]], with_raw: bool, allow_nul: bool
) -> None:
    value = dict(pairs)
    raw = _raw(pairs) if with_raw else None
    found = json_problems(value, raw, allow_nul=allow_nul)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_arguments, "_flat_and_clean", lambda value: False)
        assert found == json_problems(value, raw, allow_nul=allow_nul)


def test_a_flat_clean_object_takes_the_shorter_way() -> None:
    assert _arguments._flat_and_clean({"a": "杭州", "b": True, "c": 3, "d": None})
    for value in ({"a": "x\x00"}, {"a\x00": 1}, {"a": 1.5}, {"a": []}, {1: "x"}, [1]):
        assert not _arguments._flat_and_clean(value)
    assert json_problems({"a": "x"}, '{"a": "y", "a": "x"}') == [
        ("(arguments)", "the key 'a' is written more than once in one object; send it once")
    ]
