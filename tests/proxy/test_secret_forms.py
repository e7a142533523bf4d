"""Secrets under other names and in other forms: ``Authentication``,
``X-API-Keys``, camelCase names, ``?accessToken=`` and ``?code=``; a known key
inside any header or parameter (a ``Referer``); its base64 and URL-encoded
forms; keys of 8 to 19 characters that letters touch. In cassettes, log
lines and journals alike."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from toolwire.http.credentials import (
    Scrubber,
    is_credential_name,
    redact,
    redact_headers,
    redact_query,
)
from toolwire.journal._observer import encode_record
from toolwire.testing import RecordingProxy, Scenario

from ._support import Upstream

KEY = "sk-proj-Zq81x0Yb7Kd2Lm3Np4"
SHORT = "Ab3dE5gH9k"  # 10 characters


def b64_at_every_alignment(secret: str) -> list[bytes]:
    return [base64.b64encode(prefix.encode() + secret.encode()) for prefix in ("", "u:", "us:")]


@pytest.mark.parametrize(
    "name",
    ["Authentication", "X-API-Keys", "X-AccessToken", "accessToken", "clientSecret", "xApiKey"],
)
def test_more_credential_names(name: str) -> None:
    assert is_credential_name(name)


def test_code_is_a_credential_in_a_query_only() -> None:
    assert is_credential_name("code", query=True) and not is_credential_name("x-error-code")
    query, secrets = redact_query("code=abc123xyz&state=s")
    assert query == "code=<redacted>&state=s" and set(secrets) == {"abc123xyz"}
    query, _ = redact_query("accessToken=" + KEY + "&alt=sse")
    assert query == "accessToken=<redacted>&alt=sse"


def test_a_known_key_in_any_header_or_parameter() -> None:
    headers, secrets = redact_headers(
        [
            ("x-api-key", KEY),
            ("Referer", f"https://example.com/?key={KEY}&x=1"),
            ("x-trace", base64.b64encode(f"user:{KEY}".encode()).decode()),
        ]
    )
    assert KEY in secrets
    assert all(KEY not in v for _, v in headers)
    assert headers[1] == ("Referer", "https://example.com/?key=<redacted>&x=1")
    query, _ = redact_query(f"ref={quote(KEY, safe='')}&alt=sse", [KEY])
    assert query == "ref=<redacted>&alt=sse"


@pytest.mark.parametrize("prefix", ["", "u:", "us:", "user:"])
def test_the_scrubber_finds_base64_forms_at_every_alignment(prefix: str) -> None:
    blob = base64.b64encode(prefix.encode() + KEY.encode() + b":tail")
    scrubbed = Scrubber([KEY]).scrub(b"Basic " + blob)
    assert blob not in scrubbed and b"<redacted>" in scrubbed
    urlsafe = base64.urlsafe_b64encode(prefix.encode() + KEY.encode())
    assert urlsafe not in Scrubber([KEY]).scrub(urlsafe)


def test_short_keys_touching_letters_are_redacted_in_journals() -> None:
    record = {"a": f"x{SHORT}y", "b": f"token={SHORT}", "c": "passwordword stays"}
    text = encode_record(record, [SHORT, "password"])
    assert SHORT not in text
    assert "passwordword stays" in text  # a plain word inside another stays
    assert redact({"a": f"prefix{SHORT}"}, [SHORT]) == {"a": "prefix<redacted>"}


def test_journals_hold_no_base64_form_of_a_key() -> None:
    record = {"note": [b.decode() for b in b64_at_every_alignment(KEY)]}
    text = encode_record(record, [KEY])
    for form in b64_at_every_alignment(KEY):
        assert form.decode() not in text


def test_no_key_under_any_name_or_form_in_a_cassette_or_a_log(tmp_path: Path) -> None:
    lines: list[str] = []
    headers = {
        "Authentication": f"Token {KEY}",
        "X-API-Keys": "xk-Second-Key-1234567890",
        "X-AccessToken": "at-Third-Key-0987654321",
        "Referer": f"https://app.example/?k={KEY}",
        "x-note": base64.b64encode(f"me:{KEY}".encode()).decode(),
    }
    upstream = Upstream(Scenario.builtin("quickstart"))
    with upstream:
        with RecordingProxy(upstream.base_url + "/v1", record=tmp_path, log=lines.append) as proxy:
            httpx.post(
                proxy.base_url + "/chat/completions",
                params={"accessToken": "qt-Fourth-Key-112233", "code": "oauthcode-5566778899"},
                json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                headers=headers,
            )
    secrets = [
        KEY,
        "xk-Second-Key-1234567890",
        "at-Third-Key-0987654321",
        "qt-Fourth-Key-112233",
        "oauthcode-5566778899",
    ]
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files
    for path in files:
        data = path.read_bytes()
        for secret in secrets:
            assert secret.encode() not in data, (path.name, secret)
            assert quote(secret, safe="").encode() not in data, (path.name, secret)
        for form in b64_at_every_alignment(KEY):
            assert form not in data
    for line in lines:
        assert all(secret not in line for secret in secrets)
