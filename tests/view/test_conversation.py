"""The run page as a conversation, and the run list's prompt column,
rendered from a real journal written by an agent against the emulation server."""

from __future__ import annotations

import re
from pathlib import Path

import anyio

from tests.journal._support import make_agent
from tests.view._support import HOSTILE, SECRET, _scenario, echo_html, launch
from toolwire import Approval, ApprovalRequest, Toolbox
from toolwire.journal import SQLiteJournal, close_journals
from toolwire.testing import EmulationServer
from toolwire.view._conversation import _image
from toolwire.view._listing import ListQuery, list_page
from toolwire.view._run_page import run_page

PROMPT = f"Launch to the moon and say hi {HOSTILE} " + "and more words " * 10
TURNS = [
    {
        "tool_calls": [
            {"name": "launch", "arguments": {"target": "moon"}},
            {"name": "echo_html", "arguments": {"text": "hi"}},
        ]
    },
    {"text": "All done: launched."},
]


def _journal(path: Path) -> None:
    def approve(request: ApprovalRequest) -> Approval:
        return Approval.allow()

    async def main() -> None:
        with EmulationServer(_scenario("conversation", TURNS)) as server:
            tools = Toolbox([launch, echo_html], approve=approve)
            agent = make_agent(server, tools, journal=str(path))
            try:
                await agent.run(PROMPT, run_id="talk-1")
            finally:
                await agent.aclose()

    anyio.run(main)
    close_journals()


def test_the_run_page_reads_as_a_conversation(tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    _journal(path)
    journal = SQLiteJournal(path)
    try:
        page = run_page(journal.load_run("talk-1"))
        listing = list_page(journal, ListQuery())
    finally:
        journal.close()
    talk = page[
        page.index("<section id=conversation>") : page.index(
            "</section>", page.index("<section id=conversation>")
        )
    ]
    # The user's words first, escaped; then the model's turn with two cards; the answer.
    assert re.search(r'<div class="msg user"><b class=role>user</b><pre>Launch to the moon', talk)
    assert "<script>" not in page and "&lt;script&gt;alert" in talk
    cards = re.findall(r"<article class=call .*?</article>", talk, re.S)
    assert len(cards) == 2
    assert "<code>launch</code>" in cards[0] and "approval: <b>allow" in cards[0]
    assert "{\n  &quot;target&quot;: &quot;moon&quot;\n}" in cards[0] and "launched" in cards[0]
    assert "<code>echo_html</code>" in cards[1] and "approval" not in cards[1]
    for card in cards:
        assert "took " in card and "attempts " in card and "<span class=outcome>ok</span>" in card
    assert SECRET not in page
    assert talk.index("tool call") < talk.index("All done: launched.")
    assert talk.count("cost $") == 2 and "turn 1 · usage: input_tokens" in talk
    # The raw records are one click away.
    assert "<details id=records><summary>raw records</summary>" in page
    assert "<div id=timeline>" in page
    # The run list shows the prompt, cut, escaped, with the whole in its title.
    row = listing[listing.index("talk-1"[:12]) :]
    cell = re.search(r"<td class=prompt>(.*?)</td>", row)
    assert cell is not None
    assert cell.group(1).startswith('<span title="Launch to the moon')
    assert "…</span>" in cell.group(1) and "<script>" not in cell.group(1)
    assert "<th>prompt</th>" in listing


def test_images_show_inline_only_as_raster_data() -> None:
    png = _image({"type": "image", "media_type": "image/png", "data": "iVBORw0KGgo="}, "r")
    assert png == '<img class=part alt="image/png" src="data:image/png;base64,iVBORw0KGgo=">'
    svg = _image({"type": "image", "media_type": "image/svg+xml", "data": "PHN2Zz4="}, "r")
    assert "<img" not in svg and "[image: image/svg+xml]" in svg
    odd = _image({"type": "image", "media_type": "image/png", "data": '"><script>'}, "r")
    assert "<img" not in odd
    outside = _image(
        {"type": "image", "media_type": "image/png", "url": "https://x.test/a.png"}, "r"
    )
    assert "<img" not in outside
    # A part in the journal's blobs: an SVG is a download, never an <img>.
    ref = {"type": "image", "media_type": "image/svg+xml", "size": 3, "sha256": "ab" * 32}
    assert "<img" not in _image(ref, "r") and "download" in _image(ref, "r")
