"""Parts in a journaled run: a run suspended after a tool returned an image is
resumed from its journal, and the resumed request carries the prompt's image
and the tool's image exactly as the first process sent them."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import pytest

import toolwire
from toolwire import Agent, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.journal import Decision, SQLiteJournal, record_decision
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

PAGE = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
CHART = b"\x89PNG\r\n\x1a\n" + bytes(reversed(range(256)))


@tool(read_only=True)
def screenshot() -> Any:
    """A screenshot of the page."""
    return [toolwire.Image.from_bytes(PAGE, media_type="image/png"), "the page"]


@tool(requires_approval=True)
def click(x: int) -> str:
    """Click on the page.

    Args:
        x: where.
    """
    return f"clicked {x}"


def scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "turns": [
                {"expect": {"images": 1}, "tool_calls": [{"name": "screenshot"}]},
                {"expect": {"images": 2}, "tool_calls": [{"name": "click", "arguments": {"x": 3}}]},
                {"expect": {"images": 2}, "text": "done: {result:click}"},
            ]
        }
    )


async def test_a_resumed_run_sends_its_parts_again_byte_for_byte(tmp_path: Path) -> None:
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    _, dialect, model = PROVIDERS["anthropic"]
    with EmulationServer(scenario()) as server:
        provider = make_provider("anthropic", base_url=server.url_for(dialect), api_key="k")
        agent = Agent(provider, model=model, tools=[screenshot, click], journal=journal)
        try:
            chart = toolwire.Image.from_bytes(CHART, media_type="image/png")
            first = await agent.run(["Click the chart.", chart], run_id="run-p")
            assert first.outcome == "suspended"
            (pending,) = first.pending
            record_decision(journal, "run-p", Decision.allow(pending))
            resumed = await agent.resume("run-p")
        finally:
            await agent.aclose()
        assert resumed.output == "done: clicked 3"
        before, after = server.requests[1], server.requests[2]
    # The history the first process sent, resent unchanged by the second.
    assert after["messages"][: len(before["messages"])] == before["messages"]
    sources = [b["source"]["data"] for b in before["messages"][0]["content"][1:]]
    assert [base64.b64decode(s) for s in sources] == [CHART]
    outcome = next(e for e in journal.load_run("run-p").events if e.kind == "tool_outcome")
    assert outcome.data["v"] == 2
    # The record refers to the bytes, stored once in the journal's blob table.
    ref = outcome.data["result"]["parts"][0]
    assert ref == {
        "type": "image",
        "media_type": "image/png",
        "size": len(PAGE),
        "sha256": hashlib.sha256(PAGE).hexdigest(),
    }
    assert journal.load_blob(ref["sha256"]) == PAGE
    journal.close()
