"""Runs too big to show whole: a run of 3,000 turns renders its page of 100
turns in well under a second, each turn's diff reads only the messages it
added, values past 65,536 characters are cut (saying how much), and a
megabyte of hostile text renders in bounded work (a property test).

The logs are made from a real run's records (an agent against the emulation
server), its tool turn repeated with fresh sequence numbers, turns and
call ids, and the conversation grown to match."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from tests._linear import assert_linear, cpu_guard
from toolwire.journal import JournalEvent, RunLog, SQLiteJournal, close_journals
from toolwire.view._html import CUT_AT
from toolwire.view._run_page import TURNS_PER_PAGE, run_page

from ._support import _run, _scenario, echo_html, serving

CPU_BOUND = 3.0
"""Seconds of CPU a page may take (:func:`tests._linear.cpu_guard`, which
stops one that takes longer): generous (a 3,000-turn page takes about 0.3 s
on the development machine, a megabyte of hostile text about 0.1 s; the
quadratic page this guards against took 30 s), and CPU time, not wall time,
though a machine busy on every core still slows a process's own CPU time
several times over."""


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("long") / "journal.sqlite3"
    turns = [{"tool_calls": [{"name": "echo_html", "arguments": {"text": "hi"}}]}, {"text": "ok"}]
    anyio.run(lambda: _run(_scenario("long", turns), [echo_html], path, "long-1"))
    close_journals()
    return path


@pytest.fixture(scope="module")
def real(journal: Path) -> RunLog:
    reader = SQLiteJournal(journal, read_only=True)
    try:
        return reader.load_run("long-1")
    finally:
        reader.close()


def _grown(log: RunLog, turns: int, *, filler: str | None = None) -> RunLog:
    """``log`` (a tool turn, then an answer) with its tool turn ``turns`` times;
    ``filler``: the text every argument, result, answer and prompt holds."""
    kinds = [e.kind for e in log.events]
    tool = ["model_request", "model_response", "tool_intent", "tool_outcome"]
    assert kinds[:8] == ["run_started", *tool, "model_request", "model_response", "run_finished"]
    start, tool_turn, answer_turn, end = (
        log.events[0],
        log.events[1:5],
        log.events[5:7],
        log.events[7],
    )
    events: list[JournalEvent] = [start]

    def add(event: JournalEvent, turn: int | None) -> None:
        data = dict(event.data)
        if event.kind == "model_request":
            data["messages"] = 1 + 2 * ((turn or 1) - 1)
        if filler is not None:
            _fill(data, filler)
        call = f"call_{turn}" if event.call_id else None
        events.append(
            dataclasses.replace(event, seq=len(events) + 1, turn=turn, data=data, call_id=call)
        )

    for turn in range(1, turns + 1):
        for event in tool_turn:
            add(event, turn)
    for event in answer_turn:
        add(event, turns + 1)
    add(end, None)
    user, assistant, result = (dict(m) for m in log.messages)
    if filler is not None:
        user["text"] = filler
    messages = (user, *(m for _ in range(turns) for m in (assistant, result)))
    return dataclasses.replace(log, events=tuple(events), messages=messages)


def _fill(data: dict[str, object], filler: str) -> None:
    if "arguments" in data:
        data["arguments"] = {"text": filler}
    if isinstance(data.get("result"), dict):
        data["result"] = {**data["result"], "content": filler}  # type: ignore[dict-item]
    if isinstance(data.get("assistant"), dict):
        data["assistant"] = {**data["assistant"], "text": filler}  # type: ignore[dict-item]
    if "output" in data:
        data["output"] = filler


def test_a_run_of_3000_turns_renders_a_page_of_100_within_the_cpu_bound(real: RunLog) -> None:
    log = _grown(real, 3000)
    with cpu_guard(CPU_BOUND):  # was 30.5 s on a87298d
        page = run_page(log)
    sections = re.findall(r'<section class=turn data-turn="(\d+)">', page)
    assert sections == [str(n) for n in range(1, TURNS_PER_PAGE + 1)]
    assert "page 1 of 31" in page and 'href="/runs/long-1?page=31">turns 3001–3100</a>' in page
    assert 'data-follow="no"' in page  # an earlier page than the last follows nothing
    # Each turn's diff shows the two messages the turn before added, not the whole
    # conversation again (which made the page quadratic in its turns).
    assert page.count("(2 more than the turn before)") == TURNS_PER_PAGE - 1
    assert len(re.findall(r"<li class=", page)) <= 2 * TURNS_PER_PAGE


def test_a_runs_page_is_linear_in_its_turns(real: RunLog) -> None:
    """Measured as work (calls made), not time: ten times the turns may cost
    at most fifteen times the work (each turn diffing the whole conversation
    again made it a hundred times)."""
    assert_linear(lambda turns: _grown(real, turns), run_page, sizes=(300, 3000))


def test_the_last_page_holds_the_last_turns_and_the_runs_end(real: RunLog) -> None:
    log = _grown(real, 3000)
    page = run_page(log, page=31)
    assert re.findall(r'<section class=turn data-turn="(\d+)">', page) == ["3001"]
    assert 'data-kind="run_finished"' in page and 'data-kind="run_started"' not in page
    assert 'data-follow="yes"' in page
    assert "messages sent: 6001 (2 more than the turn before)" in page
    assert run_page(log, page=99) == page  # past the last: the last


def test_the_page_parameter_is_checked(journal: Path) -> None:
    with serving(journal) as viewer, viewer.client() as client:
        assert client.get("/runs/long-1", params={"page": "1"}).status_code == 200
        assert client.get("/runs/long-1", params={"page": "9"}).status_code == 200
        for bad in ("0", "-1", "x", "١", "9" * 9):
            assert client.get("/runs/long-1", params={"page": bad}).status_code == 400, bad


def test_a_long_value_is_cut_and_the_page_says_how_much(real: RunLog) -> None:
    log = _grown(real, 1, filler="word " * 40_000)  # 200,000 characters in each value
    page = run_page(log)
    assert "cut: the first 65,536 of 200,000 characters are shown" in page
    assert "(134,464 more are in the journal)" in page
    assert "word " * 100 in page and len(page) < 12 * CUT_AT


_UNITS = ["eyJ-", "sk-", "\ud800", "\x00", "\u202e", "\u200b", "<", "&", "'", "Bearer ",
          "key=", "=", "a", "A1b2", " ", "\n", "é", "{\"", "\\"]  # fmt: skip
"""Pieces of hostile text: redaction's worst cases, what cannot be sent,
what cannot be seen, and what HTML and JSON escape."""


@settings(max_examples=examples(10), deadline=None)
@given(st.lists(st.sampled_from(_UNITS), min_size=1, max_size=6), st.integers(0, 2**16))
def test_a_megabyte_of_hostile_text_renders_in_bounded_work(
    real: RunLog, units: list[str], seed: int
) -> None:
    pattern = "".join(units)
    filler = (pattern * (1_000_000 // len(pattern) + 1))[:1_000_000]
    log = _grown(real, 1, filler=filler[seed % 7 :])
    with cpu_guard(CPU_BOUND):
        page = run_page(log)
    page.encode("utf-8")  # it can be sent
    assert "\x00" not in page and "\ud800" not in page
    # Bounded by what is shown, not what the journal holds: seven values, each cut.
    assert len(page) < 7 * 8 * CUT_AT + 100_000


@pytest.mark.parametrize("unit", ["eyJ-", "\ud800", "\u202e", "a", "<&"])
def test_rendering_hostile_text_is_linear_in_its_size(real: RunLog, unit: str) -> None:
    assert_linear(lambda size: _grown(real, 1, filler=unit * (size // len(unit))), run_page)
