"""The incremental JSON parser and the completion scanner, fed at every kind of split."""

from __future__ import annotations

import copy
import importlib.util
import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from tests._json_strategies import DUMP_STYLES, corpus_arguments, dump_styles, json_documents
from toolwire.errors import ToolwireError, UsageError
from toolwire.stream._jsonstream import (
    CompletionScanner,
    LazyPartial,
    PartialJSONError,
    PartialJSONParser,
)

GEN_PY = Path("/work/shared/bench/gen.py")


# -- the checker -------------------------------------------------------------


def assert_prefix_view(partial: Any, final: Any, path: str = "$") -> None:
    """Assert that ``partial`` is a prefix view of ``final``.

    Complete scalars equal the final ones (with the same type, so ``True`` is
    not ``1``); strings are prefixes; objects hold a subset of the final keys;
    arrays are prefixes whose last element may itself be partial.
    """
    if isinstance(final, dict):
        assert isinstance(partial, dict), f"{path}: {type(partial).__name__} is not an object"
        extra = set(partial) - set(final)
        assert not extra, f"{path}: keys {extra} are not in the final value"
        for key, value in partial.items():
            assert_prefix_view(value, final[key], f"{path}.{key}")
    elif isinstance(final, list):
        assert isinstance(partial, list), f"{path}: {type(partial).__name__} is not an array"
        assert len(partial) <= len(final), f"{path}: longer than the final array"
        for n, value in enumerate(partial):
            if n < len(partial) - 1:
                assert type(value) is type(final[n]), f"{path}[{n}]: type differs"
                assert value == final[n], f"{path}[{n}]: {value!r} != {final[n]!r}"
            else:
                assert_prefix_view(value, final[n], f"{path}[{n}]")
    elif isinstance(final, str):
        assert isinstance(partial, str), f"{path}: {partial!r} is not a string"
        assert final.startswith(partial), f"{path}: {partial!r} is not a prefix"
    else:
        assert type(partial) is type(final), f"{path}: {partial!r} vs {final!r}"
        assert partial == final, f"{path}: {partial!r} != {final!r}"


def test_the_checker_rejects_what_it_should() -> None:
    for partial, final in [
        ({"a": 1, "b": 2}, {"a": 1}),
        ({"a": 2}, {"a": 1}),
        ("ab", "ax"),
        ([1, 2], [1]),
        ([1, "a"], [2, "ab"]),
        (True, 1),
        (1.0, 1),
        ([], {}),
    ]:
        with pytest.raises(AssertionError):
            assert_prefix_view(partial, final)
    assert_prefix_view({"a": [1, "x"]}, {"a": [1, "xy", 3], "b": None})


# -- feeding helpers -----------------------------------------------------------


def split_at(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted(cuts), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def closing_piece(pieces: list[str]) -> int:
    """The index of the piece holding the last non-whitespace character."""
    text = "".join(pieces)
    last = len(text.rstrip(" \t\n\r")) - 1
    seen = 0
    for n, piece in enumerate(pieces):
        seen += len(piece)
        if seen > last:
            return n
    raise AssertionError("no closing piece")


def check_stream(pieces: list[str]) -> None:
    """Feed the pieces to both readers and check everything we promise about them."""
    text = "".join(pieces)
    final = json.loads(text)
    closing = closing_piece(pieces)
    parser = PartialJSONParser()
    scanner = CompletionScanner()
    # A call's partial values, read after each of its fragments.
    fragments: list[str] = []
    lazy = LazyPartial(fragments)
    assert parser.value() is None
    for n, piece in enumerate(pieces):
        parser.feed(piece)
        finished = scanner.feed(piece)
        fragments.append(piece)
        shown = lazy.partial_at(n + 1)
        assert shown == ({} if parser.value() is None else parser.value()), (n, pieces)
        assert parser.error is None, parser.error
        assert parser.complete is (n >= closing), (n, closing, pieces)
        assert finished is (n == closing), (n, closing, pieces)
        assert scanner.state == ("complete" if n >= closing else "scanning")
        partial = parser.value()
        if partial is not None or n >= closing:
            assert_prefix_view(partial, final)
    assert parser.finish() == final
    assert parser.value() == final


def check_all_ways(text: str, rng: random.Random, random_splits: int = 10) -> None:
    check_stream([text])
    check_stream(list(text))
    for _ in range(random_splits):
        cuts = rng.sample(range(1, len(text)), min(len(text) - 1, rng.randint(1, 12)))
        check_stream(split_at(text, cuts))


# -- agreement with json.loads -------------------------------------------------


@settings(max_examples=examples(150), deadline=None)
@given(value=json_documents, style=dump_styles, data=st.data())
def test_agrees_with_json_loads_at_random_splits(
    value: Any, style: dict[str, Any], data: Any
) -> None:
    text = json.dumps(value, **style) + data.draw(st.sampled_from(["", " ", "\n", " \r\n\t"]))
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12, unique=True))
    check_stream(split_at(text, [c for c in cuts if c < len(text)]))


@pytest.mark.slow
@settings(max_examples=examples(40), deadline=None)
@given(value=json_documents, style=dump_styles)
def test_agrees_with_json_loads_at_every_two_piece_split(value: Any, style: dict[str, Any]) -> None:
    text = json.dumps(value, **style)
    # Every cut for small texts; an even spread of 200 cuts for the larger ones.
    for cut in range(1, len(text), max(1, len(text) // 200)):
        check_stream([text[:cut], text[cut:]])


@pytest.mark.slow
@pytest.mark.parametrize(("name", "arguments"), corpus_arguments(), ids=lambda x: str(x)[:60])
def test_corpus_arguments_every_way(name: str, arguments: Any) -> None:
    rng = random.Random(name)
    for style in DUMP_STYLES:
        text = json.dumps(arguments, **style)
        check_all_ways(text, rng)
        for cut in range(1, len(text)):
            check_stream([text[:cut], text[cut:]])


def _load_gen() -> Any:
    spec = importlib.util.spec_from_file_location("toolwire_bench_gen", GEN_PY)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_realistic_code_heavy_arguments(seed: int) -> None:
    if not GEN_PY.exists():
        pytest.skip(f"{GEN_PY} is not available")
    gen = _load_gen()
    text = gen.make_arguments(6_000, seed)
    rng = random.Random(seed)
    pieces = gen.split_pieces(text, 6, rng)
    assert any(p.endswith("\\") for p in pieces)  # the hard case is really there
    check_stream(pieces)
    check_stream(gen.split_pieces(text, 2, rng))


# -- the hard cases, by name ---------------------------------------------------


def fed(*pieces: str) -> PartialJSONParser:
    parser = PartialJSONParser()
    for piece in pieces:
        parser.feed(piece)
    return parser


def test_split_escape() -> None:
    parser = fed('{"a":"x\\')
    assert parser.value() == {"a": "x"}
    parser.feed('ny\\"z\\')
    assert parser.value() == {"a": 'x\ny"z'}
    parser.feed('\\"}')
    assert parser.finish() == {"a": 'x\ny"z\\'}


def test_split_unicode_escape() -> None:
    text = '{"a":"\\u00e9\\u20ACz"}'
    for cut in range(1, len(text)):
        parser = fed(text[:cut])
        assert_prefix_view(parser.value(), {"a": "é€z"})
        parser.feed(text[cut:])
        assert parser.finish() == {"a": "é€z"}


def test_split_surrogate_pair() -> None:
    parser = fed('["\\ud83d')
    assert parser.value() == [""]  # half a character is never shown
    parser.feed("\\ude00")
    assert parser.value() == ["😀"]
    text = '["a\\ud83d\\ude00b\\uD834\\uDD1E\\ud800\\udc00\\udbff\\udfff"]'
    for cut in range(1, len(text)):
        assert fed(text[:cut], text[cut:]).finish() == ["a😀b𝄞\U00010000\U0010ffff"]
    check_stream(list(text))


@pytest.mark.parametrize(
    "text",
    [
        '["\\ud83d"]',
        '["\\ud83dx"]',
        '["\\ud83d\\u0041"]',
        '["\\ude00\\ud83d"]',
        '["\\ud83d\\ud83d\\ude00"]',
        '["\\ud83d\\n"]',
    ],
)
def test_lone_surrogates_agree_with_json_loads(text: str) -> None:
    for cut in range(1, len(text)):
        assert fed(text[:cut], text[cut:]).finish() == json.loads(text)


def test_split_number() -> None:
    parser = fed('{"a":12')
    assert parser.value() == {}
    parser.feed("31")
    assert parser.value() == {}
    parser.feed(',"b":-0.5e')
    assert parser.value() == {"a": 1231}
    parser.feed("+3}")
    assert parser.finish() == {"a": 1231, "b": -500.0}


def test_number_is_never_reported_early() -> None:
    text = "[1, -2.5e1, 30, 0.125, 7]"
    final = json.loads(text)
    parser = PartialJSONParser()
    for n, char in enumerate(text):
        parser.feed(char)
        shown = parser.value()
        assert shown == final[: len(shown)]
        # Every number shown was followed by its delimiter already.
        assert len(shown) == text[: n + 1].count(",") + text[: n + 1].count("]")


def test_split_literal() -> None:
    parser = fed('{"a":tr')
    assert parser.value() == {}
    parser.feed("ue")
    assert parser.value() == {"a": True}
    parser.feed(',"b":[f')
    parser.feed("als")
    assert parser.value() == {"a": True, "b": []}
    parser.feed("e,n")
    parser.feed("u")
    parser.feed("ll]}")
    assert parser.finish() == {"a": True, "b": [False, None]}


def test_key_in_progress_is_not_shown() -> None:
    parser = fed('{"first":1,"sec')
    assert parser.value() == {"first": 1}
    parser.feed('ond"')
    assert parser.value() == {"first": 1}
    parser.feed(" : ")
    assert parser.value() == {"first": 1}
    parser.feed('"')
    assert parser.value() == {"first": 1, "second": ""}
    parser.feed('v"')
    assert parser.value() == {"first": 1, "second": "v"}


def test_container_values_appear_when_they_open() -> None:
    parser = fed('{"a":')
    assert parser.value() == {}
    parser.feed("[")
    assert parser.value() == {"a": []}
    parser.feed('{"b"')
    assert parser.value() == {"a": [{}]}


def test_braces_inside_strings() -> None:
    text = '{"a": "}}]]{{[[", "b": ["]", "}"]}'
    check_all_ways(text, random.Random(1))
    scanner = CompletionScanner()
    assert not scanner.feed(text[:-1])
    assert scanner.feed(text[-1])


@pytest.mark.parametrize(
    "text",
    [
        '{"a": "x\\\\"}',  # an escaped backslash, then the real closing quote
        '{"a": "\\""}',  # an escaped quote
        '{"a": "\\\\\\"}"}',  # backslash, quote: the brace is inside the string
        '["\\\\", "\\\\\\\\", "}\\\\"]',
    ],
)
def test_escaped_backslash_before_quote(text: str) -> None:
    check_all_ways(text, random.Random(text))
    for cut in range(1, len(text)):
        check_stream([text[:cut], text[cut:]])


def test_scanner_backslash_split_at_fragment_end() -> None:
    scanner = CompletionScanner()
    assert not scanner.feed('{"a": "x\\')
    assert not scanner.feed('"}')  # escaped quote: the brace is inside the string
    assert scanner.state == "scanning"
    assert scanner.feed('"}')
    assert scanner.state == "complete"


def test_whitespace_after_completion() -> None:
    scanner = CompletionScanner()
    parser = PartialJSONParser()
    for piece, closes in [("{", False), ('"a": [] }', True), ("  \n", False), ("\t\r\n ", False)]:
        assert scanner.feed(piece) is closes
        parser.feed(piece)
    assert scanner.state == "complete"
    assert parser.complete and parser.error is None
    assert parser.finish() == {"a": []}


def test_overflow() -> None:
    scanner = CompletionScanner()
    assert not scanner.feed('{"a":1}{"b":2}')
    assert scanner.state == "overflow"
    assert not scanner.feed("}")
    assert scanner.state == "overflow"

    scanner = CompletionScanner()
    assert scanner.feed("[1] ")
    assert scanner.state == "complete"
    assert not scanner.feed(" [2]")
    assert scanner.state == "overflow"

    parser = fed('{"a":1} x')
    assert parser.error == "unexpected data after the JSON value, found 'x' at char 8"
    parser = fed('{"a":1}', ' {"b":2}')
    assert parser.error == "unexpected data after the JSON value, found '{' at char 8"
    assert parser.value() == {"a": 1}
    with pytest.raises(PartialJSONError):
        parser.finish()


@pytest.mark.parametrize(
    "text", ['```json\n{"a": 1}\n```', '"just a string"', "  \n x", "42", "null"]
)
def test_not_json(text: str) -> None:
    scanner = CompletionScanner()
    for char in text:
        assert not scanner.feed(char)
    assert scanner.state == "not_json"
    assert not scanner.feed("{}")
    assert scanner.state == "not_json"


def test_scanner_empty_until_something_arrives() -> None:
    scanner = CompletionScanner()
    assert scanner.state == "empty"
    assert not scanner.feed("")
    assert not scanner.feed(" \n\t")
    assert scanner.state == "empty"
    assert not scanner.feed(" [")
    assert scanner.state == "scanning"
    assert not scanner.feed("")
    assert scanner.feed("]")


# -- top-level scalars ---------------------------------------------------------


def test_top_level_string_is_visible_while_it_grows() -> None:
    parser = fed('"ab')
    assert parser.value() == "ab"
    parser.feed('c\\n"')
    assert parser.complete
    assert parser.finish() == "abc\n"


@pytest.mark.parametrize("text", ["12", "-0.5", "1e5", "0"])
def test_top_level_number_completes_at_finish_or_delimiter(text: str) -> None:
    parser = fed(text)
    assert not parser.complete
    assert parser.value() is None
    assert parser.finish() == json.loads(text)
    assert parser.complete
    assert fed(text, " ").complete


def test_top_level_number_is_not_incomplete_before_finish() -> None:
    # Only finish() can tell that a bare number has ended: nothing is missing.
    assert fed("12")._incomplete() == ("unexpected end of text after a number", 2)


@pytest.mark.parametrize("text", ["true", "false", "null"])
def test_top_level_literals(text: str) -> None:
    parser = fed(text[:2], text[2:])
    assert parser.complete
    assert parser.finish() == json.loads(text)


# -- invalid input -------------------------------------------------------------


# Characters a fragment in the middle of a string may hold: the plain ones
# take the shortest way, and whatever does not look printable (a no-break
# space, a line separator, a zero-width space, DEL, a lone surrogate, a
# control character) or holds an escape takes the careful one; each read in
# order must show what the parser fed the same pieces shows.
ODD_FRAGMENTS = [
    "plain",
    "é✨こん",
    "\xa0",
    "a\u2028b",
    "\u200b",
    "\x7f",
    "\ud83d",
    "\udc00x",
    "\\u00e9",
    "\\ud83d",
    "\\ud83d\\ude00",
    '\\"q',
    "\\",
    "\\n\\t",
    "\n",
    "\x1f",
    '"',
    '", "b": 1',
]


@pytest.mark.parametrize("fragment", ODD_FRAGMENTS)
@pytest.mark.parametrize("after", ["", "more", "\\u00e9", '"}'])
def test_a_fragment_read_in_order_shows_what_the_parser_shows(fragment: str, after: str) -> None:
    pieces = ['{"a": "', "x", fragment, after, "y", '"}']
    lazy = LazyPartial(list(pieces))
    for n in range(1, len(pieces) + 1):
        parser = fed(*pieces[:n])
        shown = parser.value()
        assert lazy.partial_at(n) == ({} if shown is None else shown), (n, pieces)
        assert lazy.error == parser.error, (n, pieces)


@pytest.mark.parametrize(
    ("pieces", "error", "shown"),
    [
        (
            ['{"a":1', ",}"],
            "expected a string key after ',' in object, found '}' at char 7",
            {"a": 1},
        ),
        (["[1,", "]"], "expected a value after ',' in array, found ']' at char 3", [1]),
        (["```json\n{}"], "expected a JSON value, found '`' at char 0", None),
        (['{"a" 1}'], "expected ':' after object key, found '1' at char 5", {}),
        (
            ['{"a":1 "b":2}'],
            "expected ',' or '}' after object member, found '\"' at char 7",
            {"a": 1},
        ),
        (["[1 2]"], "expected ',' or ']' after array element, found '2' at char 3", [1]),
        (["{'a': 1}"], "expected a string key or '}' in object, found \"'\" at char 1", {}),
        (['{"a":', "tx}"], "expected a value after ':' in object, found 'tx}' at char 5", {}),
        (['["ab', "\\x", '"]'], "invalid escape '\\x' in string at char 4", ["ab"]),
        (['["ab\\u12', 'zz"]'], "invalid \\u escape in string at char 4", ["ab"]),
        (['["ab\\u1z'], "invalid \\u escape in string at char 4", ["ab"]),
        (['["ab\\', '\n"]'], "invalid escape of U+000A in string at char 4", ["ab"]),
        (['["ab', "c\\", "\\", '\\x"]'], "invalid escape '\\x' in string at char 7", ["abc\\"]),
        (['["a\nb"]'], "unescaped control character U+000A in string at char 3", ["a"]),
        (['"a\tb"'], "unescaped control character U+0009 in string at char 2", "a"),
        (["[01]"], "invalid number '01' at char 1", []),
        (["[1.]"], "invalid number '1.' at char 1", []),
        (["[-", "]"], "invalid number '-' at char 1", []),
        (["[1e+", "x]"], "invalid number '1e+' at char 1", []),
        (["[NaN]"], "expected a value or ']' in array, found 'N' at char 1", []),
        (["}"], "expected a JSON value, found '}' at char 0", None),
        (['{"a": [}'], "expected a value or ']' in array, found '}' at char 7", {"a": []}),
        (['{"a": "\x01"}'], "unescaped control character U+0001 in string at char 7", {"a": ""}),
    ],
)
def test_invalid_input_is_recorded_not_raised(pieces: list[str], error: str, shown: Any) -> None:
    parser = fed(*pieces)
    assert parser.error == error
    assert parser.value() == shown
    lazy = LazyPartial(list(pieces))  # read after each piece, as a UI would
    last = [lazy.partial_at(n) for n in range(1, len(pieces) + 1)][-1]
    assert last == ({} if shown is None else shown)
    assert lazy.error == error
    assert not parser.complete
    parser.feed('"}]')  # ignored
    assert parser.error == error
    assert parser.value() == shown
    with pytest.raises(PartialJSONError) as info:
        parser.finish()
    assert str(info.value) == error
    assert isinstance(info.value, ToolwireError) and isinstance(info.value, ValueError)


def test_huge_integer_is_refused_naming_the_digit_limit() -> None:
    text = "[" + "7" * 5000 + "]"
    with pytest.raises(ValueError):
        json.loads(text)
    # Valid JSON that Python will not convert: refused for what it is.
    assert fed(text).error == "an integer of 5000 digits (more than the 4300-digit limit) at char 1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "incomplete JSON: unexpected end of text: no JSON value at char 0"),
        ('{"a": "xy', "incomplete JSON: unterminated string starting at char 6"),
        ('{"ab', "incomplete JSON: unterminated object key starting at char 1"),
        ('{"a": tr', "incomplete JSON: unexpected end of text: truncated literal 'tr' at char 8"),
        (
            '{"a": 1',
            "incomplete JSON: unexpected end of text: "
            "expected ',' or '}' after object member at char 7",
        ),
        (
            "[1, 2",
            "incomplete JSON: unexpected end of text: "
            "expected ',' or ']' after array element at char 5",
        ),
        (
            '{"a"',
            "incomplete JSON: unexpected end of text: expected ':' after object key at char 4",
        ),
        ("-", "invalid number '-' at char 0"),
        ("[1, -", "incomplete JSON: invalid number '-' at char 4"),
    ],
)
def test_finish_refuses_incomplete_input(text: str, message: str) -> None:
    parser = fed(text)
    with pytest.raises(PartialJSONError) as info:
        parser.finish()
    assert str(info.value) == message


# -- the live structure and linear cost ----------------------------------------


def test_value_is_the_live_structure() -> None:
    parser = fed('{"a": ["x')
    root = parser.value()
    parser.feed('yz", 1, {"b": "')
    assert parser.value() is root
    assert root == {"a": ["xyz", 1, {"b": ""}]}
    parser.feed('c"}]}')
    assert parser.value() is root
    assert parser.finish() is root


def test_value_after_each_piece_does_not_disturb_the_string() -> None:
    parser = PartialJSONParser()
    seen: list[str] = []
    for piece in ['{"a": "', "ab", "c\\", "n", "de", '"}']:
        parser.feed(piece)
        seen.append(parser.value().get("a", "?"))
    assert seen == ["", "ab", "abc", "abc\n", "abc\nde", "abc\nde"]
    # A kept reference to a partial string never changes (strings stay immutable).
    parser = fed('["ab')
    kept = parser.value()[0]
    parser.feed('cd"]')
    assert kept == "ab"
    assert parser.finish() == ["abcd"]


@pytest.mark.slow
@pytest.mark.timeout(60)
def test_megabyte_string_in_six_character_fragments() -> None:
    # With a copy of the string per fragment this would move about 90 GB and
    # hit the timeout; the linear parser takes a fraction of a second.
    content = "line of code = 'é' + \"x\"\\n\t" * 40_000
    text = json.dumps({"path": "big.py", "content": content}, ensure_ascii=False)
    assert len(text) > 1_000_000
    parser = PartialJSONParser()
    scanner = CompletionScanner()
    closed_at = -1
    for n, start in enumerate(range(0, len(text), 6)):
        piece = text[start : start + 6]
        parser.feed(piece)
        if scanner.feed(piece):
            closed_at = n
        parser.value()
    assert closed_at == (len(text) - 1) // 6
    assert parser.complete
    assert parser.finish() == {"path": "big.py", "content": content}


@pytest.mark.parametrize("bad", [b'{"a": 1}', None, 12, ['{"a"']])
def test_feeding_something_else_than_text_is_a_usage_error(bad: Any) -> None:
    parser = fed('{"a": "x')
    with pytest.raises(UsageError, match=r"PartialJSONParser.feed\(\) takes str, not "):
        parser.feed(bad)
    parser.feed('y"}')
    assert parser.finish() == {"a": "xy"}
    scanner = CompletionScanner()
    with pytest.raises(UsageError, match=r"CompletionScanner.feed\(\) takes str, not "):
        scanner.feed(bad)
    assert scanner.state == "empty"


@pytest.mark.parametrize(
    ("pieces", "final"),
    [
        (['["ab', "\\ud83d", "\\ude00", 'x"]'], ["ab😀x"]),  # a pair cut between pieces
        (['["ab', "\\ud83d", 'x"]'], ["ab\ud83dx"]),  # a lone surrogate, as json.loads keeps it
        (['["a\\', '\\"]'], ["a\\"]),  # a backslash escaped across pieces
        (['["a\\\\', '"]'], ["a\\"]),  # an escaped backslash ending a piece
        (['["a\\\\\\', '""]'], ['a\\"']),  # and one cut after it
        (['["a\\u00', 'e9"]'], ["aé"]),
        (['["a', 'b"', ',"c"]'], ["ab", "c"]),  # the string ends inside a piece
    ],
)
def test_partial_after_each_piece_ends_at_the_value(pieces: list[str], final: Any) -> None:
    lazy = LazyPartial(list(pieces))
    shown = [copy.deepcopy(lazy.partial_at(n)) for n in range(1, len(pieces) + 1)]
    assert shown[-1] == final == json.loads("".join(pieces))
    for partial in shown:
        assert_prefix_view(partial, final)


def test_lazy_partial_recurring_escaped_fragments_read_alike() -> None:
    # Short escaped fragments are remembered once decoded; a recurring one (a
    # cut escape included) must read the same in another call's parser.
    text = json.dumps({"content": 'a\n\t"b\\c' * 3 + "\u00e9\\"})
    fragments = [text[i : i + 3] for i in range(0, len(text), 3)]
    for _ in range(2):
        lazy = LazyPartial(fragments)
        for mark in range(1, len(fragments) + 1):
            value = lazy.partial_at(mark)
            assert value == {} or json.loads(text)["content"].startswith(value.get("content", ""))
        assert value == json.loads(text)
