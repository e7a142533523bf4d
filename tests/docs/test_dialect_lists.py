"""The documents' lists and tables of dialects are the registry's
(:mod:`tests.docs._dialect_lists`): each block is what the registry makes,
no page lists dialects by hand, and the check fails on a drifted list."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from toolwire.stream.codecs import registered, wire_dialect

from ._dialect_lists import (
    DOCUMENTS,
    drift,
    hand_lists,
    names,
    render,
    rewrite,
)

PAGES = {p.name: p for p in DOCUMENTS}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_each_pages_lists_of_dialects_are_the_registrys(name: str) -> None:
    path = PAGES[name]
    text = path.read_text(encoding="utf-8")
    found = drift(path, text, registered())
    assert not found, (
        "\n".join(map(str, found)) + "\nrun: PYTHONPATH=src python tests/docs/_dialect_lists.py"
    )
    assert hand_lists(path, text, registered()) == []


def test_the_lists_that_were_written_by_hand_are_made_now() -> None:
    page = PAGES["dialects.md"].read_text(encoding="utf-8")
    assert "<!-- dialects: every -->" in page and "<!-- dialects: table -->" in page
    assert "`gemini-interactions`" in page  # the list that had drifted
    assert "<!-- dialects: paths -->" in PAGES["cassettes.md"].read_text(encoding="utf-8")


def test_a_list_that_differs_from_the_registry_fails() -> None:
    page = Path("page.md")
    dialects = registered()
    written = "Dialects: <!-- dialects: every -->`openai-chat`, `gemini`<!-- /dialects -->.\n"
    (found,) = drift(page, written, dialects)
    assert found.where == "page.md:1" and found.selection == "every"
    assert found.expected == render(dialects, "every")
    fixed = rewrite(written, dialects)
    assert drift(page, fixed, dialects) == []
    assert "`gemini-interactions`" in fixed


def test_a_dialect_left_out_of_the_registry_is_a_drift_too() -> None:
    page = Path("page.md")
    fewer = [d for d in registered() if d.name != "cohere-v2"]
    text = rewrite("<!-- dialects: paths --><!-- /dialects -->", registered())
    assert drift(page, text, registered()) == []
    (found,) = drift(page, text, fewer)
    assert "`cohere-v2`" in found.written and "`cohere-v2`" not in found.expected


def test_a_list_by_hand_and_a_stray_marker_are_found() -> None:
    page = Path("page.md")
    text = (
        "one `openai-chat` and `gemini` is no list\n"
        "speaks `openai-chat`, `gemini` and `cohere-v2`\n"
        '# or "openai-responses", "anthropic-messages", "gemini"\n'
        "<!-- /dialects -->\n"
    )
    assert hand_lists(page, text, registered()) == [
        "page.md:2: a list of dialects by hand: speaks `openai-chat`, `gemini` and `cohere-v2`",
        'page.md:3: a list of dialects by hand: # or "openai-responses", "anthropic-messages", '
        '"gemini"',
        "page.md:4: a dialects marker outside a block",
    ]


def test_an_unknown_selection_is_a_drift() -> None:
    (found,) = drift(Path("p.md"), "<!-- dialects: everything --><!-- /dialects -->", registered())
    assert found.selection == "everything" and "every" in found.expected


def test_the_selections_read_the_registrations() -> None:
    dialects = registered()
    assert names(dialects, "every") == [d.name for d in dialects]
    assert "cohere-v2" in names(dialects, "paths")
    assert "cohere-v2" not in names(dialects, "providers")
    assert names(dialects, "providers") == names(dialects, "served")
    anthropic = wire_dialect("anthropic-messages")
    assert anthropic.provider is not None
    renamed = replace(anthropic, provider=replace(anthropic.provider, class_name="Claude"))
    assert "`Claude` (`anthropic`)" in render([renamed], "table")
    with pytest.raises(ValueError, match="no dialect selection"):
        names(dialects, "nope")
