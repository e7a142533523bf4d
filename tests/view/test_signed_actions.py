"""The viewer signs the decisions it records when it holds the approval key,
and says on the page when it cannot; a resume with the key runs a call only
on a signed decision (through the viewer's real HTTP routes)."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest

from tests.journal._support import make_agent
from toolwire import Toolbox
from toolwire.journal import (
    ApprovalRefused,
    Decision,
    SQLiteJournal,
    close_journals,
    pending_calls,
    record_decision,
)
from toolwire.testing import EmulationServer

from ._support import WAITING_TURNS, _scenario, launch, lookup, make_waiting, serving

RUN = "waiting-1"
KEY = b"viewer-approval-key-0123456789abcdef"


@pytest.fixture()
def journal(tmp_path: Path) -> Path:
    """A run waiting on ``launch`` (an approval), its ``lookup`` result given signed."""
    path = tmp_path / "journal.sqlite3"
    make_waiting(path, answer=False)
    writer = SQLiteJournal(path)
    try:
        found = {p.name: p for p in pending_calls(writer.load_run(RUN))}
        answer = Decision.answer(found["lookup"], "found", principal="ops").signed(KEY, RUN)
        record_decision(writer, RUN, answer, key=KEY)
    finally:
        writer.close()
    return path


def _kinds(path: Path) -> list[str]:
    reader = SQLiteJournal(path, read_only=True)
    try:
        return [e.kind for e in reader.load_run(RUN).events]
    finally:
        reader.close()


def _approve_in_viewer(path: Path, key: bytes | None) -> tuple[str, str]:
    """Approve ``launch`` through the viewer's page: the page before, and after."""
    with serving(path, approval_key=key) as viewer, viewer.client() as client:
        before = client.get(f"/runs/{RUN}").text
        found = re.search(
            r'action="/[^/"]+(/runs/[^"]+/approve)" class=inline>'
            r'<input type=hidden name=digest value="([^"]+)"',
            before,
        )
        assert found is not None, before
        posted = client.post(found[1], data={"digest": found[2]}, headers={"origin": viewer.origin})
        assert posted.status_code == 303, posted.text
        after = client.get(f"/runs/{RUN}").text
    return before, after


def _resume(path: Path, key: bytes) -> str:
    async def main() -> str:
        with EmulationServer(_scenario("waiting", WAITING_TURNS)) as server:
            agent = make_agent(server, Toolbox([launch, lookup]), journal=str(path))
            try:
                return (await agent.resume(RUN, approval_key=key)).outcome
            finally:
                await agent.aclose()
                close_journals()

    return anyio.run(main)


def test_with_the_key_the_viewer_signs_and_a_keyed_resume_runs_the_call_once(
    journal: Path,
) -> None:
    before, after = _approve_in_viewer(journal, KEY)
    assert "signed with the approval key" in before and "recorded unsigned" not in before
    assert "<span class=ok>signed</span>" in after
    assert _resume(journal, KEY) == "answered"
    assert _kinds(journal).count("tool_outcome") == 1  # launch ran, once


def test_without_the_key_the_page_says_so_and_a_keyed_resume_runs_nothing(
    journal: Path,
) -> None:
    before, after = _approve_in_viewer(journal, None)
    assert "has no approval key" in before and "recorded unsigned" in before
    assert "<span class=error>unsigned</span>" in after
    kinds = _kinds(journal)
    with pytest.raises(ApprovalRefused) as refused:
        _resume(journal, KEY)
    assert refused.value.reason == "signature"
    assert refused.value.call_id is not None and refused.value.call_id in refused.value.message
    reader = SQLiteJournal(journal, read_only=True)
    try:
        assert reader.load_run(RUN).run.status == "suspended"
    finally:
        reader.close()
    assert _kinds(journal) == kinds and "tool_outcome" not in kinds  # nothing ran


def test_a_non_ascii_digest_is_refused_not_a_server_error(journal: Path) -> None:
    with serving(journal) as viewer, viewer.client() as client:
        page = client.get(f"/runs/{RUN}").text
        path = next(m[1] for m in re.finditer(r'action="/[^/"]+(/runs/[^"]+/approve)"', page))
        for digest in ("sha256:é", "sha256:\u202e00"):
            response = client.post(path, data={"digest": digest}, headers={"origin": viewer.origin})
            assert response.status_code == 400, response.text
            assert "digest" in response.text
    assert "approval" not in _kinds(journal)
