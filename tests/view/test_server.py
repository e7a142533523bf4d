"""The viewer over HTTP on loopback: its pages, the live stream, its guard
(token, host, origin, methods), and that it leaves the journal as it was."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from toolwire.journal import VERSIONS, SQLiteJournal
from toolwire.view import COOKIE

from ._support import HOSTILE, SECRET, Made, Viewer, make_journal, serving


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Made:
    return make_journal(tmp_path_factory.mktemp("view") / "journal.sqlite3")


@pytest.fixture(scope="module")
def viewer(made: Made) -> Iterator[Viewer]:
    with serving(made.path) as served:
        yield served


def _files(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


def _sse(response: httpx.Response) -> list[tuple[str, str]]:
    """The (event, data) pairs of a finished event stream."""
    found = []
    for block in response.text.split("\n\n"):
        fields = dict(
            line.split(": ", 1) for line in block.splitlines() if ": " in line and line[0] != ":"
        )
        if "event" in fields:
            found.append((fields["event"], fields.get("data", "")))
    return found


def test_the_list_shows_every_run_with_its_facts(viewer: Viewer, made: Made) -> None:
    with viewer.client() as client:
        page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    rows = re.findall(r'<tr data-run="([^"]+)">', page.text)
    assert rows == ["waiting-1", "resumed-1", "failed-1", "denied-1", "hostile-1"]  # newest first
    assert 'class="status failed">failed' in page.text
    rows_html = page.text.split("<tbody>")[1].split("</tr>")
    marked = [r for r in rows_html if "waiting for approval</span>" in r]
    assert len(marked) == 1 and 'data-run="waiting-1"' in marked[0]
    assert "gpt-4.1-mini" in page.text and "resumed 1×" in page.text
    assert "bad_request" in page.text or "400" in page.text  # the failed run's error
    # The chart: a bar for each run with usage (the failed one has none).
    assert len(re.findall(r"<rect [^>]*><title>[^<]+ tokens</title>", page.text)) == 4


def test_the_list_filters_by_status_and_searches(viewer: Viewer) -> None:
    with viewer.client() as client:
        failed = client.get("/", params={"status": "failed"})
        found = client.get("/", params={"q": "den"})
        by_model = client.get("/", params={"q": "4.1-mi"})
        none = client.get("/", params={"q": "%"})
        bad = client.get("/", params={"status": "nope"})
        bad_cursor = client.get("/", params={"before": "-1"})
    assert re.findall(r'<tr data-run="([^"]+)">', failed.text) == ["failed-1"]
    assert re.findall(r'<tr data-run="([^"]+)">', found.text) == ["denied-1"]
    assert len(re.findall(r"<tr data-run=", by_model.text)) == 5
    waiting = client_get_rows(viewer, {"status": "suspended"})
    assert waiting == ["waiting-1"]
    assert "no runs" in none.text  # % is a character, not a wildcard
    assert bad.status_code == 400 and bad_cursor.status_code == 400


def client_get_rows(viewer: Viewer, params: dict[str, str]) -> list[str]:
    with viewer.client() as client:
        page = client.get("/", params=params)
    assert page.status_code == 200
    return re.findall(r'<tr data-run="([^"]+)">', page.text)


def test_every_kind_of_record_is_rendered(viewer: Viewer, made: Made) -> None:
    kinds: set[str] = set()
    with viewer.client() as client:
        for run_id in made.runs.values():
            page = client.get(f"/runs/{run_id}")
            assert page.status_code == 200, run_id
            kinds |= set(re.findall(r'<div class=event [^>]*data-kind="([a-z_]+)"', page.text))
    # Every kind, but the id of a response a provider keeps (a background
    # stream of OpenAI Responses), the providers a fallback chain tried and
    # an MCP server's tool list change and sampling, and steering, which
    # these runs do not use.
    unused = {"model_streaming", "model_attempt", "tools_changed", "model_sampled", "steer"}
    assert kinds == set(VERSIONS) - unused


def test_a_run_page_is_a_timeline_with_diffs_tracebacks_and_folds(
    viewer: Viewer, made: Made
) -> None:
    with viewer.client() as client:
        page = client.get("/runs/hostile")  # a unique prefix is enough
        denied = client.get("/runs/denied-1").text
        failed = client.get("/runs/failed-1").text
    text = page.text
    assert page.status_code == 200
    assert [m for m in re.findall(r'<section class=turn data-turn="(\d+)">', text)] == ["1", "2"]
    assert "messages sent: 1 " in text and "JSON diff" in text and "+ $[1]" in text
    assert ">traceback</summary>" in text and "RuntimeError" in text
    assert "echo_html" in text and "1 attempt(s)" in text
    kinds = re.findall(r'<rect [^>]*data-kind="([a-z-]+)"', text)
    # The waterfall: the two answers around the two calls (which end in either order).
    assert kinds[0] == kinds[3] == "model" and sorted(kinds[1:3]) == ["tool", "tool-failed"]
    assert "approval of <b>launch</b>" in denied and "deny" in denied
    assert "model failed" in failed and "run failed" in failed and "class=error" in failed


def test_hostile_content_is_escaped_and_secrets_are_hidden(viewer: Viewer, made: Made) -> None:
    with viewer.client() as client:
        pages = [client.get("/").text] + [
            client.get(f"/runs/{run_id}").text for run_id in made.runs.values()
        ]
    for page in pages:
        assert re.findall(r"<script[^>]*>", page) == [
            f'<script src="{viewer.root}/static/view.js">'
        ]
        assert "<img" not in page and "</pre><script>" not in page
        assert SECRET not in page and "VIEWERsecret" not in page
    hostile = pages[1 + list(made.runs).index("hostile")]
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in hostile
    assert "&lt;img src=x onerror=alert(1)&gt;" in hostile


def test_an_unknown_run_is_404(viewer: Viewer) -> None:
    with viewer.client() as client:
        page = client.get("/runs/<nope>")
        stream = client.get("/runs/nope/events")
    assert page.status_code == 404 and "&lt;nope&gt;" in page.text and "<nope>" not in page.text
    assert stream.status_code == 404


def test_the_event_stream_sends_the_records_after_a_point_then_the_end(
    viewer: Viewer, made: Made
) -> None:
    log = SQLiteJournal(made.path, read_only=True).load_run("hostile-1")
    with viewer.client() as client:
        response = client.get("/runs/hostile-1/events", params={"after": "3"})
        resumed = client.get("/runs/hostile-1/events", headers={"last-event-id": "8"})
    assert response.headers["content-type"].startswith("text/event-stream")
    events = _sse(response)
    records = [json.loads(data) for kind, data in events if kind == "record"]
    assert [r["seq"] for r in records] == [e.seq for e in log.events if e.seq > 3]
    assert events[-1] == ("end", "answered")
    assert all(HOSTILE not in r["html"] for r in records)
    assert [json.loads(d)["seq"] for k, d in _sse(resumed) if k == "record"] == [9, 10]


def test_a_run_in_progress_streams_until_it_ends(tmp_path: Path, made: Made) -> None:
    """Records written while the stream is open reach it, and the run's end closes it."""
    path = tmp_path / "live.sqlite3"
    writer = SQLiteJournal(path)
    writer.record_run("live-1", header='{"model": "m"}', messages=[], resumed=False)
    with serving(path, poll=0.02, deadline=10.0) as live, live.client() as client:
        with client.stream("GET", "/runs/live-1/events", params={"after": "1"}) as response:
            lines = response.iter_lines()
            writer.record_event("live-1", "model_request", '{"messages": 1, "new": 1}', turn=1)
            seen = list(_until(lines, '"seq": 2'))
            writer.record_end(
                "live-1", status="answered", summary="{}", data='{"outcome": "answered"}'
            )
            rest = list(lines)
    writer.close()
    assert any(line.startswith("data: ") and '"seq": 2' in line for line in seen)
    assert "event: end" in rest and "data: answered" in rest


def _until(lines: Iterator[str], wanted: str) -> Iterator[str]:
    for line in lines:
        yield line
        if line.startswith("data: ") and wanted in line:
            return


# -- the guard ---------------------------------------------------------------------------


def test_without_the_token_nothing_is_answered(viewer: Viewer) -> None:
    with viewer.client(authorized=False) as client:
        for path in ("/", "/runs/hostile-1", "/runs/hostile-1/events", "/static/view.js"):
            assert client.get(path).status_code == 401, path
        assert client.get("/", params={"token": "x" + viewer.token}).status_code == 401
        assert client.get("/", params={"token": "é" + viewer.token[1:]}).status_code == 401
        odd = {"cookie": f"{COOKIE}=\u00e9".encode()}
        assert client.get("/", headers=odd).status_code == 401
        wrong = {"cookie": f"{COOKIE}={viewer.token[:-1]}"}
        assert client.get("/", headers=wrong).status_code == 401
        assert client.post("/runs/hostile-1/resume").status_code == 401


def test_the_printed_url_sets_a_strict_cookie_and_drops_the_token(viewer: Viewer) -> None:
    with viewer.client(authorized=False) as client:
        first = client.get("/runs/hostile-1", params={"token": viewer.token, "x": "1"})
        assert (
            first.status_code == 303
            and first.headers["location"] == f"{viewer.root}/runs/hostile-1?x=1"
        )
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}={viewer.token};")
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        # Bound to the secret root: a server on another port is sent it for no path it knows.
        assert f"Path={viewer.root}/" in cookie.split("; ")
        assert client.get("/runs/hostile-1").status_code == 200  # the cookie is enough now


def test_pages_forbid_inline_script_and_framing(viewer: Viewer) -> None:
    with viewer.client() as client:
        page = client.get("/")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["cache-control"] == "no-store"


def test_another_host_name_is_refused(viewer: Viewer) -> None:
    with viewer.client() as client:
        assert client.get("/", headers={"host": "evil.example"}).status_code == 403


@pytest.mark.parametrize(
    "headers",
    [{}, {"origin": "http://evil.example"}, {"sec-fetch-site": "cross-site"}, {"origin": "null"}],
)
def test_actions_from_elsewhere_are_refused(viewer: Viewer, headers: dict[str, str]) -> None:
    with viewer.client() as client:
        for path in ("/runs/hostile-1/resume", "/runs/denied-1/calls/c1/approve"):
            assert client.post(path, headers=headers).status_code == 403, (path, headers)


def test_resuming_from_the_viewer_says_where_a_run_continues(viewer: Viewer) -> None:
    with viewer.client() as client:
        resume = client.post("/runs/failed-1/resume", headers={"origin": viewer.origin})
        page = client.get("/runs/failed-1").text
    assert resume.status_code == 501 and "agent.resume(&#x27;failed-1&#x27;)" in resume.text
    assert "class=continue" in page and "agent.resume(&#x27;failed-1&#x27;)" in page
    assert "/resume" not in page  # no button that cannot work


@pytest.mark.parametrize("method", ["PUT", "DELETE", "PATCH", "POST"])
@pytest.mark.parametrize("path", ["/", "/runs/hostile-1", "/runs/hostile-1/events", "/static/x"])
def test_nothing_else_writes(viewer: Viewer, method: str, path: str) -> None:
    with viewer.client() as client:
        response = client.request(method, path, headers={"origin": viewer.origin})
    assert response.status_code == 405


def test_a_session_leaves_the_journal_byte_for_byte(made: Made) -> None:
    before = _files(made.path.parent)
    with serving(made.path) as served, served.client() as client:
        client.get("/", params={"q": "x", "status": "answered"})
        for run_id in made.runs.values():
            client.get(f"/runs/{run_id}")
            client.get(f"/runs/{run_id}/events", params={"after": "1"})
        client.post("/runs/failed-1/resume", headers={"origin": served.base})
        client.put("/runs/failed-1")
    assert _files(made.path.parent) == before


def test_the_settings_repr_shows_neither_the_token_nor_a_password() -> None:
    from toolwire.view import ViewSettings

    settings = ViewSettings(
        journal="postgresql://u:hunter2@db.internal/runs", token="tok-secret-123", port=8000
    )
    shown = repr(settings)
    assert "hunter2" not in shown and "tok-secret-123" not in shown
    assert "port=8000" in shown


def test_a_journal_that_cannot_be_read_is_a_page_saying_so() -> None:
    # Nothing listens on port 1: the database cannot be reached.
    with serving("postgresql://u:hunter2@127.0.0.1:1/db") as viewer, viewer.client() as client:
        answer = client.get("/")
    assert answer.status_code == 503
    assert "cannot read the journal postgresql://127.0.0.1:1" in answer.text
    assert "hunter2" not in answer.text


def test_a_live_stream_whose_journal_goes_away_ends_cleanly(made: Made, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "journal.sqlite3"
    shutil.copy(made.path, copy)
    with serving(copy) as viewer, viewer.client() as client:
        page = client.get(f"/runs/{made.runs['waiting']}")
        found = re.search(r'data-last="(\d+)"', page.text)
        assert found is not None
        # The run waits: its stream follows on, until the journal is gone.
        url = f"/runs/{made.runs['waiting']}/events?after={found[1]}"
        with client.stream("GET", url) as stream:
            assert stream.status_code == 200
            copy.unlink()
            body = stream.read()
        assert b"event: end" not in body
        assert client.get(url).status_code == 404
