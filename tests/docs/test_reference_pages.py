"""The reference pages say what the code says: docs/events.md names every
event class with its true ``kind`` and fields, docs/scenarios.md every key of
a scenario, a turn and a fault."""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

import toolwire
from toolwire import run
from toolwire.testing.scenario import Fault, Scenario, Turn

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE = DOCS / "events.md"
_ROW = re.compile(r"^\| `(?P<cls>\w+)` \| `(?P<kind>\w+)` \|(?P<fields>[^|]*)\|", re.MULTILINE)
# Shown on the page beside the dataclass fields: a property computed from them.
_PROPERTIES = {"ToolCallDelta": {"partial"}}
# Kept off the page: what a reader of the events has no use for.
_INTERNAL = {"ToolCallDelta": {"source", "mark"}}


def rows() -> dict[str, tuple[str, set[str]]]:
    """Each row's class: its kind and the fields named (``call`` in "`call`
    (`ToolCall`)", not the type in parentheses)."""
    return {
        m["cls"]: (m["kind"], set(re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", m["fields"]))))
        for m in _ROW.finditer(PAGE.read_text(encoding="utf-8"))
    }


def event_classes() -> list[type]:
    union = typing.get_args(run.AgentEvent)
    return [cls for cls in union if dataclasses.is_dataclass(cls)]


def test_every_event_is_on_the_page_as_it_is() -> None:
    page = rows()
    classes = event_classes()
    assert {cls.__name__ for cls in classes} == set(page)
    for cls in classes:
        fields = {f.name for f in dataclasses.fields(cls)} - {"kind"}
        kind = next(f.default for f in dataclasses.fields(cls) if f.name == "kind")
        shown_kind, shown_fields = page[cls.__name__]
        assert shown_kind == kind, cls.__name__
        expected = fields - _INTERNAL.get(cls.__name__, set()) | _PROPERTIES.get(
            cls.__name__, set()
        )
        assert shown_fields == expected, cls.__name__
        assert getattr(toolwire, cls.__name__) is cls


def table_keys(page: str, heading: str) -> set[str]:
    """The first column's names of the table under ``## heading``."""
    section = page.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE))


def test_the_scenario_page_has_every_key() -> None:
    page = (DOCS / "scenarios.md").read_text(encoding="utf-8")
    for heading, model in (("Scenario", Scenario), ("Turn", Turn), ("Fault", Fault)):
        assert table_keys(page, heading) == set(model.model_fields), heading
