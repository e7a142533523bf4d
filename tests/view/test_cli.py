"""``toolwire view`` as a user starts it: a subprocess that prints the URL
with its token and answers on loopback."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from toolwire.journal import SQLiteJournal

from ._support import make_waiting


@contextmanager
def toolwire_view(*args: str) -> Iterator[str]:
    """``toolwire view ARGS`` in a subprocess, and the URL it printed."""
    process = subprocess.Popen(
        [sys.executable, "-m", "toolwire", "view", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_toolwire_view_prints_a_url_that_opens_the_list(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    SQLiteJournal(path).close()
    with toolwire_view("--journal", str(path)) as url:
        assert url.startswith("http://127.0.0.1:") and "/?token=" in url
        with httpx.Client(timeout=10.0, follow_redirects=True) as client:
            page = client.get(url)
            assert page.status_code == 200 and "no runs" in page.text
            assert str(page.url).endswith("/")  # the token left the address
            bare = httpx.get(url.split("?")[0], timeout=10.0)
            assert bare.status_code == 401


def test_an_approval_given_in_toolwire_view_is_journaled_as_its_principal(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite3"
    make_waiting(path)
    with toolwire_view("--journal", str(path), "--as", "bob") as url:
        origin = "/".join(url.split("/")[:3])
        with httpx.Client(timeout=10.0, follow_redirects=True) as client:
            page = client.get(url.replace("/?", "/runs/waiting-1?")).text
            found = re.search(r'action="([^"]+/approve)" class=inline>.*?value="([^"]+)"', page)
            assert found is not None
            done = client.post(
                origin + found[1], data={"digest": found[2]}, headers={"origin": origin}
            )
            assert done.status_code == 200 and "approved</span> by bob" in done.text
    reader = SQLiteJournal(path, read_only=True)
    try:
        [approval] = [e for e in reader.load_run("waiting-1").events if e.kind == "approval"]
    finally:
        reader.close()
    assert approval.data["principal"] == "bob" and approval.data["decision"] == "allow"


def test_a_cassette_that_is_no_directory_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "toolwire",
            "view",
            "--journal",
            str(tmp_path / "j"),
            "--cassette",
            str(missing),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--cassette" in done.stderr
