"""Arguments parsing: valid JSON as is, unambiguous repairs flagged, the rest refused clearly."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from tests._json_strategies import (
    corpus_arguments,
    dump_styles,
    json_documents_int64,
    json_values_int64,
)
from toolwire.errors import ToolwireError
from toolwire.stream._repair import ArgumentsParseError, parse_arguments

# -- rule 1: nothing means no arguments ----------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\t \r\n", "null", "  null\n"])
@pytest.mark.parametrize("at_end", [True, False])
def test_empty_and_null_mean_no_arguments(text: str, at_end: bool) -> None:
    assert parse_arguments(text, at_end=at_end) == ({}, False)


# -- rule 2: valid JSON ----------------------------------------------------------


@settings(max_examples=examples(100), deadline=None)
@given(value=json_documents_int64, style=dump_styles, at_end=st.booleans())
def test_valid_json_is_taken_as_is(value: Any, style: dict[str, Any], at_end: bool) -> None:
    assert parse_arguments(json.dumps(value, **style), at_end=at_end) == (value, False)


@pytest.mark.parametrize(("name", "arguments"), corpus_arguments(), ids=lambda x: str(x)[:60])
def test_corpus_arguments(name: str, arguments: Any) -> None:
    assert parse_arguments(json.dumps(arguments), at_end=True) == (arguments, False)
    assert parse_arguments(json.dumps(arguments, indent=2), at_end=False) == (arguments, False)


@pytest.mark.parametrize(
    ("text", "value"),
    [("[1, 2]", [1, 2]), ('"plain"', "plain"), ("3.5", 3.5), ("true", True), ('"[1]"', "[1]")],
)
def test_any_json_value_is_returned_for_the_caller_to_judge(text: str, value: Any) -> None:
    assert parse_arguments(text, at_end=True) == (value, False)


# -- rule 3: unambiguous repairs -------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"a": [1, "x"]}\n```',
        '```\n{"a": [1, "x"]}\n```',
        '  ```JSON\r\n{"a": [1, "x"]}\r\n```  \n',
        '```json {"a": [1, "x"]} ```',
        '```json\n{\n  "a": [1, "x"]\n}\n```',
    ],
)
def test_markdown_fence(text: str) -> None:
    assert parse_arguments(text, at_end=False) == ({"a": [1, "x"]}, True)


def test_markdown_fence_around_json_that_mentions_fences() -> None:
    value = {"readme": "```python\nprint(1)\n```"}
    assert parse_arguments(f"```json\n{json.dumps(value)}\n```", at_end=True) == (value, True)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1,}', {"a": 1}),
        ("[1, 2,]", [1, 2]),
        ('{"a": [1, {"b": null,},],}', {"a": [1, {"b": None}]}),
        ('{\n  "a": "x",\n}\n', {"a": "x"}),
        ("[true ,\n\t]", [True]),
        ('{"s": ",}", "t": ",]", "u": [",]",],}', {"s": ",}", "t": ",]", "u": [",]"]}),
        ('{"s": "\\",}",}', {"s": '",}'}),  # an escaped quote does not end the string
        ('```json\n{"a": 1,}\n```', {"a": 1}),
    ],
)
def test_trailing_commas_outside_strings(text: str, value: Any) -> None:
    assert parse_arguments(text, at_end=False) == (value, True)


@settings(max_examples=examples(100), deadline=None)
@given(value=json_documents_int64)
def test_trailing_commas_everywhere(value: Any) -> None:
    def dump(v: Any) -> str:
        if isinstance(v, dict):
            return "{" + "".join(f"{json.dumps(k)}: {dump(x)}, " for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "[" + "".join(f"{dump(x)},\n" for x in v) + "]"
        return json.dumps(v)

    text = dump(value)  # the same as json.dumps(value) only without non-empty containers
    assert parse_arguments(text, at_end=False) == (value, text != json.dumps(value))


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": {"b": 1}', {"a": {"b": 1}}),
        ('{"a": [1, 2', {"a": [1, 2]}),
        ('{"a": "x"', {"a": "x"}),
        ('{"a": "}"', {"a": "}"}),
        ('[{"a": true}, [null', [{"a": True}, [None]]),
        ('{"a": [1, 2,', None),  # a dangling comma: ambiguous
        ('{"a": [1, 2,]', {"a": [1, 2]}),  # a trailing comma then a missing brace
        ('{"a": 12', {"a": 12}),
        ('{"a": [', {"a": []}),
        ("{", {}),
        ('```json\n{"a": 1\n```', {"a": 1}),
    ],
)
def test_missing_closers_only_when_the_stream_really_ended(text: str, value: Any) -> None:
    if value is None:
        with pytest.raises(ArgumentsParseError):
            parse_arguments(text, at_end=True)
    else:
        assert parse_arguments(text, at_end=True) == (value, True)
    with pytest.raises(ArgumentsParseError):
        parse_arguments(text, at_end=False)


@settings(max_examples=examples(100), deadline=None)
@given(value=json_documents_int64)
def test_missing_closers_are_restored_exactly(value: Any) -> None:
    text = json.dumps(value)
    cut = text.rstrip("]}")
    if cut == text or not cut:
        return
    assert parse_arguments(cut, at_end=True) == (value, True)
    with pytest.raises(ArgumentsParseError):
        parse_arguments(cut, at_end=False)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('"{\\"a\\": 1}"', {"a": 1}),
        ('" {\\"a\\": [1, \\"x\\"]}\\n"', {"a": [1, "x"]}),
        ('```json\n"{\\"a\\": 1}"\n```', {"a": 1}),
    ],
)
def test_double_encoded_object(text: str, value: Any) -> None:
    assert parse_arguments(text, at_end=True) == (value, True)


@settings(max_examples=examples(50), deadline=None)
@given(value=st.dictionaries(st.text(max_size=5), json_values_int64, max_size=4))
def test_double_encoded_any_object(value: Any) -> None:
    assert parse_arguments(json.dumps(json.dumps(value)), at_end=False) == (value, True)


@pytest.mark.parametrize("text", ['"{not json"', '"[1, 2]"', '"{\\"a\\": 1} extra"', '"null"'])
def test_strings_that_are_not_an_encoded_object_stay_strings(text: str) -> None:
    assert parse_arguments(text, at_end=True) == (json.loads(text), False)


# -- rule 4: everything else is refused, precisely -------------------------------


@pytest.mark.parametrize(
    ("text", "at_end", "message"),
    [
        (
            '{"a": 1 "b": 2}',
            True,
            "expected ',' or '}' after object member, found '\"' at line 1 column 9 (char 8)",
        ),
        (
            '{\n  "path": "x",\n  "mode" "w"\n}',
            True,
            "expected ':' after object key, found '\"' at line 3 column 10 (char 26)",
        ),
        ('{"a": "unfinished', True, "unterminated string starting at line 1 column 7 (char 6)"),
        ('{"unfinished', True, "unterminated object key starting at line 1 column 2 (char 1)"),
        (
            '{"a"',
            True,
            "unexpected end of text: expected ':' after object key at line 1 column 5 (char 4)",
        ),
        (
            '{"a":',
            True,
            "unexpected end of text: expected a value after ':' in object "
            "at line 1 column 6 (char 5)",
        ),
        (
            '{"a": 1,',
            True,
            "unexpected end of text: expected a string key after ',' in object "
            "at line 1 column 9 (char 8)",
        ),
        (
            '{"a": tru',
            True,
            "unexpected end of text: truncated literal 'tru' at line 1 column 10 (char 9)",
        ),
        (
            '{"a": 1',
            False,
            "unexpected end of text: expected ',' or '}' after object member "
            "at line 1 column 8 (char 7)",
        ),
        (
            "{'a': 1}",
            True,
            "expected a string key or '}' in object, found \"'\" at line 1 column 2 (char 1)",
        ),
        (
            "[1,,]",
            True,
            "expected a value after ',' in array, found ',' at line 1 column 4 (char 3)",
        ),
        ("[,]", True, "expected a value or ']' in array, found ',' at line 1 column 2 (char 1)"),
        (
            "{,}",
            True,
            "expected a string key or '}' in object, found ',' at line 1 column 2 (char 1)",
        ),
        (
            '{"a":,}',
            True,
            "expected a value after ':' in object, found ',' at line 1 column 6 (char 5)",
        ),
        (
            '```json\n{"a": 1 x}\n```',
            True,
            "expected ',' or '}' after object member, found 'x' at line 2 column 9 (char 16)",
        ),
        (
            '```python\n{"a": 1}\n```',
            True,
            "expected a JSON value, found 'p' at line 1 column 4 (char 3)",
        ),
        (
            '{"a": 1}{"b": 2}',
            True,
            "unexpected data after the JSON value, found '{' at line 1 column 9 (char 8)",
        ),
        ('{"a": 01}', True, "invalid number '01' at line 1 column 7 (char 6)"),
        ("-", True, "invalid number '-' at line 1 column 1 (char 0)"),
        (
            '{"a": "x\ny"}',
            True,
            "unescaped control character U+000A in string at line 1 column 9 (char 8)",
        ),
        (
            '{"a": [1, 2}',
            True,
            "expected ',' or ']' after array element, found '}' at line 1 column 12 (char 11)",
        ),
        (
            "<tool_call>{}</tool_call>",
            True,
            "expected a JSON value, found '<' at line 1 column 1 (char 0)",
        ),
    ],
)
def test_refusals_say_what_and_where(text: str, at_end: bool, message: str) -> None:
    with pytest.raises(ArgumentsParseError) as info:
        parse_arguments(text, at_end=at_end)
    error = info.value
    assert str(error) == message
    assert isinstance(error, ValueError) and isinstance(error, ToolwireError)
    assert error.position == int(message.rsplit("char ", 1)[1].rstrip(")"))
    assert error.to_dict() == {
        "type": "arguments_parse_error",
        "message": message,
        "position": error.position,
        "line": error.line,
        "column": error.column,
    }


def test_the_raw_text_is_not_in_the_message() -> None:
    text = '{"api_key": "sk-SECRETSECRET", "path": "/etc/passwd" "mode": 1}'
    with pytest.raises(ArgumentsParseError) as info:
        parse_arguments(text, at_end=True)
    assert "SECRET" not in str(info.value)
    assert "passwd" not in str(info.value)
    assert len(str(info.value)) < 120


@pytest.mark.parametrize(
    "text",
    [
        "{'a': 1}",  # single quotes: never guessed
        "{a: 1}",  # bare keys
        '{"a": 1} trailing words',
        '{"a": "truncated',  # ends inside a string
        '{"a"',  # a dangling key
        '{"a":',  # a dangling colon
        '{"a": 1,',  # a dangling comma
        '{"a": [1, 2, ',  # a dangling comma in an array
        '{"a": tr',  # a truncated literal
        '```json\n{"a": 1}',  # an unclosed fence
        '```json\n{"a": "x\n```',  # a fence around a truncated string
        '{"a": -}',
        '{"a": -',  # an invalid number at the end
        "[1.",
        "[NaN",
    ],
)
def test_ambiguous_text_is_not_repaired(text: str) -> None:
    with pytest.raises(ArgumentsParseError):
        parse_arguments(text, at_end=True)
