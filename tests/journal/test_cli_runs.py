"""``toolwire runs``: list, show (timeline and JSON), export (JSON Lines),
and a one-line error with exit status 2 for an unknown run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolwire.cli import main

from ._holder import open_store
from ._support import FAKE_KEY


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def demo_journal(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The journal after ``toolwire demo`` ran (offline, emulation server):
    a SQLite file, or a Postgres URL."""
    if request.param == "sqlite":
        where = str(tmp_path_factory.mktemp("demo") / "journal.sqlite3")
    else:
        where = request.getfixturevalue("postgres_server").new_database()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOOLWIRE_JOURNAL", where)
        result = CliRunner().invoke(main, ["demo", "--json", "--no-eager"])
    assert result.exit_code == 0, result.output
    return where


def invoke(journal: Path | str, *args: str) -> Any:
    return CliRunner().invoke(main, ["runs", *args, "--journal", str(journal)])


def test_list_shows_the_demo_run(demo_journal: str) -> None:
    result = invoke(demo_journal, "list")
    assert result.exit_code == 0, result.output
    assert "answered" in result.output and "gpt-4.1-mini" in result.output
    as_json = invoke(demo_journal, "list", "--json")
    runs = json.loads(as_json.output)["runs"]
    assert len(runs) == 1 and runs[0]["status"] == "answered" and runs[0]["tool_calls"] == 2


def test_show_is_a_timeline_of_the_demo_run(demo_journal: str) -> None:
    result = invoke(demo_journal, "show", "last")
    assert result.exit_code == 0, result.output
    out = result.output
    for expected in (
        "answered",
        "user: 杭州天气怎么样?现在几点?",
        "turn 1  request",
        "finish tool_calls",
        "▶ get_weather",
        "✓ get_weather",
        "✓ get_current_time",
        "turn 2",
        "run answered",
        "answer: 杭州现在小雨",
    ):
        assert expected in out, expected
    assert out.index("▶ get_weather") < out.index("✓ get_weather") < out.index("turn 2")
    assert FAKE_KEY not in out and "emulated-key" not in out


def test_show_json_is_one_object_with_turns(demo_journal: str) -> None:
    journal = open_store(demo_journal, read_only=True)
    run_id = journal.find_run("last")
    journal.close()
    result = invoke(demo_journal, "show", run_id[:8], "--json")
    data = json.loads(result.output)
    assert data["run"]["run_id"] == run_id
    first, second = data["turns"]
    assert first["answer"]["finish_reason"] == "tool_calls"
    assert sorted(c["name"] for c in first["tool_calls"]) == ["get_current_time", "get_weather"]
    assert all(c["ok"] and c["attempts"] == 1 for c in first["tool_calls"])
    assert second["answer"]["text"].startswith("杭州现在小雨")


def test_export_is_json_lines(demo_journal: str) -> None:
    result = invoke(demo_journal, "export", "last")
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert lines[0]["type"] == "run"
    kinds = [line["kind"] for line in lines if line["type"] == "event"]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert kinds.count("tool_intent") == 2 and kinds.count("tool_outcome") == 2
    assert [line["type"] for line in lines].count("message") >= 4


def test_an_unknown_run_exits_2_with_one_line(demo_journal: str) -> None:
    for command in (["show", "nope"], ["export", "nope"], ["show", "nope", "--json"]):
        result = invoke(demo_journal, *command)
        assert result.exit_code == 2
        assert result.output.count("\n") == 1 and "no run 'nope'" in result.output


def test_a_missing_journal_is_never_created(tmp_path: Path) -> None:
    path = tmp_path / "none.sqlite3"
    listed = CliRunner().invoke(main, ["runs", "list", "--journal", str(path)])
    assert listed.exit_code == 0 and "no runs" in listed.output
    shown = CliRunner().invoke(main, ["runs", "show", "x", "--journal", str(path)])
    assert shown.exit_code == 2 and "no journal" in shown.output
    assert not path.exists()


def test_the_default_journal_and_journaling_off(
    _hermetic_journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "no runs" in CliRunner().invoke(main, ["runs", "list"]).output
    monkeypatch.setenv("TOOLWIRE_JOURNAL", "off")
    result = CliRunner().invoke(main, ["runs", "list"])
    assert result.exit_code == 2 and "journaling is off" in result.output


def test_a_failed_run_shows_no_none_and_keeps_the_endpoint(tmp_path: Path) -> None:
    from toolwire import Agent, ProviderError
    from toolwire.providers import OpenAIChat
    from toolwire.testing import EmulationServer, Scenario

    journal = tmp_path / "failed.sqlite3"
    with EmulationServer(Scenario.from_dict({"turns": [{"text": "x"}]})) as server:
        wrong = OpenAIChat(base_url=server.base_url + "/wrong/v2", api_key="test-key-long")
        agent = Agent(wrong, model="m", journal=journal)
        with pytest.raises(ProviderError):
            agent.run_sync("hi")
    listed = CliRunner().invoke(main, ["runs", "list", "--journal", str(journal)])
    assert listed.exit_code == 0
    row = listed.output.splitlines()[1]
    assert "failed" in row and "None" not in row and row.split()[-2:] == ["-/-", "$0"]
    shown = invoke(journal, "show", "last")
    # The endpoint that answered 404 is named, not scrubbed to "<path>".
    assert "POST /wrong/v2/chat/completions" in shown.output and "<path>" not in shown.output


def test_a_failing_tools_traceback_is_kept_and_shown_with_verbose(tmp_path: Path) -> None:
    from toolwire import Agent, tool
    from toolwire.providers import OpenAIChat
    from toolwire.testing import EmulationServer, Scenario

    @tool
    def lookup(city: str) -> str:
        """Looks a city up."""
        raise ValueError(f"no row for {city}: password=hunter2hunter2 key {FAKE_KEY}")

    journal = tmp_path / "tool-failed.sqlite3"
    scenario = Scenario.from_dict(
        {
            "turns": [
                {"tool_calls": [{"name": "lookup", "arguments": {"city": "杭州"}}]},
                {"text": "I could not look it up."},
            ]
        }
    )
    with EmulationServer(scenario) as server:
        provider = OpenAIChat(base_url=server.url_for("openai-chat"), api_key=FAKE_KEY)
        result = Agent(provider, model="m", tools=[lookup], journal=journal).run_sync("杭州?")
    assert result.outcome == "answered"
    recorded = result.tool_calls[0].result.traceback
    assert recorded is not None and recorded.startswith("Traceback (most recent call last):")

    plain = invoke(journal, "show", "last")
    verbose = invoke(journal, "show", "last", "--verbose")
    assert plain.exit_code == verbose.exit_code == 0
    assert "✗ lookup" in plain.output and "Traceback" not in plain.output
    out = verbose.output
    assert "        Traceback (most recent call last):" in out
    assert 'raise ValueError(f"no row for {city}' in out and "in lookup" in out
    assert "ValueError: no row for 杭州: password=<redacted>" in out
    assert out.index("✗ lookup") < out.index("Traceback") < out.index("turn 2")
    as_json = json.loads(invoke(journal, "show", "last", "--json").output)
    [call] = as_json["turns"][0]["tool_calls"]
    assert call["traceback"].splitlines()[-1].startswith("ValueError: no row for 杭州")
    for shown in (out, json.dumps(as_json), journal.read_bytes().decode("latin-1")):
        assert "hunter2" not in shown and FAKE_KEY not in shown
