"""Cassettes scrubbed by reading what they record, not by a pattern alone: a
query whose parameters ``;`` separates, the credential members of a JSON
request body (nested, cut short), a form body, a key quoted in another case;
and a sidecar edited by hand replayed without a server error."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from toolwire.http.bodies import scrub_body
from toolwire.testing import CassetteServer, RecordingProxy
from toolwire.testing.cassette import Cassette, CassetteError
from toolwire.testing.serving import LoopbackServer

from ._support import SentRecorder

QUERY_KEY = "AIzaSy-semicolon-key-0123456789"
BODY_KEY = "sk-body-api-key-5f4e3d2c1b0a9988"
CLIENT_SECRET = "cs-nested-client-secret-77665544"
PIN = 918273645
HEADER_KEY = "sk-header-key-Zq81x0Yb7Kd2Lm3Np4"


class EchoingUpstream:
    """Answers 200 with the request body quoted, and the request's key in
    upper case (as an error page might print it)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        key = dict(scope["headers"]).get(b"x-api-key", b"").upper()
        answer = b'{"echo": ' + json.dumps(body.decode()).encode() + b', "key": "' + key + b'"}'
        start = {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json")],
        }
        await send(start)
        await send({"type": "http.response.body", "body": answer, "more_body": False})


def request_body() -> dict[str, object]:
    return {
        "model": "m",
        "api_key": BODY_KEY,
        "auth": {"credentials": {"client_secret": CLIENT_SECRET, "pin": PIN}},
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {
                "name": "connect",
                "parameters": {
                    "type": "object",
                    "properties": {"api_key": {"type": "string", "description": "the key"}},
                    "required": ["api_key"],
                },
            }
        ],
    }


def test_semicolon_queries_and_json_body_members_never_reach_a_cassette(tmp_path: Path) -> None:
    upstream = LoopbackServer(SentRecorder(EchoingUpstream()))
    with upstream, RecordingProxy(upstream.base_url + "/v1beta", record=tmp_path) as proxy:
        url = f"{proxy.base_url}/models/m:streamGenerateContent?alt=sse;key={QUERY_KEY}"
        sent = httpx.post(url, json=request_body(), headers={"x-api-key": HEADER_KEY})
    assert sent.status_code == 200 and BODY_KEY in sent.text  # the client got every byte
    secrets = [QUERY_KEY, BODY_KEY, CLIENT_SECRET, str(PIN), HEADER_KEY, HEADER_KEY.upper()]
    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert [p.name for p in files] == ["0001.json", "0001.response.json"]
    for path in files:
        data = path.read_text()
        for secret in secrets:
            assert secret not in data, (path.name, secret)
    recorded = json.loads((tmp_path / "0001.json").read_text())["request"]
    assert recorded["query"] == "alt=sse;key=<redacted>"
    body = recorded["body"]
    assert body["api_key"] == "<redacted>" and body["model"] == "m"
    assert body["auth"]["credentials"] == {"client_secret": "<redacted>", "pin": "<redacted>"}
    # A tool's parameter named api_key is a schema, kept as it is.
    assert body["tools"] == request_body()["tools"]

    # The same request, its secrets raw, still finds its recording.
    with CassetteServer(tmp_path) as replay:
        again = httpx.post(
            f"{replay.base_url}/models/m:streamGenerateContent?alt=sse;key=other",
            json=request_body(),
        )
        changed = httpx.post(
            f"{replay.base_url}/models/m:streamGenerateContent?alt=sse;key=other",
            json={**request_body(), "model": "n"},
        )
    assert again.status_code == 200 and BODY_KEY not in again.text
    assert changed.status_code != 200 and "body.model" in changed.text


def test_a_form_body_is_read_as_a_query(tmp_path: Path) -> None:
    upstream = LoopbackServer(SentRecorder(EchoingUpstream()))
    with upstream, RecordingProxy(upstream.base_url, record=tmp_path) as proxy:
        httpx.post(
            proxy.base_url + "/oauth/token",
            content=f"grant_type=refresh;client_secret={CLIENT_SECRET}&scope=a".encode(),
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
    data = (tmp_path / "0001.json").read_text() + (tmp_path / "0001.response.json").read_text()
    assert CLIENT_SECRET not in data
    assert "grant_type=refresh;client_secret=<redacted>&scope=a" in data


@pytest.mark.parametrize(
    ("body", "kept"),
    [
        (b'{"api_key": "K-0123456789", "x": NaN}', b'"x": NaN'),  # JSON as Python writes it
        (b'{"model": "m", "password": "K-0123456789", "cut": "abc', b'"cut": "abc'),
        (b'{"a": {"token" : 12345678901}, "b": [', b'"b": ['),
        (b"[" * 300 + b'{"secret": "K-0123456789"}' + b"]" * 300, b"[[["),
    ],
)
def test_a_body_that_does_not_parse_loses_its_credentials_all_the_same(
    body: bytes, kept: bytes
) -> None:
    scrubbed = scrub_body(body, "application/json")
    assert b"K-0123456789" not in scrubbed.body and b"12345678901" not in scrubbed.body
    assert kept in scrubbed.body and b'"<redacted>"' in scrubbed.body
    assert scrubbed.secrets and set(scrubbed.secrets) <= {"K-0123456789", "12345678901"}


def test_a_body_without_credentials_is_kept_byte_for_byte() -> None:
    body = b'{"model":"m",  "max_tokens": 10, "messages": [], "signature": "EqQBCkYI"}'
    assert scrub_body(body).body == body and scrub_body(body).secrets == ()
    assert scrub_body(b"plain text password=x").body == b"plain text password=x"


def write_sidecar(folder: Path, headers: list[list[str]]) -> None:
    folder.mkdir()
    (folder / "0001.response.json").write_bytes(b'{"ok": true}')
    meta = {
        "toolwire_cassette": 1,
        "exchange": 1,
        "dialect": None,
        "request": {"method": "POST", "path": "/x", "headers": []},
        "response": {
            "status": 200,
            "headers": [["content-type", "application/json"], *headers],
            "body_file": "0001.response.json",
            "chunks": [[12, 1.0]],
        },
    }
    (folder / "0001.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")


def test_a_header_value_latin_1_cannot_hold_is_replayed_in_utf_8(tmp_path: Path) -> None:
    folder = tmp_path / "edited"
    write_sidecar(folder, [["x-note", "日本 ☃"], ["x-city", "Zürich"], ["x-padded", "  v  "]])
    with CassetteServer(folder) as replay:
        answer = httpx.post(replay.base_url + "/x")
    assert answer.status_code == 200 and answer.json() == {"ok": True}
    raw = dict(answer.headers.raw)
    assert raw[b"x-note"] == "日本 ☃".encode()
    assert raw[b"x-city"] == "Zürich".encode("latin-1")
    assert raw[b"x-padded"] == b"v"


@pytest.mark.parametrize(
    ("header", "message"),
    [(["x-bell", "a\x07b"], "control characters"), (["ümlaut", "v"], "HTTP token")],
)
def test_a_header_that_cannot_be_sent_is_refused_at_load(
    tmp_path: Path, header: list[str], message: str
) -> None:
    folder = tmp_path / "edited"
    write_sidecar(folder, [header])
    with pytest.raises(CassetteError, match=message):
        Cassette.load(folder)
