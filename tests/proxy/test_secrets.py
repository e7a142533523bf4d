"""No credential reaches a cassette or a log line, wherever it travelled."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import quote

import httpx
from starlette.types import Receive, Scope, Send

from toolwire.http.credentials import Scrubber, is_credential_name, redact_query
from toolwire.http.urls import strip_userinfo
from toolwire.testing import CassetteServer, RecordingProxy, Scenario
from toolwire.testing.serving import LoopbackServer

from ._support import SentRecorder, Upstream

BEARER = "sk-bearer-9f8e7d6c5b4a39281706"
X_API_KEY = "sk-ant-xapikey-1a2b3c4d5e6f7a8b"
GOOG = "AIzaSy-goog-header-0123456789abc"
AZURE = "azure-api-key-5566778899aabbcc"
GATEWAY = "pk-gateway-key-00aa11bb22cc33dd"
QUERY_KEY = "AIzaSy-query-key/with+odd=chars"
PASSWORD = "pa55word-in-the-url-4242"
ECHOED = "sk-echoed-in-both-bodies-777777"
SECRETS = [BEARER, X_API_KEY, GOOG, AZURE, GATEWAY, QUERY_KEY, PASSWORD, ECHOED]


def _forms(secret: str) -> list[bytes]:
    """The ways a secret could be written down."""
    basic = base64.b64encode(f"alice:{secret}".encode())
    return [secret.encode(), quote(secret, safe="").encode(), basic]


class EchoingUpstream:
    """An upstream that quotes the request's key back, as a gateway's 401 does:
    in a response header, and in a body sent 4 bytes at a time (so the key
    straddles chunks)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body", False):
            pass
        key = dict(scope["headers"]).get(b"authorization", b"").removeprefix(b"Bearer ")
        body = b'{"error": {"message": "Incorrect API key provided: ' + key + b'. relax."}}'
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [(b"content-type", b"application/json"), (b"x-echo", key)],
            }
        )
        for i in range(0, len(body), 4):
            await send({"type": "http.response.body", "body": body[i : i + 4], "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def test_no_key_in_any_cassette_file_or_log_line(tmp_path: Path) -> None:
    lines: list[str] = []
    request = {
        "model": "m",
        "stream": True,
        "messages": [{"role": "user", "content": f"is {ECHOED} my key? and {BEARER}?"}],
    }
    headers = {
        "Authorization": f"Bearer {BEARER}",
        "x-api-key": X_API_KEY,
        "x-goog-api-key": GOOG,
        "api-key": AZURE,
        "X-Portkey-Api-Key": GATEWAY,
        "cf-aig-authorization": ECHOED,
    }
    upstream = LoopbackServer(SentRecorder(EchoingUpstream()))
    with upstream:
        host = upstream.base_url.removeprefix("http://")
        with RecordingProxy(
            f"http://alice:{PASSWORD}@{host}/v1", record=tmp_path, log=lines.append
        ) as proxy:
            response = httpx.post(
                proxy.base_url + "/chat/completions",
                params={"key": QUERY_KEY, "alt": "sse"},
                json=request,
                headers=headers,
            )
    # The client itself got every byte, its key quoted back included.
    assert response.status_code == 401 and BEARER.encode() in response.content
    assert response.headers["x-echo"] == BEARER

    files = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert [p.name for p in files] == ["0001.json", "0001.response.json"]
    for path in files:
        data = path.read_bytes()
        for secret in SECRETS:
            for form in _forms(secret):
                assert form not in data, (path.name, secret)
    assert lines and "Incorrect API key provided: <redacted>" in lines[0]
    for line in lines:
        for secret in SECRETS:
            assert secret not in line
    sidecar = (tmp_path / "0001.json").read_text()
    assert '"query": "key=<redacted>&alt=sse"' in sidecar
    assert '["authorization", "<redacted>"]' in sidecar
    assert '["x-echo", "<redacted>"]' in sidecar
    assert "alice" not in sidecar  # the upstream is shown without userinfo
    body = (tmp_path / "0001.response.json").read_bytes()
    assert body == response.content.replace(BEARER.encode(), b"<redacted>")

    # The scrubbed cassette still replays; the query's key is matched redacted.
    redacted = {"role": "user", "content": "is <redacted> my key? and <redacted>?"}
    with CassetteServer(tmp_path) as replay:
        again = httpx.post(
            replay.base_url + "/chat/completions",
            params={"key": "another-key-entirely", "alt": "sse"},
            json={**request, "messages": [redacted]},
        )
    assert again.status_code == 401 and again.content == body


def test_a_short_dummy_key_is_redacted_where_it_is_a_credential_only(tmp_path: Path) -> None:
    scenario = Scenario.from_dict({"turns": [{"text": "x marks the spot; relax", "chunk_size": 2}]})
    body = {"model": "x", "messages": [{"role": "user", "content": "x?"}]}
    with Upstream(scenario) as upstream:
        with RecordingProxy(upstream.url_for("openai-chat"), record=tmp_path) as proxy:
            httpx.post(proxy.base_url + "/chat/completions", json=body, headers={"x-api-key": "x"})
        sent = upstream.sent
    sidecar = (tmp_path / "0001.json").read_text()
    assert '["x-api-key", "<redacted>"]' in sidecar
    assert '"model": "x"' in sidecar  # "x" elsewhere is ordinary text
    assert (tmp_path / "0001.response.json").read_bytes() == sent[0].body


def test_credential_names_are_judged_by_their_words() -> None:
    for name in (
        "Authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "apiKey",
        "access_token",
        "X-Amz-Security-Token",
        "cookie",
        "set-cookie",
        "sig",
    ):
        assert is_credential_name(name), name
    for name in (
        "x-ratelimit-remaining-tokens",
        "anthropic-ratelimit-tokens-limit",
        "content-type",
        "keep-alive",
        "x-stainless-os",
        "openai-organization",
        "alt",
    ):
        assert not is_credential_name(name), name


def test_query_and_userinfo_keep_everything_else() -> None:
    assert redact_query("alt=sse&key=abc%2Fdef&x=1") == (
        "alt=sse&key=<redacted>&x=1",
        ["abc%2Fdef", "abc/def"],
    )
    url, secrets = strip_userinfo("https://u:p%40ss@example.com:8443/v1?x=1")
    assert url == "https://example.com:8443/v1?x=1" and "p@ss" in secrets


def test_the_scrubber_finds_a_secret_across_any_split() -> None:
    secret = "sk-0123456789abcdef"
    stream = f"a{secret}b {secret[:5]} end {secret}".encode()
    expected = stream.replace(secret.encode(), b"<redacted>")
    for size in range(1, len(stream) + 1):
        scrubber = Scrubber([secret])
        out = b"".join(scrubber.feed(stream[i : i + size]) for i in range(0, len(stream), size))
        assert out + scrubber.finish() == expected, size
    # Where no chunk ends inside a possible secret, chunks pass unchanged.
    scrubber = Scrubber([secret])
    assert [scrubber.feed(b"data: 1\n\n"), scrubber.feed(b"data: 2\n\n")] == [
        b"data: 1\n\n",
        b"data: 2\n\n",
    ]
