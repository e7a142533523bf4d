"""The viewer of a journal in PostgreSQL: the same pages and live stream as
for a file, read from a real server (``toolwire view --journal
postgresql://...``)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from tests._postgres import PostgresServer
from toolwire.journal import PostgresJournal

from ._support import HOSTILE, Made, Viewer, make_journal, serving


@pytest.fixture(scope="module")
def made(postgres_server: PostgresServer) -> Made:
    return make_journal(postgres_server.new_database())


@pytest.fixture(scope="module")
def viewer(made: Made) -> Iterator[Viewer]:
    with serving(made.path) as served:
        yield served


def rows(page: httpx.Response) -> list[str]:
    return re.findall(r'<tr data-run="([^"]+)">', page.text)


def test_the_list_pages_filters_and_searches(viewer: Viewer) -> None:
    with viewer.client() as client:
        everything = client.get("/")
        failed = client.get("/", params={"status": "failed"})
        by_prefix = client.get("/", params={"q": "den"})
        by_model = client.get("/", params={"q": "4.1-MI"})
        literal = client.get("/", params={"q": "%"})
    assert everything.status_code == 200
    assert rows(everything) == ["waiting-1", "resumed-1", "failed-1", "denied-1", "hostile-1"]
    assert "resumed 1×" in everything.text
    assert rows(failed) == ["failed-1"]
    assert rows(by_prefix) == ["denied-1"]
    assert len(rows(by_model)) == 5  # the model, case aside
    assert "no runs" in literal.text  # % is a character, not a wildcard


def test_a_run_page_and_an_unknown_run(viewer: Viewer) -> None:
    with viewer.client() as client:
        page = client.get("/runs/hostile")  # a unique prefix is enough
        unknown = client.get("/runs/nope")
    assert page.status_code == 200
    assert re.findall(r'<section class=turn data-turn="(\d+)">', page.text) == ["1", "2"]
    assert "echo_html" in page.text and "RuntimeError" in page.text
    assert '<script>alert("pwned")' not in page.text
    assert unknown.status_code == 404


def test_the_event_stream_reads_the_records_after_a_point(viewer: Viewer, made: Made) -> None:
    assert isinstance(made.path, str)
    journal = PostgresJournal(made.path, read_only=True)
    try:
        log = journal.load_run("hostile-1")
    finally:
        journal.close()
    with viewer.client() as client:
        response = client.get("/runs/hostile-1/events", params={"after": "3"})
    records = [
        json.loads(block.split("data: ", 1)[1].splitlines()[0])
        for block in response.text.split("\n\n")
        if "event: record" in block
    ]
    assert [r["seq"] for r in records] == [e.seq for e in log.events if e.seq > 3]
    assert all(HOSTILE not in r["html"] for r in records)
    assert "event: end\ndata: answered" in response.text


def test_toolwire_view_takes_a_postgres_url(made: Made) -> None:
    assert isinstance(made.path, str)
    url = made.path.replace("postgresql://postgres@", "postgresql://postgres:hunter2@")
    process = subprocess.Popen(
        [sys.executable, "-m", "toolwire", "view", "--journal", url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        address = process.stdout.readline().strip()
        told = process.stderr.readline()
        with httpx.Client(timeout=10.0, follow_redirects=True) as client:
            page = client.get(address)
        assert page.status_code == 200 and "hostile-1" in page.text
        assert "toolwire view of postgresql://" in told and "hunter2" not in told
    finally:
        process.terminate()
        process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_a_waiting_call_is_approved_from_the_page(postgres_server: PostgresServer) -> None:
    made = make_journal(postgres_server.new_database())
    with serving(made.path, principal="alice (toolwire view)") as served, served.client() as client:
        page = client.get("/runs/waiting-1").text
        found = re.search(
            r'<form method=post action="([^"]+/approve)" class=inline>'
            r'<input type=hidden name=digest value="([^"]+)">',
            page,
        )
        assert found is not None, page
        done = client.post(
            served.origin + found[1], data={"digest": found[2]}, headers={"origin": served.origin}
        )
    assert done.status_code == 303
    assert isinstance(made.path, str)
    journal = PostgresJournal(made.path, read_only=True)
    try:
        log = journal.load_run("waiting-1")
    finally:
        journal.close()
    [approval] = [e.data for e in log.events if e.kind == "approval"]
    assert approval["principal"] == "alice (toolwire view)" and approval["digest"] == found[2]
