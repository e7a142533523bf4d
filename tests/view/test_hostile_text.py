"""Text from a model that cannot be sent as it is, or does not read as what
it is: lone surrogates and NULs on the pages and in the live stream, and
invisible and bidirectional characters on the approval pages; and a form
whose digest or signature is no ASCII digest."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from toolwire.journal import close_journals

from ._support import _run, _scenario, echo_html, launch, serving

BROKEN = "a\ud800b\x00c\x1bd"
"""A lone surrogate, a NUL and an escape: what a model can send in JSON."""
TRICK = "rm -rf ~/\u202eexe.sppa\u202c\u200b \u2066x\u2069"
"""An override that reverses what follows, a zero-width space, an isolate."""


def _make(path: Path, run_id: str, turns: list[dict[str, object]], tools: list[object]) -> None:
    anyio.run(lambda: _run(_scenario(run_id, turns), tools, path, run_id))
    close_journals()


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("hostile-text") / "journal.sqlite3"
    broken = [
        {"tool_calls": [{"name": "echo_html", "arguments": {"text": BROKEN}}]},
        {"text": f"done {BROKEN}"},
    ]
    _make(path, "broken-1", broken, [echo_html])
    tricky = [{"tool_calls": [{"name": "launch", "arguments": {"target": TRICK}}]}, {"text": "x"}]
    _make(path, "tricky-1", tricky, [launch])
    return path


def test_a_lone_surrogate_or_a_nul_shows_as_a_mark_on_the_page(journal: Path) -> None:
    with serving(journal) as viewer, viewer.client() as client:
        page = client.get("/runs/broken-1")
    assert page.status_code == 200  # was a 500: the page could not be encoded
    assert "\x00" not in page.text and "\x1b" not in page.text
    assert "a⟨U+D800⟩b⟨U+0000⟩c⟨U+001B⟩d" in page.text


def test_the_live_stream_sends_them_as_marks_and_ends(journal: Path) -> None:
    with serving(journal) as viewer, viewer.client() as client:
        stream = client.get("/runs/broken-1/events")
    assert stream.status_code == 200
    assert "event: end\ndata: answered" in stream.text  # was a reset stream, reconnected forever
    assert "⟨U+D800⟩" in stream.text and "\x00" not in stream.text


def test_the_approval_page_shows_invisible_characters_and_says_so(journal: Path) -> None:
    with serving(journal) as viewer, viewer.client() as client:
        page = client.get("/runs/tricky-1").text
    pending = page.split("<section id=pending")[1].split("</section>")[0]
    for code in ("202E", "202C", "200B", "2066", "2069"):
        assert f"<mark class=invisible>⟨U+{code}⟩</mark>" in pending, code
    assert not any(c in pending for c in "\u202e\u202c\u200b\u2066\u2069")
    assert "5 invisible or bidirectional character(s)" in pending


@pytest.mark.parametrize(
    ("field", "offered", "said"),
    [
        ("digest", "sha256:" + "é" * 64, "the digest is not one"),
        ("digest", "sha256:" + "\u0661" * 64, "the digest is not one"),  # Arabic-Indic digits
        ("signature", "sïgnature", "the signature is not one"),
    ],
)
def test_a_digest_or_signature_that_is_not_ascii_is_a_400(
    journal: Path, field: str, offered: str, said: str
) -> None:
    form = {"digest": "sha256:" + "0" * 64, field: offered}
    with serving(journal) as viewer, viewer.client() as client:
        page = client.get("/runs/tricky-1").text
        call = page.split('data-call="')[1].split('"')[0]
        answer = client.post(
            f"/runs/tricky-1/calls/{call}/approve", data=form, headers={"origin": viewer.origin}
        )
    assert answer.status_code == 400 and said in answer.text
