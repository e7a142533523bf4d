"""Redaction costs time linear in its text, whatever the text, and 1 MB of
hostile text in under a second of CPU.

Hostile text is one short unit repeated: units made of the pieces the
patterns look for (``eyJ``, ``sk-``, ``://``, ``@``, ``password=``, quotes,
separators...), chosen by Hypothesis, and the shapes that were quadratic
(``eyJ-eyJ-...``: every ``eyJ`` read the rest of the run again). Operation
counts show the growth of the work done in Python (one span per match); the
CPU guard bounds the work done inside the regular expression engine, which
no count sees. What redaction hides is checked too: the secrets placed in
hostile text never come out, and the spans it reports are what it replaces.
"""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from tests._linear import assert_linear, cpu_guard
from toolwire.tools.redaction import hidden_spans, redact, scrub, traceback_text

MB = 1_000_000

PIECES = [
    "eyJ", "-", "_", ".", "sk-", "AKIA", "ghp_", "xoxb-", "Bearer ", "basic ", "token",
    "api_key", "password", "=", ":", '"', "'", " ", "\n", "a", "Z", "0", "f", "://", "http",
    "@", "?", "#", "/", ";", "&", ",", "~", "+", "<", "\\", "C:\\", "é", "\ud800", "[::1]",
]  # fmt: skip
"""What the patterns look for, and what ends their runs."""

units = st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join)

SHAPES = [
    "eyJ-",
    "eyJ_",
    "eyJa.eyJb-",
    "a-eyJ",
    "sk-",
    "token ",
    'password="',
    "a://b:c/d@ ",
    "a://b@c?d#e ",
    "1://a ",
    "0123456789abcdef",
    "A1+/",
]
"""Shapes that were quadratic, or that make the most spans."""


def repeat(unit: str, size: int) -> str:
    return unit * max(size // len(unit), 1)


CPU_BOUND = 3.0
"""Seconds of CPU a megabyte may take: well under one, on any machine; a
quadratic shape takes minutes."""


def within_the_bound(text: str) -> None:
    with cpu_guard(CPU_BOUND):
        redact(text)


@pytest.mark.slow
@pytest.mark.parametrize("unit", SHAPES)
def test_redaction_of_a_hostile_shape_is_linear(unit: str) -> None:
    assert_linear(lambda n: repeat(unit, n), redact)
    within_the_bound(repeat(unit, MB))


@pytest.mark.slow
@settings(max_examples=examples(25))
@given(unit=units)
def test_redaction_of_any_repeated_unit_is_linear(unit: str) -> None:
    assert_linear(lambda n: repeat(unit, n), redact)
    within_the_bound(repeat(unit, MB))


@pytest.mark.slow
def test_a_320_kb_argument_in_a_traceback_costs_its_bound() -> None:
    # A tool that raises quoting its argument: only the end of the traceback
    # is kept, and only a bounded end is read.
    def failing(argument: str) -> BaseException:
        try:
            raise KeyError(argument)
        except KeyError as exc:
            return exc

    counts = assert_linear(lambda n: failing(repeat("eyJ-", n)), traceback_text)
    assert counts[2] <= counts[0] * 2, "past the bound, the size of the message does not count"
    with cpu_guard(CPU_BOUND):
        traceback_text(failing(repeat("eyJ-", 320_000)))


SECRETS = [
    "sk-live0123456789abcdef",
    "AKIAABCDEFGHIJKLMNOP",
    "ghp_0123456789abcdefXYZ",
    "eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl",
    "0123456789abcdef0123456789abcdef",
]
secrets = st.sampled_from(SECRETS)


@settings(max_examples=examples(200))
@given(before=units, secret=secrets, after=units, times=st.integers(1, 50))
def test_a_secret_inside_hostile_text_never_comes_out(
    before: str, secret: str, after: str, times: int
) -> None:
    # Separated by a space from the text around it, as a token is.
    text = before * times + " " + secret + " " + after * times
    assert secret[4:] not in redact(text)
    assert secret[4:] not in scrub(text, limit=10 * len(text))


@settings(max_examples=examples(200))
@given(text=st.lists(st.one_of(units, secrets), max_size=20).map("".join))
def test_the_hidden_spans_are_what_redaction_replaces(text: str) -> None:
    spans = hidden_spans(text)
    assert all(a <= b <= c for (a, b), (c, _) in pairwise(spans))
    assert all(0 <= start <= end <= len(text) for start, end in spans)
    ends = [0] + [end for _, end in spans]
    starts = [start for start, _ in spans] + [len(text)]
    out, at = redact(text), 0
    for piece in (text[end:start] for end, start in zip(ends, starts, strict=True)):
        found = out.find(piece, at)  # what is kept is kept, in order
        assert found >= 0
        at = found + len(piece)
