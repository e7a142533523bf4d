"""A journal written before the blob table (schema 2, its records' parts
inline as base64) reads, shows its parts and resumes: the resumed request
carries the prompt's image and the tool's image byte for byte.
``tests/fixtures/journals/inline-parts.sqlite3``, made by
``make_inline_parts.py`` beside it with that toolwire's source."""

from __future__ import annotations

import base64
import hashlib
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolwire import Agent, tool
from toolwire.cli import main
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.content import content_parts
from toolwire.journal import Decision, SQLiteJournal, pending_calls, plan_resume, record_decision
from toolwire.messages import ToolResultMessage, UserMessage
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

FIXTURE = Path(__file__).parent.parent / "fixtures" / "journals" / "inline-parts.sqlite3"
CHART = b"\x89PNG\r\n\x1a\n" + b"chart" * 40
PAGE = b"\x89PNG\r\n\x1a\n" + b"page" * 40


@pytest.fixture
def old_journal(tmp_path: Path) -> Path:
    path = tmp_path / "inline-parts.sqlite3"
    shutil.copyfile(FIXTURE, path)
    path.chmod(0o600)
    return path


@tool(read_only=True)
def screenshot() -> Any:
    """A screenshot of the page."""
    raise AssertionError("recorded: never run again")


@tool(requires_approval=True)
def click(x: int) -> str:
    """Click on the page.

    Args:
        x: where.
    """
    return f"clicked {x}"


def test_the_inline_parts_read_as_parts(old_journal: Path) -> None:
    journal = SQLiteJournal(old_journal, read_only=True)
    try:
        log = journal.load_run("look-1")
    finally:
        journal.close()
    assert log.problems() == []
    plan = plan_resume(log)
    user, _, result = plan.messages
    assert isinstance(user, UserMessage) and isinstance(result, ToolResultMessage)
    assert [p.data for p in user.parts] == [CHART]
    assert [p.data for p in content_parts(result.parts)] == [PAGE]
    with sqlite3.connect(old_journal) as db:  # a reader changes nothing
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2


def test_runs_show_prints_the_inline_parts(old_journal: Path) -> None:
    shown = CliRunner().invoke(main, ["runs", "show", "look-1", "--journal", str(old_journal)])
    assert shown.exit_code == 0, shown.output
    chart = f"[image/png {len(CHART)} B sha256:{hashlib.sha256(CHART).hexdigest()[:8]}…]"
    page = f"[image/png {len(PAGE)} B sha256:{hashlib.sha256(PAGE).hexdigest()[:8]}…]"
    assert f"user: Click the chart. {chart}" in shown.output
    assert f"→ the page {page}" in shown.output


async def test_the_run_resumes_with_its_parts_byte_for_byte(old_journal: Path) -> None:
    journal = SQLiteJournal(old_journal)  # a writer: the file gets its blob table
    scenario = Scenario.from_dict(
        {
            "turns": [
                {"expect": {"images": 1}, "tool_calls": [{"name": "screenshot"}]},
                {"expect": {"images": 2}, "tool_calls": [{"name": "click", "arguments": {"x": 3}}]},
                {"expect": {"images": 2}, "text": "done: {result:click}"},
            ]
        }
    )
    _, dialect, model = PROVIDERS["anthropic"]
    try:
        (pending,) = pending_calls(journal.load_run("look-1"))
        record_decision(journal, "look-1", Decision.allow(pending))
        with EmulationServer(scenario) as server:
            provider = make_provider("anthropic", base_url=server.url_for(dialect), api_key="k")
            agent = Agent(provider, model=model, tools=[screenshot, click], journal=journal)
            try:
                resumed = await agent.resume("look-1")
            finally:
                await agent.aclose()
            (sent,) = server.requests
        assert resumed.output == "done: clicked 3"
        user, _, results = sent["messages"][:3]
        assert base64.b64decode(user["content"][1]["source"]["data"]) == CHART
        (tool_result,) = results["content"]
        image = next(b for b in tool_result["content"] if b["type"] == "image")
        assert base64.b64decode(image["source"]["data"]) == PAGE
        assert journal.load_run("look-1").problems() == []
    finally:
        journal.close()
