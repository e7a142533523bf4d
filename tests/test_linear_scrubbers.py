"""The other paths that read text from a model, a provider or a user with a
pattern, each fed hostile shapes at 10 KB, 100 KB and 1 MB: the operation
count grows about as fast as the input, and every run stays within a few
seconds of CPU (a quadratic one takes minutes). Those that were quadratic
are named: a rate-limit reset header of digits, a city name with a run of
spaces, and a viewer's argument replay masking its secrets (a difflib
alignment of the text with its redaction)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests._linear import assert_linear, cpu_guard
from toolwire.examples.weather import _key as city_key
from toolwire.http.bodies import scrub_body, scrub_keeping_binary
from toolwire.http.credentials import Scrubber, redact, redact_query
from toolwire.http.ratelimit import _duration
from toolwire.http.urls import redact_url, split_url, url_secrets, url_where
from toolwire.view._replay import _masked

KEY = "sk-proj-Zq81x0Yb7Kd2Lm3Np4"


def repeat(unit: str, size: int, head: str = "", tail: str = "") -> str:
    return head + unit * max((size - len(head) - len(tail)) // len(unit), 1) + tail


@pytest.mark.slow
@pytest.mark.parametrize("unit", ["1", "1.", "1m", "1.5", "m"])
def test_a_reset_header_is_read_in_linear_time(unit: str) -> None:
    assert_linear(lambda n: repeat(unit, n), _duration)


@pytest.mark.slow
@pytest.mark.parametrize(
    "make",
    [lambda n: repeat(" ", n, "a", "b"), lambda n: repeat(" ", n, "a", "city"), lambda n: "市" * n],
)
def test_a_city_name_is_read_in_linear_time(make: Callable[[int], str]) -> None:
    assert_linear(make, city_key)


@pytest.mark.slow
@pytest.mark.parametrize("unit", ["sk-abcdefgh x", "eyJ-", "a://u:p@h/x ", "token=abc "])
def test_a_replayed_argument_is_masked_in_linear_time(unit: str) -> None:
    assert_linear(lambda n: [repeat(unit, n)[i : i + 97] for i in range(0, n, 97)], _masked)
    with cpu_guard(3.0):  # a megabyte: 0.1-0.4 s; a quadratic shape takes minutes
        _masked([repeat(unit, 1_000_000)])


BODIES = {
    "members named like keys": lambda n: repeat('{"api_key": "v", "x": 1},', n, "[", "{}]"),
    "an unterminated string of escaped quotes": lambda n: repeat('\\"', n, '{"password": "'),
    "a cut body of members": lambda n: repeat('"token": "v", ', n, "{"),
    "names without values": lambda n: repeat('"key":', n, "{"),
    "quotes": lambda n: repeat('"', n, "{"),
    "spaces before a colon": lambda n: repeat(" ", n, '{"secret"', ': "v"}'),
    "deep": lambda n: repeat("[", n, "", '{"token": "v"}'),
}


@pytest.mark.slow
@pytest.mark.parametrize("shape", BODIES, ids=str)
def test_a_request_body_is_scrubbed_in_linear_time(shape: str) -> None:
    assert_linear(lambda n: BODIES[shape](n).encode(), scrub_body)


URLS: dict[str, Callable[[int], str]] = {
    "at signs": lambda n: repeat("@", n, "https://"),
    "colons and slashes": lambda n: repeat(":a/", n, "https://", "@h"),
    "a long query": lambda n: repeat("key=v;", n, "https://h/?"),
    "ampersands": lambda n: repeat("&", n, "https://h/?"),
    "hosts": lambda n: repeat("h:1,", n, "postgresql://"),
}


@pytest.mark.slow
@pytest.mark.parametrize("shape", URLS, ids=str)
@pytest.mark.parametrize("scrubber", [redact_url, url_where, url_secrets, split_url])
def test_a_url_is_scrubbed_in_linear_time(shape: str, scrubber: Callable[[str], Any]) -> None:
    assert_linear(URLS[shape], scrubber)


@pytest.mark.slow
@pytest.mark.parametrize("unit", ["k=v&", ";", "key=" + KEY + ";", "%2f"])
def test_a_query_is_scrubbed_in_linear_time(unit: str) -> None:
    assert_linear(lambda n: repeat(unit, n), lambda q: redact_query(q, [KEY]))


@pytest.mark.slow
@pytest.mark.parametrize("unit", [KEY.upper(), KEY[:-1], "sk-", "é" + KEY.lower()])
def test_known_secrets_are_found_in_any_case_in_linear_time(unit: str) -> None:
    scrubber = Scrubber([KEY])
    assert_linear(lambda n: repeat(unit, n).encode(), scrubber.scrub)
    assert_linear(lambda n: {"a": [repeat(unit, n)]}, lambda value: redact(value, [KEY]))


KEPT_BINARY = {
    "a data URL of base64 holding the key": lambda n: (
        '{"url": "data:image/png;base64,' + repeat("QUJD", n) + KEY + '"}'
    ),
    "almost base64, then a quote": lambda n: (
        '{"a": "' + repeat("QUJD", n) + '!", "k": "' + KEY + '"}'
    ),
    "many short strings": lambda n: repeat('"' + KEY + '",', n, "[", '""]'),
    "a media type that never ends": lambda n: '{"u": "data:' + repeat("a.", n) + KEY + '"}',
}


@pytest.mark.slow
@pytest.mark.parametrize("shape", KEPT_BINARY, ids=str)
def test_a_recorded_body_keeps_its_binary_data_in_linear_time(shape: str) -> None:
    scrub = Scrubber([KEY]).scrub
    assert_linear(
        lambda n: KEPT_BINARY[shape](n).encode(), lambda body: scrub_keeping_binary(body, scrub)
    )
