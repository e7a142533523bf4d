"""examples/chat.html in real headless Chromium, over toolwire.ui.vercel:
the question asked, the tool cards with their arguments, the call that needs
approval waiting (also after a reload, from the journal), Approve clicked,
the answer shown; screenshots go to build/ui-screenshots/."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.ui._demo import PAID
from tests.ui._serving import serving
from toolwire.journal import recorded_decisions

from ._cdp import Browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "ui-screenshots"

STATUS = "document.getElementById('status').dataset.state"


def test_the_example_page_approves_a_call_and_shows_the_answer(tmp_path: Path) -> None:
    PAID.clear()
    with serving(tmp_path / "journal.sqlite3") as served:
        chat_id = asyncio.run(_drive(served.base, tmp_path / "profile"))
        journal = served.agent.journal
        assert journal is not None
        (decision,) = recorded_decisions(journal.load_run(chat_id))
    assert decision.decision == "allow" and decision.principal == "ui 127.0.0.1"
    assert PAID == [("ann", 1250)]


async def _drive(base: str, profile: Path) -> str:
    async with Browser(profile) as browser:
        await browser.open(f"{base}/")
        await browser.evaluate("document.querySelector('#ask button').click()")
        await browser.until(f"{STATUS} === 'waiting for approval'")
        cards = await browser.evaluate(
            "[...document.querySelectorAll('.tool')].map(c => [c.dataset.state,"
            " JSON.parse(c.querySelector('.arguments').textContent)])"
        )
        assert cards == [
            ["output-available", {"city": "Paris"}],
            ["output-available", {"city": "Rome"}],
            ["approval-requested", {"to": "ann", "amount_cents": 1250}],
        ]
        await browser.screenshot(SCREENSHOTS / "chat-waiting.png")
        chat_id: str = await browser.evaluate("location.hash.slice('#chat='.length)")

        # A reload: the chat and its waiting call come back from the journal.
        await browser.send("Page.reload")
        await browser.wait_for_event("Page.loadEventFired")
        await browser.until("document.querySelectorAll('button.approve').length === 1")
        assert PAID == []

        await browser.evaluate("document.querySelector('button.approve').click()")
        await browser.until(f"{STATUS} === 'answered'")
        texts = await browser.evaluate(
            "[...document.querySelectorAll('.assistant .text')].map(p => p.textContent)"
        )
        assert texts[-1] == "Done: sent 1250 to ann"
        assert await browser.evaluate("document.querySelectorAll('button.approve').length") == 0
        outputs = await browser.evaluate(
            "[...document.querySelectorAll('.tool .output')].map(p => p.textContent)"
        )
        assert outputs == ["sunny in Paris", "sunny in Rome", "sent 1250 to ann"]
        await browser.screenshot(SCREENSHOTS / "chat-answered.png")
        return chat_id
