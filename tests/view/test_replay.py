"""Partial arguments, replayed: a run recorded through the recording proxy,
its cassette given to the viewer, and each call's arguments shown as they
grew, delta by delta; hostile and secret-shaped content included."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from html import unescape
from pathlib import Path

import anyio
import pytest

from toolwire.journal import SQLiteJournal, close_journals
from toolwire.view._replay import (
    MAX_STEPS,
    ArgumentReplay,
    _grouped,
    _masked,
    load_replays,
    scrubber,
)

from ._support import (
    HOSTILE_TURNS,
    RECORDED_ARGUMENTS,
    SECRET,
    Viewer,
    _run,
    _scenario,
    echo_html,
    explode,
    make_recorded,
    serving,
)


@dataclass
class Recorded:
    journal: Path
    cassette: Path


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    root = tmp_path_factory.mktemp("replay")
    made = Recorded(root / "journal.sqlite3", root / "cassette")
    make_recorded(made.journal, made.cassette)
    anyio.run(
        _run, _scenario("hostile", HOSTILE_TURNS), [echo_html, explode], made.journal, "other-1"
    )
    close_journals()
    return made


@pytest.fixture(scope="module")
def viewer(recorded: Recorded) -> Iterator[Viewer]:
    with serving(recorded.journal, cassettes=(recorded.cassette,)) as served:
        yield served


def _steps(page: str) -> tuple[str, list[list[object]]]:
    found = re.search(r'<div class=scrubber data-call="([^"]+)" data-steps="([^"]+)">', page)
    assert found is not None, page
    return found[1], json.loads(unescape(found[2]))


def test_the_run_page_replays_each_calls_arguments_delta_by_delta(
    viewer: Viewer, recorded: Recorded
) -> None:
    with viewer.client() as client:
        page = client.get("/runs/recorded-1").text
    call_id, steps = _steps(page)
    reader = SQLiteJournal(recorded.journal, read_only=True)
    try:
        [intent] = [e for e in reader.load_run("recorded-1").events if e.kind == "tool_intent"]
    finally:
        reader.close()
    assert intent.call_id == call_id  # found by the id the stream and the journal share
    whole = "".join(str(delta) for _, delta in steps)
    expected = json.dumps(RECORDED_ARGUMENTS, separators=(",", ":"))
    assert len(steps) > 10 and len(whole) == len(expected)  # many deltas, every character
    times = [float(str(ms)) for ms, _ in steps]
    assert times == sorted(times)
    # The key is masked in every step; the rest is as the model wrote it.
    assert SECRET not in whole and "•" * len(SECRET) in whole
    assert whole.startswith(expected[: expected.index("sk-")])
    assert whole.endswith(' in the middle"}')
    # Hostile text stays data: escaped in the attribute, and in the fallback text.
    scrub = page.split("<div class=scrubber")[1].split("</div></div>")[0]
    assert "<script" not in scrub and "&lt;/pre&gt;&lt;script&gt;" in scrub
    assert re.findall(r"<script[^>]*>", page) == [f'<script src="{viewer.root}/static/view.js">']
    assert SECRET not in page and "VIEWERsecret" not in page
    assert f"{len(steps)} deltas" in scrub and "0001.json" in scrub


def test_a_call_of_another_run_with_the_same_id_has_no_replay(
    viewer: Viewer, recorded: Recorded
) -> None:
    with viewer.client() as client:
        page = client.get("/runs/recorded-1").text
        other = client.get("/runs/other-1").text
    call_id, _ = _steps(page)
    assert f"call {call_id}" in other  # the emulation gives the same id...
    assert "class=scrubber" not in other  # ...to a call with other arguments


def test_without_a_cassette_there_is_no_scrubber(recorded: Recorded) -> None:
    with serving(recorded.journal) as viewer, viewer.client() as client:
        page = client.get("/runs/recorded-1").text
    assert "class=scrubber" not in page


def test_an_unreadable_cassette_is_said_and_the_page_still_shows(
    recorded: Recorded, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "0001.json").write_text("{not json")
    with serving(recorded.journal, cassettes=(broken,)) as viewer, viewer.client() as client:
        page = client.get("/runs/recorded-1")
    assert page.status_code == 200 and "is not valid JSON" in page.text


def test_a_secret_half_arrived_is_masked_in_every_step() -> None:
    deltas = ['{"k": "', SECRET[:9], SECRET[9:20], SECRET[20:], '"}']
    masked = _masked(deltas)
    assert [len(m) for m in masked] == [len(d) for d in deltas]
    assert masked[0] == deltas[0] and masked[-1] == deltas[-1]
    assert all(set(m) == {"•"} for m in masked[2:4])
    assert "VIEWER" not in "".join(masked)


def test_a_long_stream_is_grouped_into_bounded_steps() -> None:
    steps = [(float(i), "x") for i in range(MAX_STEPS * 2 + 1)]
    grouped = _grouped(steps)
    assert len(grouped) <= MAX_STEPS and "".join(d for _, d in grouped) == "x" * len(steps)
    assert grouped[-1][0] == float(len(steps) - 1)
    replay = ArgumentReplay(
        call_id="c<1>", name="n", exchange="/x/0001.json", steps=grouped, deltas=len(steps)
    )
    html = scrubber(replay)
    assert f"grouped into {len(grouped)} steps" in html and 'data-call="c&lt;1&gt;"' in html


def test_decoded_cassettes_are_read_again_only_when_they_change(recorded: Recorded) -> None:
    first, problems = load_replays([recorded.cassette])
    again, _ = load_replays([recorded.cassette])
    assert problems == [] and [len(v) for v in first.values()] == [1]
    assert next(iter(first.values()))[0] is next(iter(again.values()))[0]  # cached
