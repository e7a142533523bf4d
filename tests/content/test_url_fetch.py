"""A part by URL for a provider that fetches none is refused, unless made
with ``fetch``: then toolwire fetches it, within its bounds (https only,
no private address, a byte cap, a deadline, the media type checked), over
real HTTP from a loopback server (the tests allow loopback), and a run
sends and journals the bytes."""

from __future__ import annotations

import base64
import hashlib
import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import toolwire
from toolwire import Agent, ContentFetchFailed, ContentNotSupported, UrlFetch, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.content import part_from_dict
from toolwire.errors import ContentError
from toolwire.http import fetch
from toolwire.journal import SQLiteJournal
from toolwire.messages import UserMessage
from toolwire.stream.codecs import bedrock_request
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + b"fetched" * 30
B64 = base64.b64encode(PNG).decode()
LOCAL = UrlFetch(allow_http=True, allow_private=True, timeout=5)


class _Handler(http.server.BaseHTTPRequestHandler):
    release = threading.Event()

    def do_GET(self) -> None:
        path = self.path
        if path == "/slow.png":
            self.release.wait(10)  # set when the test is over
            return
        if path.startswith("/hop/"):
            self.send_response(302)
            self.send_header("location", "/hop/" + path.rsplit("/", 1)[1] + "x")
            self.end_headers()
            return
        if path == "/missing.png":
            self.send_error(404)
            return
        kind = "text/html" if path == "/page.png" else "image/png"
        body = PNG * 100 if path == "/big.png" else PNG
        self.send_response(200)
        self.send_header("content-type", kind + "; charset=binary")
        if path != "/chunked.png":
            self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    _Handler.release.clear()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        _Handler.release.set()
        server.shutdown()
        server.server_close()


def remote(url: str, policy: UrlFetch | bool = LOCAL) -> toolwire.Image:
    return toolwire.Image.from_url(url, media_type="image/png", fetch=policy)


async def test_a_part_made_with_fetch_is_fetched_as_its_bytes(site: str) -> None:
    got = await fetch.fetch_part(remote(f"{site}/chart.png"))
    assert got == toolwire.Image.from_bytes(PNG, media_type="image/png", name="chart.png")
    assert got.url is None and got.fetch is None


@pytest.mark.parametrize(
    ("path", "policy", "reason"),
    [
        ("/chart.png", UrlFetch(allow_private=True), "only https URLs are fetched"),
        ("/chart.png", UrlFetch(allow_http=True), "127.0.0.1, a loopback, private or reserved"),
        ("/big.png", UrlFetch(allow_http=True, allow_private=True, max_bytes=1000), "over 1,000"),
        ("/chunked.png", UrlFetch(allow_http=True, allow_private=True, max_bytes=100), "over 100"),
        ("/page.png", LOCAL, "the server sent text/html, not image/png"),
        ("/missing.png", LOCAL, "HTTP 404"),
        ("/hop/a", UrlFetch(allow_http=True, allow_private=True, max_redirects=2), "2 redirects"),
        ("/slow.png", UrlFetch(allow_http=True, allow_private=True, timeout=0.3), "within 0.3 s"),
    ],
)
async def test_a_fetch_past_its_bounds_is_refused_naming_why(
    site: str, path: str, policy: UrlFetch, reason: str
) -> None:
    with pytest.raises(ContentFetchFailed, match=re.escape(reason)) as got:
        await fetch.fetch_part(remote(site + path, policy))
    assert got.value.url == site + path and reason in got.value.reason


async def test_a_name_that_resolves_to_a_public_address_but_connects_to_a_private_one(
    site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # DNS rebinding: the address checked when the name resolved is not the
    # one connected to; the connected one is checked too.
    async def public(host: str, port: int) -> list[Any]:
        return [(2, 1, 6, "", ("93.184.215.14", port))]

    monkeypatch.setattr(fetch.anyio, "getaddrinfo", public)
    with pytest.raises(ContentFetchFailed, match=re.escape("at 127.0.0.1")):
        await fetch.fetch_part(remote(f"{site}/chart.png", UrlFetch(allow_http=True)))


async def test_a_url_the_provider_cannot_fetch_is_refused_unless_asked(site: str) -> None:
    plain = toolwire.Image.from_url(f"{site}/chart.png")
    with pytest.raises(ContentNotSupported, match=r"fetch=True"):
        bedrock_request.encode_request(messages=[UserMessage(content=[plain])])
    asked = remote(f"{site}/chart.png")
    with pytest.raises(ContentNotSupported, match="an agent run fetches it first"):
        bedrock_request.encode_request(messages=[UserMessage(content=[asked])])
    (message,) = await fetch.fetch_messages([UserMessage(content=["look", asked])])
    body = bedrock_request.encode_request(messages=[message])
    assert body["messages"][0]["content"][1]["image"]["source"] == {"bytes": B64}


def test_the_fetch_policy_is_checked_and_kept_in_the_journal_shape() -> None:
    part = toolwire.Image.from_url("https://example.com/a.png", fetch=True)
    assert part.fetch == UrlFetch()
    assert part.fetch.allow_private is False and part.fetch.allow_http is False
    assert part_from_dict(part.to_dict()) == part
    assert "fetch" not in toolwire.Image.from_url("https://example.com/a.png").to_dict()
    with pytest.raises(ContentError, match="UrlFetch needs"):
        UrlFetch(max_bytes=0)
    with pytest.raises(ContentError, match="only for a URL"):
        toolwire.Image(media_type="image/png", data=PNG, fetch=UrlFetch())


def _images(body: dict[str, Any]) -> list[bytes]:
    found = []
    for message in body["messages"]:
        for block in message["content"]:
            inner = block.get("toolResult", {}).get("content", [block])
            for item in inner:
                if "image" in item:
                    found.append(base64.b64decode(item["image"]["source"]["bytes"]))
    return found


async def test_a_run_fetches_prompt_and_tool_parts_and_journals_the_bytes(
    site: str, tmp_path: Path
) -> None:
    @tool(read_only=True)
    def look(page: str) -> toolwire.Image:
        """A picture of the page.

        Args:
            page: the page.
        """
        return remote(f"{site}/{page}.png")

    turns = [
        {"expect": {"images": 1}, "tool_calls": [{"name": "look", "arguments": {"page": "p"}}]},
        {"expect": {"images": 2}, "text": "seen"},
    ]
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    _, dialect, model = PROVIDERS["bedrock"]
    with EmulationServer(Scenario.from_dict({"turns": turns})) as server:
        provider = make_provider("bedrock", base_url=server.url_for(dialect), api_key="k")
        agent = Agent(provider, model=model, tools=[look], journal=journal)
        try:
            result = await agent.run(["Compare.", remote(f"{site}/chart.png")], run_id="r1")
        finally:
            await agent.aclose()
        assert result.output == "seen"
        assert _images(server.requests[-1]) == [PNG, PNG]
    # The journal holds the bytes (in its blob table), not the URL: a resume
    # sends them again.
    digest = hashlib.sha256(PNG).hexdigest()
    (prompt,) = [m for m in journal.load_run("r1").messages if m["kind"] == "user"]
    assert prompt["content"][1]["sha256"] == digest and "url" not in prompt["content"][1]
    outcome = next(e for e in journal.load_run("r1").events if e.kind == "tool_outcome")
    assert outcome.data["result"]["parts"][0]["sha256"] == digest
    assert journal.load_blob(digest) == PNG
    journal.close()


async def test_a_tool_part_that_cannot_be_fetched_is_an_error_result(site: str) -> None:
    @tool(read_only=True)
    def look() -> toolwire.Image:
        """A picture."""
        return remote(f"{site}/page.png")

    turns = [{"tool_calls": [{"name": "look", "arguments": {}}]}, {"text": "{result:look}"}]
    _, dialect, model = PROVIDERS["bedrock"]
    with EmulationServer(Scenario.from_dict({"turns": turns})) as server:
        provider = make_provider("bedrock", base_url=server.url_for(dialect), api_key="k")
        agent = Agent(provider, model=model, tools=[look], journal=False)
        try:
            result = await agent.run("Look.")
        finally:
            await agent.aclose()
    assert "could not be fetched" in str(result.output)
    assert "text/html, not image/png" in str(result.output)
