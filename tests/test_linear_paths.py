"""No path is quadratic on hostile text: each is fed hostile shapes at 10 KB,
100 KB and 1 MB, and its operation count grows about as fast as the input
(and it stays within a few seconds of CPU, far above what a linear pass
takes, far below what a quadratic one does)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tests._linear import assert_linear
from toolwire.stream._jsonstream import PartialJSONParser
from toolwire.stream._repair import ArgumentsParseError, parse_arguments
from toolwire.stream.jsonio import JSONLimitError, check_depth, loads
from toolwire.tools._results import to_content, truncate
from toolwire.tools.redaction import scrub


def repeat(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * max((size - len(head) - len(tail)) // len(unit), 1) + tail


ARGUMENT_SHAPES = {
    "unterminated string of escaped quotes": lambda n: repeat('\\"', n, '{"a": "'),
    "escaped quotes then a trailing comma": lambda n: repeat('\\"', n, '{"a": "', ",}"),
    "many trailing commas": lambda n: repeat('{"a": 1,},', n, "[", "]"),
    "open brackets": lambda n: repeat("[", n),
    "brackets then a hostile string": lambda n: repeat("[", 300) + repeat('\\"', n, '"'),
    "whitespace in a fence": lambda n: repeat(" ", n, "```json", "```"),
    "fence of backticks": lambda n: repeat("`", n),
    "duplicate keys cut at the end": lambda n: repeat('"k": "v", ', n, "{", '"k": "w"'),
    "deep objects": lambda n: repeat('{"a":', n),
    "numbers at the cut": lambda n: repeat("1", n, '{"a": '),
    "long exponent": lambda n: repeat("9", n, '{"a": 1e'),
}


@pytest.mark.slow
@pytest.mark.parametrize("shape", ARGUMENT_SHAPES, ids=str)
def test_parse_arguments_is_linear(shape: str) -> None:
    def run(text: str) -> None:
        try:
            parse_arguments(text, at_end=True)
        except ArgumentsParseError:
            pass

    assert_linear(ARGUMENT_SHAPES[shape], run)


@pytest.mark.slow
@pytest.mark.parametrize(
    "make",
    [
        lambda n: repeat("[", 300) + repeat('\\"', n, '"'),
        lambda n: repeat('"\\"', n, "[" * 300),
        lambda n: repeat("[]", n),
        lambda n: repeat("[", n),
    ],
)
def test_check_depth_is_linear(make: Any) -> None:
    def run(text: str) -> None:
        try:
            check_depth(text)
        except JSONLimitError:
            pass

    assert_linear(make, run)


@pytest.mark.slow
@pytest.mark.parametrize(
    "unit", ["a.", "a-", "/a", "a1", "sk-", "token ", "A1+/", "a:", " ", "~/a.", "http://a/"]
)
def test_scrub_is_linear(unit: str) -> None:
    assert_linear(lambda n: repeat(unit, n), lambda text: scrub(text))


@pytest.mark.slow
def test_scrub_of_a_key_error_on_a_hostile_argument_is_linear() -> None:
    assert_linear(lambda n: repr(KeyError(repeat("a.", n))), lambda text: scrub(text))


@pytest.mark.slow
@pytest.mark.parametrize(
    "make",
    [
        lambda n: repeat('\\"', n, '{"a": "'),
        lambda n: repeat('{"a":', n),
        lambda n: repeat("[1,", n),
    ],
)
def test_the_incremental_parser_is_linear(make: Any) -> None:
    def run(text: str) -> None:
        parser = PartialJSONParser()
        for i in range(0, len(text), 4096):
            parser.feed(text[i : i + 4096])

    assert_linear(make, run)


def billion_laughs(levels: int) -> Any:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return yaml.safe_load("\n".join(lines))


@pytest.mark.slow
def test_a_result_is_cut_before_it_is_serialized_whole() -> None:
    """A 700-byte YAML document that expands to 9**9 strings costs no more
    than its budget."""
    value = billion_laughs(9)
    counts = assert_linear(
        lambda n: n, lambda budget: truncate(*to_content(value, budget)[:1], budget)
    )
    content, whole = to_content(value, 20_000)
    assert not whole and len(content) == 20_001
    cut, truncated = truncate(content, 20_000, whole=False)
    assert truncated and len(cut) == 20_000 and "were cut" in cut
    assert counts[-1] < 10_000_000


@pytest.mark.slow
@pytest.mark.parametrize(
    "make",
    [
        lambda n: ["x" * 10] * (n // 10),
        lambda n: {f"k{i}": i for i in range(n // 10)},
        lambda n: [[[["y"]]]] * (n // 10),
    ],
)
def test_results_larger_than_their_budget_cost_the_budget(make: Any) -> None:
    counts = assert_linear(make, lambda value: to_content(value, 5_000))
    assert counts[2] <= counts[1] * 1.2, "past the budget, the size of the value does not count"


@pytest.mark.parametrize(
    "text",
    ["[1e400]", '{"a": -1e400}', "[" + "9" * 400 + ".0]", "[1" + "0" * 310 + "e-1]"],
)
def test_a_number_too_large_for_a_float_is_refused(text: str) -> None:
    with pytest.raises(JSONLimitError, match="too large for a float"):
        loads(text)
    with pytest.raises(JSONLimitError, match="too large for a float"):
        loads(text.encode())


@pytest.mark.parametrize("text", ["[NaN]", '{"a": Infinity}', "[-Infinity]"])
def test_nan_and_infinity_are_not_json(text: str) -> None:
    with pytest.raises(ValueError, match="is not a JSON value"):
        loads(text)


def test_large_finite_numbers_stay() -> None:
    assert loads("[1e308, -1.5e-400, 123456789012345678901234567890]") == [
        1e308,
        -0.0,
        123456789012345678901234567890,
    ]


@pytest.mark.parametrize("limit", [240, 2000])
def test_scrub_redacts_a_bounded_prefix_and_cuts_no_secret_in_two(limit: int) -> None:
    secrets = " ".join(["f" * 1000] * 13 + ["AKIA" + "B" * 16] * 2000)
    out = scrub(secrets, limit=limit)
    assert "ffff" not in out and "AKIA" not in out and "BBBB" not in out
    assert out.startswith("<redacted> <redacted>") and len(out) <= limit
