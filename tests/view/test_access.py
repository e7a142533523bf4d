"""Who may use the viewer: everything under a secret root, the cookie bound
to it (so a server on another port of 127.0.0.1 is never sent it), and
``--open`` handing the browser a one-time code in a private file, never the
token on a command line."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from toolwire.journal import SQLiteJournal
from toolwire.view import COOKIE

from ._support import Made, Viewer, make_journal, serving


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Made:
    return make_journal(tmp_path_factory.mktemp("access") / "journal.sqlite3")


@pytest.fixture(scope="module")
def viewer(made: Made) -> Iterator[Viewer]:
    with serving(made.path, code="one-time-code-for-the-test") as served:
        yield served


def test_nothing_outside_the_secret_root_is_answered(viewer: Viewer) -> None:
    cookie = {"cookie": f"{COOKIE}={viewer.token}"}
    with httpx.Client(base_url=viewer.origin, timeout=10.0) as client:
        for path in ("/", "/runs/hostile-1", "/static/view.js", viewer.root + "x/"):
            outside = client.get(path, params={"token": viewer.token}, headers=cookie)
            assert outside.status_code == 404, path
            assert "set-cookie" not in outside.headers
        assert client.get(viewer.root + "/", headers=cookie).status_code == 200
        # Without its slash, the root is not where the cookie goes: sent there first.
        bare = client.get(viewer.root, params={"token": viewer.token})
        assert bare.status_code == 308
        assert bare.headers["location"] == f"{viewer.root}/?token={viewer.token}"


def test_the_root_is_random_and_every_link_stays_under_it(viewer: Viewer, made: Made) -> None:
    assert re.fullmatch(r"/[A-Za-z0-9_-]{43}", viewer.root)
    with serving(made.path) as other:
        assert other.root != viewer.root
    with viewer.client() as client:
        pages = [client.get("/").text, client.get("/runs/waiting-1").text]
    for page in pages:
        links = re.findall(r'(?:href|src|action)="([^"]*)"', page)
        outside = [link for link in links if not link.startswith(viewer.root + "/")]
        assert links and not outside, outside


def test_the_one_time_code_gives_the_cookie_once(made: Made) -> None:
    with serving(made.path, code="a-one-time-code") as viewer:
        with viewer.client(authorized=False) as client:
            first = client.get("/runs/hostile-1", params={"code": "a-one-time-code", "x": "1"})
            again = client.get("/", params={"code": "a-one-time-code"})
            wrong = client.get("/", params={"code": "é-not-it"})
        # Not a redirect: the browser came from a file, and a Strict cookie set
        # on that navigation would not go with its redirect; the page refreshes.
        assert first.status_code == 200
        target = f"{viewer.root}/runs/hostile-1?x=1"
        assert f'http-equiv=refresh content="0;url={target}"' in first.text
        assert "a-one-time-code" not in first.text
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}={viewer.token};") and f"Path={viewer.root}/" in cookie
        assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower()
        assert again.status_code == 401 and "set-cookie" not in again.headers
        assert wrong.status_code == 401


_RECORDER = """\
import json, os, stat, sys
from pathlib import Path
from urllib.parse import urlparse
out = Path(os.environ["RECORD_TO"])
opened = Path(urlparse(sys.argv[1]).path)
mode = stat.S_IMODE(opened.stat().st_mode)
folder = stat.S_IMODE(opened.parent.stat().st_mode)
out.with_suffix(".page").write_text(opened.read_text())
out.write_text(json.dumps([sys.argv[1:], mode, folder, str(opened)]))
"""


def test_open_gives_the_browser_a_private_file_and_never_the_token(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    SQLiteJournal(path).close()
    recorder = tmp_path / "browser.py"
    recorder.write_text(_RECORDER)
    launcher = tmp_path / "browser"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} {recorder} "$@"\n')
    launcher.chmod(0o700)
    record = tmp_path / "opened.txt"
    env = {**os.environ, "BROWSER": str(launcher), "RECORD_TO": str(record)}
    process = subprocess.Popen(
        [sys.executable, "-m", "toolwire", "view", "--journal", str(path), "--open"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        token = url.split("?token=")[1]
        limit = time.monotonic() + 20
        while not record.exists():
            assert time.monotonic() < limit, "the browser was not opened"
            time.sleep(0.05)
        time.sleep(0.2)
        argv, mode, folder, opened = json.loads(record.read_text())
        page = record.with_suffix(".page").read_text()
        assert len(argv) == 1 and argv[0].startswith("file:///") and token not in argv[0]
        assert mode == 0o600 and folder == 0o700
        assert token not in page
        found = re.search(r'content="0;url=(http://127\.0\.0\.1:\d+/[^"?]+/)\?code=([^"&]+)"', page)
        assert found is not None, page
        assert found[1] == url.split("?")[0]
        with httpx.Client(timeout=10.0) as client:
            first = client.get(found[1], params={"code": found[2]})
            second = client.get(found[1], params={"code": found[2]})
        assert first.status_code == 200 and f"{COOKIE}={token}" in first.headers["set-cookie"]
        assert second.status_code == 401  # dead once used
        assert not Path(opened).parent.exists()  # and its file is gone
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


def test_the_settings_repr_shows_no_root_nor_code() -> None:
    from toolwire.view import ViewSettings

    settings = ViewSettings(journal="j", token="t", port=1, root="/rootsecret", code="codesecret")
    assert "rootsecret" not in repr(settings) and "codesecret" not in repr(settings)
