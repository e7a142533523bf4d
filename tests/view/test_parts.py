"""A run's parts in the viewer, over HTTP: its images show inline from the
viewer's own route of the journal's blobs (with their media type, behind
the viewer's credential), its documents are downloads; a part another run
holds, or none holds, is not served. On a SQLite file and on PostgreSQL."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import toolwire
from toolwire import Agent, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.journal import PostgresJournal, SQLiteJournal
from toolwire.testing import EmulationServer, Scenario

from ._support import Viewer, serving

CHART = b"\x89PNG\r\n\x1a\n" + b"chart" * 300
PAGE = b"\x89PNG\r\n\x1a\n" + b"page" * 300
PDF = b"%PDF-1.4\n" + b"report " * 100 + b"\n%%EOF"
OTHER = b"\x89PNG\r\n\x1a\n" + b"other" * 50


@tool(read_only=True)
def screenshot() -> Any:
    """A screenshot of the page."""
    return [toolwire.Image.from_bytes(PAGE, media_type="image/png"), "the page"]


def _write(path: Path | str) -> None:
    scenario = Scenario.from_dict(
        {
            "turns": [
                {"tool_calls": [{"name": "screenshot"}]},
                {"text": "seen"},
                {"text": "other"},
            ]
        }
    )
    _, dialect, model = PROVIDERS["anthropic"]

    async def main() -> None:
        journal = PostgresJournal(path) if isinstance(path, str) else SQLiteJournal(path)
        with EmulationServer(scenario) as server:
            provider = make_provider("anthropic", base_url=server.url_for(dialect), api_key="k")
            agent = Agent(provider, model=model, tools=[screenshot], journal=journal)
            try:
                chart = toolwire.Image.from_bytes(CHART, media_type="image/png")
                pdf = toolwire.Document.from_bytes(
                    PDF, media_type="application/pdf", name="report 2026.pdf"
                )
                await agent.run(["Read these.", chart, pdf], run_id="parts-1")
                other = toolwire.Image.from_bytes(OTHER, media_type="image/png")
                await agent.run(["And this.", other], run_id="other-1")
            finally:
                await agent.aclose()
        journal.close()

    anyio.run(main)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def viewer(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Viewer]:
    path: Path | str = tmp_path_factory.mktemp("parts") / "journal.sqlite3"
    if request.param == "postgres":
        path = request.getfixturevalue("postgres_server").new_database()
    _write(path)
    with serving(path) as served:
        yield served


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_images_show_inline_from_the_viewers_route(viewer: Viewer) -> None:
    with viewer.client() as client:
        page = client.get("/runs/parts-1")
        assert page.status_code == 200
        sources = re.findall(r'<img class=part alt="[^"]*" src="([^"]+)">', page.text)
        assert sources == [
            f"{viewer.root}/runs/parts-1/blobs/{_sha(CHART)}",
            f"{viewer.root}/runs/parts-1/blobs/{_sha(PAGE)}",
        ]
        assert "base64," not in page.text  # no image travels inside the page
        for source, data in zip(sources, (CHART, PAGE), strict=True):
            served = client.get(source.removeprefix(viewer.root))
            assert served.status_code == 200
            assert served.headers["content-type"] == "image/png"
            assert served.headers["x-content-type-options"] == "nosniff"
            assert "content-disposition" not in served.headers
            assert served.content == data


def test_documents_are_downloads(viewer: Viewer) -> None:
    with viewer.client() as client:
        page = client.get("/runs/parts-1").text
        (link,) = re.findall(r'<a class=part href="([^"]+)" download>\[([^\]]+)\]</a>', page)
        assert link[0] == f"{viewer.root}/runs/parts-1/blobs/{_sha(PDF)}"
        assert link[1] == f"application/pdf {len(PDF)} B sha256:{_sha(PDF)[:8]}…"
        served = client.get(link[0].removeprefix(viewer.root))
    assert served.status_code == 200
    assert served.headers["content-type"] == "application/pdf"
    assert served.headers["content-disposition"] == 'attachment; filename="report_2026.pdf"'
    assert served.content == PDF


def test_a_part_is_served_behind_the_credential_and_for_its_own_run(viewer: Viewer) -> None:
    path = f"/runs/parts-1/blobs/{_sha(CHART)}"
    with viewer.client(authorized=False) as stranger:
        refused = stranger.get(path)
        assert refused.status_code == 401 and CHART not in refused.content
    with viewer.client() as client:
        assert client.get(f"/runs/other-1/blobs/{_sha(OTHER)}").content == OTHER
        # Another run's part, a part nobody holds, and what is not a sha256.
        assert client.get(f"/runs/parts-1/blobs/{_sha(OTHER)}").status_code == 404
        assert client.get(f"/runs/parts-1/blobs/{_sha(b'none')}").status_code == 404
        assert client.get("/runs/parts-1/blobs/..%2Fetc").status_code == 404
        assert client.get(f"/runs/nope/blobs/{_sha(CHART)}").status_code == 404
