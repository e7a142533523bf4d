"""Rendering without a server: the JSON diff, a record of a kind this
toolwire does not know, folding, and paging through many runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolwire.journal import JournalError, JournalEvent, SQLiteJournal
from toolwire.view._diff import json_diff
from toolwire.view._events import render_event
from toolwire.view._html import FOLD_AT, value
from toolwire.view._listing import PAGE_SIZE, ListQuery, list_page


def test_the_diff_names_each_change_by_its_path() -> None:
    old = [{"kind": "user", "text": "hi"}, {"kind": "assistant", "calls": [1, 2]}]
    new = [{"kind": "user", "text": "hello"}, {"kind": "assistant", "calls": [1]}, {"kind": "x"}]
    assert list(json_diff(old, new)) == [
        ("~", "$[0].text", "hello"),
        ("-", "$[1].calls[1]", 2),
        ("+", "$[2]", {"kind": "x"}),
    ]
    assert list(json_diff({"a": 1}, {"a": 1})) == []
    assert list(json_diff({"a": 1}, {"b": 1})) == [("-", "$.a", 1), ("+", "$.b", 1)]
    assert list(json_diff(1, True)) == [("~", "$", True)]


def test_a_record_of_an_unknown_kind_is_a_journal_error_naming_it() -> None:
    with pytest.raises(JournalError, match="kind 'future<b>'"):
        JournalEvent(seq=3, at=10.5, kind="future<b>", turn=2, data={"x": "<script>y()</script>"})


def test_a_response_id_kept_by_the_provider_shows_its_data_escaped() -> None:
    event = JournalEvent(
        seq=3, at=10.5, kind="model_streaming", turn=2, data={"response_id": "<script>y()"}
    )
    block = render_event(event, start=10.0)
    assert "<script>" not in block and "&lt;script&gt;y()" in block
    assert 'data-kind="model_streaming"' in block
    assert "+0.500 s" in block and "turn 2" in block


def test_suspensions_and_answers_show_hostile_names_and_principals_as_text() -> None:
    hostile = "<script>z()</script>"
    suspended = JournalEvent(
        seq=5,
        at=1.0,
        kind="run_suspended",
        data={"pending": [{"name": hostile, "awaiting": "approval"}, "not a call"]},
    )
    answer = JournalEvent(
        seq=6,
        at=2.0,
        kind="answer",
        turn=1,
        call_id="c1",
        data={"name": "lookup", "principal": hostile, "content": hostile},
    )
    approval = JournalEvent(
        seq=7,
        at=3.0,
        kind="approval",
        turn=1,
        call_id="c2",
        data={"name": "launch", "decision": "deny", "principal": "ann", "reason": hostile},
    )
    blocks = [render_event(e, start=0.0) for e in (suspended, answer, approval)]
    assert all("<script>" not in block for block in blocks)
    assert "waits on 1 call(s): &lt;script&gt;" in blocks[0]
    assert "given by &lt;script&gt;" in blocks[1] and "&lt;script&gt;z()" in blocks[1]
    assert "deny</span> by ann: &lt;script&gt;" in blocks[2]


def test_an_interrupted_call_shows_as_may_have_run() -> None:
    # A call that started with no outcome recorded (a crash, or a worker
    # fenced out by a takeover that may still run it) is never "not run".
    result = {"name": "pay", "ok": False, "error": "failed", "content": "{}"}
    data = {"result": result, "interrupted": True, "may_have_run": True}
    block = render_event(JournalEvent(seq=4, at=1.0, kind="tool_outcome", data=data), start=0.0)
    assert "may have run" in block and "not run again" not in block


def test_long_values_fold_and_short_ones_do_not() -> None:
    assert "<details>" not in value("short")
    long = {"text": "z " * FOLD_AT}
    folded = value(long, label="result")
    assert folded.startswith("<details><summary>result · ") and "characters" in folded
    assert json.dumps(long, indent=2).count("z") == folded.split("<pre>")[1].count("z")


def test_keyset_pages_walk_every_run_once(tmp_path: Path) -> None:
    journal = SQLiteJournal(tmp_path / "many.sqlite3")
    total = PAGE_SIZE * 2 + 7
    for number in range(total):
        run_id = f"run-{number:04d}"
        header = json.dumps({"model": "small" if number % 2 else "large", "provider": "p"})
        journal.record_run(run_id, header=header, messages=[], resumed=False)
        status = "failed" if number % 10 == 0 else "answered"
        journal.record_end(run_id, status=status, summary="{}", data="{}")
    journal.close()
    reader = SQLiteJournal(tmp_path / "many.sqlite3", read_only=True)
    seen: list[str] = []
    query = ListQuery()
    for _ in range(10):
        page = list_page(reader, query)
        seen += re.findall(r'<tr data-run="([^"]+)">', page)
        found = re.search(r'rel=next href="/\?before=(\d+)"', page)
        if found is None:
            break
        query = ListQuery(before=int(found.group(1)))
    assert seen == [f"run-{n:04d}" for n in reversed(range(total))]
    failed = reader.page_runs(status="failed", search="larg", limit=100)
    assert [s.run_id for _, s in failed] == [
        f"run-{n:04d}" for n in range(total - 1, -1, -1) if n % 10 == 0
    ]
    assert [e.seq for e in reader.events_after("run-0003", 1)] == [2]
    assert reader.events_after("run-0003", 2) == []
    assert [e.kind for e in reader.events_after("run-0003", 0)] == ["run_started", "run_finished"]
    reader.close()


def test_a_schema_1_journal_pages_and_follows_as_it_is(tmp_path: Path) -> None:
    from tests.journal.test_batching import _schema_1_file

    path = tmp_path / "old.sqlite3"
    _schema_1_file(path)
    reader = SQLiteJournal(path, read_only=True)
    assert [s.run_id for _, s in reader.page_runs()] == ["new", "old"]
    (position, _), *_ = reader.page_runs(search="ne")
    assert [s.run_id for _, s in reader.page_runs(before=position)] == ["old"]
    assert [e.kind for e in reader.events_after("old", 2)] == ["model_response", "run_finished"]
    reader.close()
