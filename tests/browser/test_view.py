"""``toolwire view`` in real headless Chromium: the list, a run's page, a run
in progress updating live, a waiting call approved with a click, and a
call's arguments replayed delta by delta; screenshots go to
build/view-screenshots/ (docs/images/view-run.png is the run page's)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from urllib.parse import urlsplit

from tests.view._support import (
    HOSTILE,
    RECORDED_ARGUMENTS,
    make_journal,
    make_recorded,
    make_showcase,
    serving,
)
from toolwire.journal import SQLiteJournal

from ._cdp import Browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "view-screenshots"


PRINCIPAL = "ann (toolwire view)"


def test_the_viewer_in_chromium(tmp_path: Path) -> None:
    made = make_journal(tmp_path / "journal.sqlite3")
    cassette = tmp_path / "cassette"
    make_recorded(made.path, cassette)
    make_showcase(made.path, cassette)
    writer = SQLiteJournal(made.path)
    writer.record_run(
        "live-1", header=json.dumps({"model": "gpt-4.1-mini"}), messages=[], resumed=False
    )
    try:
        with serving(
            made.path,
            poll=0.05,
            deadline=30.0,
            principal=PRINCIPAL,
            cassettes=(cassette,),
        ) as viewer:
            asyncio.run(_drive(viewer.base, viewer.token, writer, tmp_path / "profile"))
    finally:
        writer.close()
    reader = SQLiteJournal(made.path, read_only=True)
    try:
        events = reader.load_run("waiting-1").events
    finally:
        reader.close()
    [approval] = [e for e in events if e.kind == "approval"]
    assert approval.data["decision"] == "allow" and approval.data["principal"] == PRINCIPAL


async def _drive(base: str, token: str, writer: SQLiteJournal, profile: Path) -> None:
    async with Browser(profile) as browser:
        # The printed URL: the token becomes a cookie and leaves the address.
        await browser.open(f"{base}/?token={token}")
        assert await browser.evaluate("location.href") == f"{base}/"
        rows = await browser.evaluate(
            "[...document.querySelectorAll('#runs tbody tr[data-run]')].map(r => r.dataset.run)"
        )
        assert rows == [
            "live-1",
            "trip-planner",
            "recorded-1",
            "waiting-1",
            "resumed-1",
            "failed-1",
            "denied-1",
            "hostile-1",
        ]
        waiting = await browser.evaluate(
            "[...document.querySelectorAll('#runs tr .waiting')].map(m => m.closest('tr')"
            ".dataset.run)"
        )
        assert waiting == ["trip-planner", "waiting-1"]
        assert await browser.evaluate("document.cookie") == ""  # HttpOnly
        await browser.screenshot(SCREENSHOTS / "list.png")

        # A run: the timeline, the hostile result shown as text.
        await browser.evaluate("document.querySelector('tr[data-run=\"hostile-1\"] a').click()")
        await browser.wait_for_event("Page.loadEventFired")
        root = urlsplit(base).path  # the viewer's secret root
        assert (await browser.evaluate("location.pathname")) == f"{root}/runs/hostile-1"
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

        await _approve(browser, base)
        await _scrub(browser, base)
        await _showcase(browser, base)


async def _approve(browser: Browser, base: str) -> None:
    """A waiting call approved with a click: the page comes back with the decision."""
    await browser.open(f"{base}/runs/waiting-1")
    assert await browser.evaluate("document.getElementById('pending').dataset.waiting") == "1"
    launch = await browser.evaluate(
        "document.querySelector('.pending-call[data-awaiting=approval] pre').textContent"
    )
    assert json.loads(launch)["target"] == f"moon {HOSTILE}"  # as text, never as markup
    await browser.screenshot(SCREENSHOTS / "waiting.png")
    await browser.evaluate("document.querySelector('button.approve').click()")
    await browser.wait_for_event("Page.loadEventFired")
    where = await browser.evaluate("location.pathname + location.hash")
    assert where == f"{urlsplit(base).path}/runs/waiting-1#pending"
    assert await browser.evaluate("document.getElementById('pending').dataset.waiting") == "0"
    assert await browser.evaluate("document.querySelectorAll('button.approve').length") == 0
    answered = await browser.evaluate(
        "document.querySelector('.pending-call[data-awaiting=approval] .answered-call').textContent"
    )
    # This viewer holds no approval key: the page says the decision is unsigned.
    assert answered == (
        f"approved by {PRINCIPAL} · unsigned: a resume with an approval key refuses it"
    )
    kinds = await browser.evaluate(
        "[...document.querySelectorAll('#timeline .event')].map(e => e.dataset.kind)"
    )
    assert kinds[-1] == "approval"
    await browser.screenshot(SCREENSHOTS / "approved.png")


async def _scrub(browser: Browser, base: str) -> None:
    """A call's arguments replayed: each step shows the text so far and its delta."""
    await browser.open(f"{base}/runs/recorded-1")
    box = "document.querySelector('.scrubber')"
    steps = await browser.evaluate(f"JSON.parse({box}.dataset.steps).length")
    assert steps > 10
    whole = await browser.evaluate(f"{box}.querySelector('pre').textContent")
    assert whole.startswith('{"text":"</pre><script>alert(1)</script> with ')
    assert "VIEWERsecret" not in whole and whole.endswith(' in the middle"}')
    assert len(whole) == len(json.dumps(RECORDED_ARGUMENTS, separators=(",", ":")))
    # Drag the slider to the fifth delta, step back, step on.
    await browser.evaluate(
        f"(() => {{ const s = {box}.querySelector('input[type=range]'); s.value = '4';"
        " s.dispatchEvent(new Event('input')); })()"
    )
    fifth = await browser.evaluate(f"{box}.querySelector('pre').textContent")
    assert whole.startswith(fifth) and len(fifth) == 20  # four-byte deltas
    assert await browser.evaluate(f"{box}.querySelector('mark').textContent") == fifth[-4:]
    await browser.evaluate(f"{box}.querySelector('button.back').click()")
    assert await browser.evaluate(f"{box}.querySelector('pre').textContent") == whole[:16]
    await browser.evaluate(f"{box}.querySelector('button.next').click()")
    assert await browser.evaluate(f"{box}.dataset.step") == "4"
    assert await browser.evaluate("document.scripts.length") == 1
    await browser.evaluate("document.querySelector('.scrubber').scrollIntoView({block: 'center'})")
    await browser.screenshot(SCREENSHOTS / "scrubber.png")


async def _showcase(browser: Browser, base: str) -> None:
    """The run page the docs show (docs/images/view-run.png is a copy of run-page.png)."""
    await browser.open(f"{base}/runs/trip-planner")
    assert await browser.evaluate("document.querySelectorAll('button.approve').length") == 1
    box = "document.querySelector('.scrubber')"
    await browser.evaluate(
        f"(() => {{ const s = {box}.querySelector('input[type=range]'); s.value = '5';"
        " s.dispatchEvent(new Event('input')); })()"
    )
    assert (
        await browser.evaluate(f"{box}.querySelector('pre').textContent")
        == ('{"city":"Lisbon","unit":"celsius"}'[:30])
    )
    await browser.screenshot(SCREENSHOTS / "run-page.png", height=1400)
