"""Content parts in the journal's blob table, on SQLite and PostgreSQL: a 2 MB
image a run carries in its prompt and in a tool's result is stored once, the
records refer to it, and a resume in a new journal object sends the exact
request again (the emulation server received the same bytes); bytes that
spell the provider's key come back as they were; a part past the cap is
refused before anything is sent; an image the model made is stored the same
way, in its provider's item, and sent back byte for byte after a resume."""

from __future__ import annotations

import base64
import hashlib
import random
import sqlite3
from typing import Any

import pytest
from click.testing import CliRunner

import toolwire
from toolwire import Agent, tool
from toolwire.cli import main
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.content import state_media, with_state_data
from toolwire.errors import BlobTooLarge, ProviderError
from toolwire.journal import Blob, SQLiteJournal, part_refs, plan_resume
from toolwire.journal._blobs import inline_parts, store_parts
from toolwire.testing import EmulationServer, Scenario
from toolwire.view._blobs import run_refs

from ._holder import open_store

pytestmark = pytest.mark.anyio

KEY = "sk-ant-blobtest-0123456789abcdefghij"
"""The provider's key, which the journal redacts from its records' text."""


def _png(size: int, seed: int = 7) -> bytes:
    """``size`` bytes of a PNG-looking image, the key written inside it, as is
    and as base64 (what the redaction of text looks for)."""
    head = b"\x89PNG\r\n\x1a\n" + KEY.encode() + base64.b64encode(KEY.encode())
    rest = random.Random(seed).randbytes(size - len(head) - len(KEY))
    return head + rest[: len(rest) // 2] + KEY.encode() + rest[len(rest) // 2 :]


BIG = _png(2 * 1024 * 1024)


@tool(read_only=True)
def screenshot() -> Any:
    """A screenshot of the page."""
    return [toolwire.Image.from_bytes(BIG, media_type="image/png"), "the page"]


def _scenario() -> Scenario:
    # The second request fails once (400 is not retried: the run fails), and
    # answers when the resumed run sends it again.
    return Scenario.from_dict(
        {
            "turns": [
                {"expect": {"images": 1}, "tool_calls": [{"name": "screenshot"}]},
                {"expect": {"images": 2}, "faults": [{"status": 400}], "text": "seen"},
            ]
        }
    )


def _agent(server: EmulationServer, journal: Any) -> Agent:
    _, dialect, model = PROVIDERS["anthropic"]
    provider = make_provider("anthropic", base_url=server.url_for(dialect), api_key=KEY)
    return Agent(provider, model=model, tools=[screenshot], journal=journal)


def _rows(store: str, table: str) -> list[tuple[Any, ...]]:
    """Every row of one of the journal's tables, read with the store's own driver."""
    if store.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(store) as db:
            return list(db.execute(f"SELECT * FROM toolwire_{table}").fetchall())
    with sqlite3.connect(store) as db:
        return list(db.execute(f"SELECT * FROM {table}").fetchall())


async def test_a_2_mb_image_is_stored_once_and_resent_byte_for_byte(store: str) -> None:
    image = toolwire.Image.from_bytes(BIG, media_type="image/png")
    with EmulationServer(_scenario()) as server:
        first = open_store(store)
        agent = _agent(server, first)
        try:
            with pytest.raises(ProviderError):
                await agent.run(["What is on the page?", image], run_id="big")
        finally:
            await agent.aclose()
            first.close()
        second = open_store(store)  # the resume reads everything from the store
        agent = _agent(server, second)
        try:
            resumed = await agent.resume("big")
        finally:
            await agent.aclose()
        assert resumed.output == "seen"
        failed, again = server.requests[1], server.requests[2]
    # The request the first journal object sent and the one the second rebuilt
    # from the store are the same bytes (the server keeps a large body's digest).
    assert failed == again
    assert failed["bytes"] > len(BIG) * 2  # both images, as base64
    sha = hashlib.sha256(BIG).hexdigest()
    blobs = _rows(store, "blobs")
    assert [(row[0], row[1], row[2]) for row in blobs] == [(sha, "image/png", len(BIG))]
    assert bytes(blobs[0][3]) == BIG
    assert second.load_blob(sha) == BIG
    # No record holds the bytes: the prompt, the tool's result and the tool
    # message that hands it on refer to the blob.
    texts = [str(row) for table in ("events", "messages") for row in _rows(store, table)]
    assert sum(len(text) for text in texts) < 40_000
    assert sum(text.count(sha) for text in texts) == 3
    log = second.load_run("big")
    outcome = next(e for e in log.events if e.kind == "tool_outcome")
    assert outcome.data["result"]["parts"][0]["sha256"] == sha
    second.close()
    shown = CliRunner().invoke(main, ["runs", "show", "big", "--journal", store])
    assert shown.exit_code == 0, shown.output
    line = f"[image/png 2.0 MB sha256:{sha[:8]}…]"
    assert f"user: What is on the page? {line}" in shown.output
    assert f"→ the page {line}" in shown.output


async def test_bytes_that_spell_the_key_are_not_redacted(tmp_path: Any) -> None:
    small = _png(4096, seed=3)
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    scenario = Scenario.from_dict({"turns": [{"expect": {"images": 1}, "text": "ok"}]})
    with EmulationServer(scenario) as server:
        agent = _agent(server, journal)
        try:
            image = toolwire.Image.from_bytes(small, media_type="image/png")
            result = await agent.run([f"my key is {KEY}", image], run_id="secret")
        finally:
            await agent.aclose()
    assert result.output == "ok"
    log = journal.load_run("secret")
    (user,) = log.messages
    assert KEY not in str(user) and "<redacted>" in user["text"]  # text is redacted
    ref = user["content"][1]
    assert journal.load_blob(ref["sha256"]) == small  # bytes are not
    journal.close()
    with sqlite3.connect(tmp_path / "j.sqlite3") as db:
        stored = [bytes(row[0]) for row in db.execute("SELECT body FROM blobs")]
        texts = [
            r[0] for r in db.execute("SELECT data FROM messages UNION SELECT data FROM events")
        ]
    assert stored == [small]
    assert not any(KEY in text for text in texts)


async def test_a_part_past_the_cap_is_refused_before_anything_is_sent(store: str) -> None:
    journal = open_store(store)
    journal.max_blob_bytes = 1024  # type: ignore[attr-defined]
    scenario = Scenario.from_dict({"turns": [{"text": "never"}]})
    with EmulationServer(scenario) as server:
        agent = _agent(server, journal)
        try:
            image = toolwire.Image.from_bytes(_png(4096), media_type="image/png")
            with pytest.raises(BlobTooLarge) as raised:
                await agent.run(["look", image], run_id="capped")
        finally:
            await agent.aclose()
        assert server.requests == []
    error = raised.value
    assert (error.size, error.maximum, error.media_type) == (4096, 1024, "image/png")
    assert "max_blob_bytes" in error.message
    assert _rows(store, "blobs") == []
    journal.close()


def test_the_cap_is_an_argument_of_both_stores(tmp_path: Any) -> None:
    journal = SQLiteJournal(tmp_path / "j.sqlite3", max_blob_bytes=10)
    assert journal.max_blob_bytes == 10
    journal.close()
    assert SQLiteJournal.max_blob_bytes == toolwire.journal.MAX_BLOB_BYTES == 32 * 1024 * 1024


def _drawing(size: int, seed: int) -> tuple[bytes, dict[str, Any]]:
    """An image a Gemini model makes, and the scenario item that sends it."""
    drawn = _png(size, seed=seed)
    inline = {"mimeType": "image/png", "data": base64.b64encode(drawn).decode()}
    return drawn, {"dialect": "gemini", "item": {"inlineData": inline}}


def _gemini(server: EmulationServer, journal: Any, **options: Any) -> Agent:
    _, dialect, model = PROVIDERS["gemini"]
    provider = make_provider("gemini", base_url=server.url_for(dialect), api_key="k")
    return Agent(provider, model=model, journal=journal, **options)


async def test_an_image_the_model_made_is_a_blob_and_read_back(store: str) -> None:
    drawn, item = _drawing(300_000, seed=11)
    scenario = Scenario.from_dict({"turns": [{"text": "Here it is.", "provider_items": [item]}]})
    journal = open_store(store)
    with EmulationServer(scenario) as server:
        agent = _gemini(server, journal)
        try:
            result = await agent.run("Draw a cat.", run_id="drawn")
        finally:
            await agent.aclose()
    image = toolwire.Image.from_bytes(drawn, media_type="image/png")
    assert result.messages[-1].parts == (image,)
    sha = hashlib.sha256(drawn).hexdigest()
    assert [(row[0], row[2]) for row in _rows(store, "blobs")] == [(sha, len(drawn))]
    texts = [str(row) for table in ("events", "messages") for row in _rows(store, table)]
    assert sum(len(text) for text in texts) < 20_000, "no record holds the bytes"
    log = journal.load_run("drawn")
    (answer,) = [e for e in log.events if e.kind == "model_response"]
    (state,) = answer.data["assistant"]["provider_state"]
    assert state["part"]["inlineData"]["data"] == {"sha256": sha, "size": len(drawn)}
    plan = plan_resume(log)  # the recorded answer, its image read back
    assert plan.response is not None and plan.response.assistant.parts == (image,)
    assert [ref.sha256 for ref in run_refs(log)] == [sha]
    journal.close()


async def test_an_image_the_model_made_is_sent_back_byte_for_byte_after_a_resume(
    store: str,
) -> None:
    drawn, item = _drawing(60_000, seed=12)
    turns = [
        {"text": "Drawn.", "provider_items": [item], "tool_calls": [{"name": "small_screenshot"}]},
        {"faults": [{"status": 400}], "text": "seen"},
    ]
    with EmulationServer(Scenario.from_dict({"turns": turns})) as server:
        first = open_store(store)
        agent = _gemini(server, first, tools=[small_screenshot])
        try:
            with pytest.raises(ProviderError):
                await agent.run("Draw, then look.", run_id="sent-back")
        finally:
            await agent.aclose()
            first.close()
        second = open_store(store)
        agent = _gemini(server, second, tools=[small_screenshot])
        try:
            resumed = await agent.resume("sent-back")
        finally:
            await agent.aclose()
            second.close()
        failed, again = server.requests[1], server.requests[2]
    assert resumed.output == "seen"
    assert failed == again, "the history rebuilt from the journal is the one first sent"
    said = [p for c in again["contents"] for p in c["parts"] if "inlineData" in p]
    assert [base64.b64decode(p["inlineData"]["data"]) for p in said] == [drawn]
    sha = hashlib.sha256(drawn).hexdigest()
    assert [row[0] for row in _rows(store, "blobs")] == [sha]


@tool(read_only=True)
def small_screenshot() -> str:
    """A screenshot of the page, described."""
    return "the page"


@pytest.mark.parametrize(
    "item",
    [
        {"type": "part", "part": {"inlineData": {"mimeType": "image/png", "data": "iVBORw0K"}}},
        {"type": "generated_image", "id": "ig_1", "media_type": "image/webp", "data": "UklGRg=="},
    ],
    ids=["gemini", "responses"],
)
def test_the_media_a_model_made_round_trips_through_a_reference(item: dict[str, Any]) -> None:
    message = {"kind": "assistant", "text": "", "provider_state": [{"type": "other"}, item]}
    blobs: dict[str, Blob] = {}
    stored = store_parts(message, blobs)
    (blob,) = blobs.values()
    kept = state_media(stored["provider_state"][1])
    assert kept == (blob.media_type, {"sha256": blob.sha256, "size": blob.size})
    assert [ref.sha256 for ref in part_refs(stored)] == [blob.sha256]
    assert inline_parts(stored, {blob.sha256: blob.body}.__getitem__) == message
    assert stored["provider_state"][0] == {"type": "other"}
    assert inline_parts(message, None) == message, "inline items need no blob table"
    for data in ({"sha256": blob.sha256, "size": -1}, {"sha256": 7, "size": 1}, {"size": 1}):
        odd = {"provider_state": [with_state_data(item, data)]}
        assert list(part_refs(odd)) == [] and inline_parts(odd, None) == odd
