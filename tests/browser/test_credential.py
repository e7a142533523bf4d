"""The viewer's credential in real headless Chromium: another server on
another port of 127.0.0.1 is never sent it (cookies ignore ports: the
viewer's is bound to its secret root path), the viewer still works, and
``--open``'s private file takes the browser in with a one-time code."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from tests.view._support import Viewer, make_waiting, serving
from toolwire.view import COOKIE
from toolwire.view._access import new_opener

from ._cdp import Browser


@contextmanager
def recording_server() -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """Another local server, on another port: its address, and the (path,
    ``Cookie`` header) of every request it got."""
    seen: list[tuple[str, str]] = []

    class Recorder(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append((self.path, self.headers.get("cookie", "")))
            body = b"<!doctype html><title>another server</title><p>hello"
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # a request the browser gave up (its favicon)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_another_local_server_never_receives_the_viewers_cookie(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    make_waiting(path)
    with serving(path) as viewer, recording_server() as (other, seen):
        asyncio.run(_visit(viewer, other, tmp_path / "profile"))
    assert seen, "the other server was never reached"
    outside = [(p, c) for p, c in seen if not p.startswith(viewer.root + "/")]
    paths = [p for p, _ in outside if p != "/favicon.ico"]
    assert paths == ["/", "/runs/waiting-1", "/static/view.js", "/?from=page"]
    assert not any(COOKIE in cookie for _, cookie in outside), outside
    # What the cookie's path is for: under the viewer's root (which only a
    # server told it could ask for) Chromium would send it to any port.
    inside = [c for p, c in seen if p.startswith(viewer.root + "/")]
    assert inside and all(f"{COOKIE}={viewer.token}" in c for c in inside)


async def _visit(viewer: Viewer, other: str, profile: Path) -> None:
    async with Browser(profile) as browser:
        await browser.open(f"{viewer.base}/?token={viewer.token}")
        assert await browser.evaluate("location.href") == f"{viewer.base}/"
        rows = await browser.evaluate(
            "[...document.querySelectorAll('#runs tbody tr[data-run]')].map(r => r.dataset.run)"
        )
        assert rows == ["waiting-1"]  # the viewer works
        for where in ("/", "/runs/waiting-1", "/static/view.js"):
            await browser.open(other + where)
            assert await browser.evaluate("document.title") in ("another server", "")
        # A page of the other server reaching back to its own origin.
        await browser.evaluate("fetch('/?from=page').then(r => r.text())")
        # The viewer again: its cookie is still there, and still enough.
        await browser.open(f"{viewer.base}/runs/waiting-1")
        assert await browser.evaluate("document.getElementById('pending').dataset.waiting") == "1"
        await browser.open(f"{other}{viewer.root}/")  # the control: see the test


def test_open_takes_the_browser_in_with_a_one_time_code(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    make_waiting(path)
    opener = new_opener()
    with serving(path, code="one-time", code_used=opener.remove) as viewer:
        opener.write(f"{viewer.base}/?code=one-time")
        asyncio.run(_open(viewer, opener.uri, tmp_path / "profile"))
        assert not opener.path.exists()  # used, removed
    assert urlsplit(opener.uri).scheme == "file"


async def _open(viewer: Viewer, uri: str, profile: Path) -> None:
    async with Browser(profile) as browser:
        await browser.send("Page.navigate", {"url": uri})
        await browser.until(f"location.href === {viewer.base + '/'!r}", timeout=20)
        await browser.until("document.querySelectorAll('#runs tbody tr[data-run]').length === 1")
        assert await browser.evaluate("document.cookie") == ""  # HttpOnly
        # The code is dead: opening the file again gives a 401, yet the cookie stays.
        await browser.open(f"{viewer.base}/?code=one-time")
        assert "one-time code is used" in await browser.evaluate("document.body.textContent")
        await browser.open(f"{viewer.base}/runs/waiting-1")
        assert await browser.evaluate("document.getElementById('pending').dataset.waiting") == "1"
