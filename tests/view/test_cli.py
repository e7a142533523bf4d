"""``toolwire view`` as a user starts it: a subprocess that prints the URL
with its token and answers on loopback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from toolwire.journal import SQLiteJournal


def test_toolwire_view_prints_a_url_that_opens_the_list(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    SQLiteJournal(path).close()
    process = subprocess.Popen(
        [sys.executable, "-m", "toolwire", "view", "--journal", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "/?token=" in url
        with httpx.Client(timeout=10.0, follow_redirects=True) as client:
            page = client.get(url)
            assert page.status_code == 200 and "no runs" in page.text
            assert str(page.url).endswith("/")  # the token left the address
            bare = httpx.get(url.split("?")[0], timeout=10.0)
            assert bare.status_code == 401
    finally:
        process.terminate()
        process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
