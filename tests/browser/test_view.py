"""``toolwire view`` in real headless Chromium: the list, a run's page, and a
run in progress updating live; screenshots go to build/view-screenshots/."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.view._support import HOSTILE, make_journal, serving
from toolwire.journal import SQLiteJournal

from ._cdp import Browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "view-screenshots"


def test_the_viewer_in_chromium(tmp_path: Path) -> None:
    made = make_journal(tmp_path / "journal.sqlite3")
    writer = SQLiteJournal(made.path)
    writer.record_run(
        "live-1", header=json.dumps({"model": "gpt-4.1-mini"}), messages=[], resumed=False
    )
    try:
        with serving(made.path, poll=0.05, deadline=30.0) as viewer:
            asyncio.run(_drive(viewer.base, viewer.token, writer, tmp_path / "profile"))
    finally:
        writer.close()


async def _drive(base: str, token: str, writer: SQLiteJournal, profile: Path) -> None:
    async with Browser(profile) as browser:
        # The printed URL: the token becomes a cookie and leaves the address.
        await browser.open(f"{base}/?token={token}")
        assert await browser.evaluate("location.href") == f"{base}/"
        rows = await browser.evaluate(
            "[...document.querySelectorAll('#runs tbody tr[data-run]')].map(r => r.dataset.run)"
        )
        assert rows == ["live-1", "resumed-1", "failed-1", "denied-1", "hostile-1"]
        assert await browser.evaluate("document.cookie") == ""  # HttpOnly
        await browser.screenshot(SCREENSHOTS / "list.png")

        # A run: the timeline, the hostile result shown as text.
        await browser.evaluate("document.querySelector('tr[data-run=\"hostile-1\"] a').click()")
        await browser.wait_for_event("Page.loadEventFired")
        assert (await browser.evaluate("location.pathname")) == "/runs/hostile-1"
        assert await browser.evaluate("document.querySelectorAll('section.turn').length") == 2
        results = await browser.evaluate(
            "[...document.querySelectorAll('[data-kind=tool_outcome] pre')]"
            ".map(p => p.textContent).join('\\n')"
        )
        assert HOSTILE in results  # shown as text...
        assert await browser.evaluate("document.scripts.length") == 1  # ...never run
        await browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        await browser.screenshot(SCREENSHOTS / "run.png")

        # A run in progress: records appear without a reload, then its end.
        await browser.open(f"{base}/runs/live-1")
        await browser.evaluate("window.sameDocument = true")
        writer.record_event("live-1", "model_request", '{"messages": 1, "new": 1}', turn=1)
        await browser.until("!!document.getElementById('e2')")
        response = json.dumps(
            {"elapsed": 0.5, "finish_reason": "stop", "assistant": {"text": "live answer"}}
        )
        writer.record_event("live-1", "model_response", response, turn=1, attempt=1)
        await browser.until("!!document.getElementById('e3')")
        writer.record_end("live-1", status="answered", summary="{}", data='{"outcome": "answered"}')
        await browser.until("document.getElementById('status').textContent === 'answered'")
        assert await browser.evaluate("window.sameDocument") is True  # no reload
        text = await browser.evaluate("document.getElementById('timeline').textContent")
        assert "live answer" in text
        await browser.screenshot(SCREENSHOTS / "live.png")
