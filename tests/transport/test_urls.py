"""URLs split by their structure: a password holding ``?``, ``#`` or ``@``
never shows, in two halves or whole, wherever a URL is shown (messages,
logs, free text, the journal's name); ``;`` separates query parameters."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from toolwire.http.credentials import redact_query
from toolwire.http.urls import (
    hidden_in_text,
    redact_url,
    split_url,
    strip_userinfo,
    url_secrets,
    url_where,
)
from toolwire.journal._payloads import clean_settings
from toolwire.journal._postgres import url_scrubbed
from toolwire.journal._postgres import url_where as journal_where
from toolwire.tools.redaction import redact, scrub

URL = "postgresql://u:pa?ss#word@db.internal:5432/runs"


@pytest.mark.parametrize(
    ("url", "userinfo", "host", "path", "query", "fragment"),
    [
        (URL, "u:pa?ss#word", "db.internal:5432", "/runs", None, None),
        ("postgresql://u:p@ss@/db?host=/tmp/s", "u:p@ss", "", "/db", "host=/tmp/s", None),
        ("https://host/p?email=a@b.com", "", "host", "/p", "email=a@b.com", None),
        ("https://u:ab/cd@host/db", "u:ab/cd", "host", "/db", None, None),  # a "/" too
        ("https://h1:5432,h2:5433/db?x=a@b", "", "h1:5432,h2:5433", "/db", "x=a@b", None),
        ("https://example.com/@user", "", "example.com", "/@user", None, None),
        ("https://[::1]:8080/x#f", "", "[::1]:8080", "/x", None, "f"),
        ("https://TOKEN@github.com", "TOKEN", "github.com", "", None, None),
    ],
)
def test_a_url_is_split_at_the_last_at_sign_of_its_authority(
    url: str, userinfo: str, host: str, path: str, query: str | None, fragment: str | None
) -> None:
    parts = split_url(url)
    assert (parts.userinfo, parts.host, parts.path) == (userinfo, host, path)
    assert (parts.query, parts.fragment) == (query, fragment)


def test_no_half_of_the_password_shows_anywhere() -> None:
    shown = [
        redact_url(URL),
        url_where(URL),
        journal_where(URL),
        strip_userinfo(URL)[0],
        redact(f"cannot connect to {URL}: refused"),
        scrub(f"cannot connect to {URL}: refused"),
        url_scrubbed(URL, 'connection to "u:pa?ss#word" failed, pa?ss#word'),
        url_scrubbed(URL.replace("?", "%3F").replace("#", "%23"), "pa%3Fss%23word, pa?ss#word"),
        str(clean_settings({"base_url": URL})),
    ]
    for text in shown:
        for half in ("pa", "ss", "word"):
            assert half not in text.replace("postgresql", ""), text
    assert url_where(URL) == "postgresql://db.internal:5432/runs"
    assert set(url_secrets(URL)) == {"u:pa?ss#word", "pa?ss#word"}


def test_a_semicolon_separates_query_parameters() -> None:
    assert redact_query("alt=sse;key=SECRET-1;x=1&token=SECRET-2") == (
        "alt=sse;key=<redacted>;x=1&token=<redacted>",
        ["SECRET-1", "SECRET-1", "SECRET-2", "SECRET-2"],
    )
    url = "https://g.example/v1/m:stream?alt=sse;key=SECRET-1#access_token=SECRET-3"
    assert (
        redact_url(url)
        == "https://g.example/v1/m:stream?alt=sse;key=<redacted>#access_token=<redacted>"
    )
    assert {"SECRET-1", "SECRET-3"} <= set(url_secrets(url))


def test_what_is_no_host_is_not_shown_as_one() -> None:
    # "u:pa" is no host: what could be half a password is not shown.
    assert (
        redact("see postgresql://u:pa ss@host/db") == "see postgresql://<redacted>/... ss@host/db"
    )
    assert url_where("http://HOST:PORT/v1") == "http://<redacted>/v1"


# No space, quote or angle bracket: free text ends a URL there.
passwords = st.text(
    st.sampled_from("abcXYZ019?#@:;&=%+!$()*,.~_-"), min_size=6, max_size=24
).filter(lambda p: any(c in "abcXYZ" for c in p))
hosts = st.sampled_from(["db.internal", "127.0.0.1:5432", "[::1]:5432", "", "h1:1,h2:2"])
paths = st.sampled_from(["", "/db", "/db?sslmode=require", "/v1/x?alt=sse#top"])


@settings(max_examples=examples(300))
@given(password=passwords, host=hosts, path=paths)
def test_no_password_ever_shows(password: str, host: str, path: str) -> None:
    url = f"postgresql://user:{password}@{host}{path}"
    parts = split_url(url)
    assert (parts.userinfo, parts.host) == (f"user:{password}", host)
    text = f"error: {url} refused"
    for shown in (redact_url(url), url_where(url), redact(text), url_scrubbed(url, text)):
        assert password not in shown
        assert f"user:{password}@" not in shown
    [(body, start, _)] = [span for span in hidden_in_text(text) if span[2] == ""]
    assert text[body:start] == f"user:{password}@"  # the text finder splits it alike
