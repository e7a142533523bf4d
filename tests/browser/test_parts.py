"""A run's images in real headless Chromium: a 2 MB PNG in the prompt and a
tool's PNG result show inline on the run's page, loaded from the viewer's
blob route behind its cookie (decoded by the browser to their true size),
and a PDF is a download link; the screenshot goes to
build/view-screenshots/parts.png."""

from __future__ import annotations

import asyncio
import random
import struct
import zlib
from pathlib import Path
from typing import Any

import anyio

import toolwire
from tests.view._support import serving
from toolwire import Agent, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.journal import SQLiteJournal
from toolwire.testing import EmulationServer, Scenario

from ._cdp import Browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "build" / "view-screenshots"


def png(width: int, height: int, pixel: Any) -> bytes:
    """A true RGB PNG whose pixel ``(x, y)`` is ``pixel(x, y)``."""
    rows = b"".join(
        b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height)
    )

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            chunk(b"IHDR", header),
            chunk(b"IDAT", zlib.compress(rows, 1)),
            chunk(b"IEND", b""),
        )
    )


NOISE = random.Random(5)
BIG = png(860, 860, lambda x, y: bytes(NOISE.randrange(256) for _ in range(3)))
PAGE = png(320, 200, lambda x, y: ((x * 255) // 320, 120, (y * 255) // 200))
PDF = b"%PDF-1.4\n%%EOF\n"


@tool(read_only=True)
def screenshot() -> Any:
    """A screenshot of the page."""
    return [toolwire.Image.from_bytes(PAGE, media_type="image/png"), "the page after the click"]


def _write(path: Path) -> None:
    scenario = Scenario.from_dict(
        {"turns": [{"tool_calls": [{"name": "screenshot"}]}, {"text": "A chart, then the page."}]}
    )
    _, dialect, model = PROVIDERS["anthropic"]

    async def main() -> None:
        journal = SQLiteJournal(path)
        with EmulationServer(scenario) as server:
            provider = make_provider("anthropic", base_url=server.url_for(dialect), api_key="k")
            agent = Agent(provider, model=model, tools=[screenshot], journal=journal)
            try:
                chart = toolwire.Image.from_bytes(BIG, media_type="image/png")
                pdf = toolwire.Document.from_bytes(PDF, media_type="application/pdf", name="a.pdf")
                await agent.run(["Describe this chart.", chart, pdf], run_id="parts-1")
            finally:
                await agent.aclose()
        journal.close()

    anyio.run(main)


def test_a_runs_images_in_chromium(tmp_path: Path) -> None:
    assert len(BIG) > 2 * 1024 * 1024
    path = tmp_path / "journal.sqlite3"
    _write(path)
    with serving(path) as viewer:
        asyncio.run(_drive(viewer.base, viewer.token, tmp_path / "profile"))


async def _drive(base: str, token: str, profile: Path) -> None:
    async with Browser(profile) as browser:
        await browser.open(f"{base}/?token={token}")
        await browser.open(f"{base}/runs/parts-1")
        await browser.until(
            "[...document.querySelectorAll('img.part')].every(i => i.complete)"
            " && document.querySelectorAll('img.part').length === 2"
        )
        sizes = await browser.evaluate(
            "[...document.querySelectorAll('img.part')].map(i => [i.naturalWidth, i.naturalHeight])"
        )
        assert sizes == [[860, 860], [320, 200]]
        links = await browser.evaluate(
            "[...document.querySelectorAll('a.part[download]')].map(a => a.textContent)"
        )
        assert len(links) == 1 and links[0].startswith("[application/pdf")
        await browser.evaluate("document.getElementById('conversation').scrollIntoView()")
        await browser.screenshot(SCREENSHOTS / "parts.png", height=1400)
