"""The journal's records are typed and versioned (``toolwire.journal._kinds``):
every kind decodes to its type and encodes back to what was stored, a kind
this toolwire does not know or a version newer than it reads is a
``JournalError`` naming it, and no code outside the record modules reads a
record's payload by key."""

from __future__ import annotations

import ast
import re
import typing
from pathlib import Path

import pytest

import toolwire
from toolwire.journal import (
    VERSIONS,
    JournalError,
    JournalEvent,
    ModelFailed,
    Record,
    SQLiteJournal,
    ToolOutcome,
    payload_of,
)
from toolwire.journal._kinds import KINDS, decode, encode, record_of

SRC = Path(toolwire.__file__).resolve().parent
FIXTURE = Path(__file__).parent.parent / "fixtures" / "journals" / "a87298d.sqlite3"
RECORD_MODULES = {SRC / "journal" / "_kinds.py", SRC / "journal" / "_records.py"}
"""Where payloads are read by key: the records (``_kinds``), and the run's
row and the event's envelope (``_records``)."""


def test_the_union_is_closed_and_each_kind_has_a_version() -> None:
    classes = set(typing.get_args(Record))
    assert classes == set(KINDS.values()) and len(classes) == 18
    assert VERSIONS == {cls.kind: cls.version for cls in classes}
    assert all(version >= 1 for version in VERSIONS.values())


def test_each_record_of_a_journal_encodes_back_to_what_was_stored(tmp_path: Path) -> None:
    journal = SQLiteJournal(FIXTURE, read_only=True)
    try:
        events = [e for run in journal.list_runs() for e in journal.load_run(run.run_id).events]
    finally:
        journal.close()
    assert {e.kind for e in events} >= {"run_started", "tool_outcome", "approval"}
    for event in events:
        kind, version, payload = encode(event.record)
        assert (kind, version) == (event.kind, VERSIONS[event.kind])
        assert payload == event.data, event.kind
        # A kind past version 1 (tool_outcome 2: results with parts) reads
        # its version 1 records unchanged, and writes them with their "v".
        assert payload_of(event.record) == (payload if version == 1 else {**payload, "v": version})
        assert decode(kind, version, payload) == decode(kind, 1, event.data) == event.record


def test_a_missing_or_mistyped_value_reads_as_its_default() -> None:
    failed = record_of("model_failed", {"elapsed": "soon", "error": ["x"]})
    assert failed == ModelFailed()
    assert not failed.priced and "usage" not in payload_of(failed)
    priced = record_of("model_failed", {"usage": None, "cost": None})
    assert isinstance(priced, ModelFailed) and priced.priced
    assert payload_of(priced) == {"elapsed": None, "error": None, "usage": None, "cost": None}
    # An interrupted call of a journal older than ``may_have_run`` may have run.
    old = record_of("tool_outcome", {"result": {}, "eager": False, "interrupted": True})
    assert isinstance(old, ToolOutcome) and old.may_have_run
    header = record_of("run_started", {"api": "openai-chat", "tools": ["a", 1]})
    assert getattr(header, "dialect", None) == "openai-chat"
    assert getattr(header, "tools", None) == ("a", "1")


def test_an_unknown_kind_or_a_newer_version_is_a_journal_error_naming_it() -> None:
    with pytest.raises(JournalError, match="kind 'tool_dream'"):
        record_of("tool_dream", {})
    newer = VERSIONS["tool_intent"] + 1
    with pytest.raises(JournalError, match=f"'tool_intent' of version {newer}.*upgrade toolwire"):
        record_of("tool_intent", {"v": newer, "name": "x"})
    with pytest.raises(JournalError, match="version 'two'"):
        record_of("tool_intent", {"v": "two"})
    explicit = record_of("tool_intent", {"v": 1, "name": "x"})
    assert explicit == record_of("tool_intent", {"name": "x"})
    with pytest.raises(JournalError, match="kind 'tool_dream'"):
        JournalEvent(seq=1, at=0.0, kind="tool_dream")


def test_a_journal_holding_an_unknown_kind_says_which_run_and_record(tmp_path: Path) -> None:
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    try:
        journal.record_run("r1", header="{}", messages=[], resumed=False)
        journal.record_event("r1", "model_request", '{"messages": 1, "new": 1}', turn=1)
        journal.record_event("r1", "tool_dream", '{"x": 1}', turn=1)
        with pytest.raises(JournalError, match=r"run r1: event 3: .*kind 'tool_dream'"):
            journal.load_run("r1")
        with pytest.raises(JournalError, match=r"'model_request' of version 9"):
            journal.record_event("r1", "model_request", '{"v": 9}', turn=2)
            journal.events_after("r1", 3)
    finally:
        journal.close()


def _sources() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if p not in RECORD_MODULES)


def test_no_code_reads_a_payload_by_key_outside_the_record_modules() -> None:
    pattern = re.compile(r"\.data\.get\(|\bdata\[[\"']")
    found = [
        f"{path.relative_to(SRC)}:{number}: {line.strip()}"
        for path in _sources()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.search(line)
    ]
    assert found == []


def test_no_code_reads_an_events_data_outside_the_record_modules() -> None:
    # ``step.data`` is a record's JSON text on its way to a store.
    found = []
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        if "toolwire.journal" not in text and path.parent.name != "journal":
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and node.attr == "data":
                if not (isinstance(node.value, ast.Name) and node.value.id == "step"):
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}: {ast.unparse(node)}")
    assert found == []
