"""``toolwire demo`` (offline, every wire format) and ``toolwire chat``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolwire.cli import main
from toolwire.journal import SQLiteJournal
from toolwire.testing import EmulationServer, Scenario


@pytest.mark.parametrize(
    "choice",
    [
        ("--dialect", "openai-chat"),
        ("--dialect", "openai-responses"),
        ("--dialect", "anthropic-messages"),
        ("--provider", "gemini"),
    ],
    ids=lambda c: c[1],
)
def test_demo_json_in_every_wire_format(choice: tuple[str, str]) -> None:
    result = CliRunner().invoke(main, ["demo", *choice, "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["outcome"] == "answered" and record["turns"] == 2
    assert record["output"].startswith("杭州现在小雨,气温 24.0°C")
    calls = [(r["call"]["name"], r["call"]["arguments"]) for r in record["tool_calls"]]
    assert calls == [
        ("get_weather", {"city": "杭州"}),
        ("get_current_time", {"timezone": "Asia/Shanghai"}),
    ]
    assert all(r["result"]["ok"] for r in record["tool_calls"])


def test_the_demo_dialect_and_provider_must_agree() -> None:
    both = ["demo", "--dialect", "gemini", "--provider", "gemini", "--json"]
    assert CliRunner().invoke(main, both).exit_code == 0
    clash = CliRunner().invoke(main, ["demo", "--dialect", "gemini", "--provider", "anthropic"])
    assert clash.exit_code == 2
    assert "--provider anthropic speaks anthropic-messages, not --dialect gemini" in clash.output


def _demo(
    *args: str, tz: str = "UTC", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolwire", "demo", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "TZ": tz, **(env or {})},
    )


# A Wednesday in Hangzhou: "Wednesday" is the longest weekday name, and the
# tool's answer, so the tokens the model is sent, hold it.
FROZEN = "2026-11-25T02:30:00Z"


def test_demo_renders_without_a_terminal() -> None:
    proc = _demo("--now", FROZEN)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "turn 1: asking the model" in out and "turn 2: asking the model" in out
    assert 'tool call get_weather({"city": "杭州"})' in out
    assert "✓ get_weather" in out and "✓ get_current_time" in out
    # The answer streams once; nothing animated, no table, no second copy.
    assert out.count("杭州现在小雨") == 1
    assert "usage: 2 turns, 2 tool calls, tokens 1185 in / 37 out\nrun " in out
    assert "\x1b[" not in out and "waiting for the model" not in out
    assert proc.stderr == ""


def test_the_demo_ends_by_saying_where_the_run_went(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    proc = _demo("--now", FROZEN, env={"TOOLWIRE_JOURNAL": str(journal)})
    assert proc.returncode == 0, proc.stderr
    where, show, view = proc.stdout.rstrip().splitlines()[-3:]
    run_id = SQLiteJournal(journal).list_runs()[0].run_id
    assert where == f"run {run_id} recorded in {journal}; to look at it:"
    assert show.split() == [
        "toolwire",
        "runs",
        "show",
        "last",
        "its",
        "timeline:",
        "turns,",
        "tool",
        "calls,",
        "usage",
    ]
    assert view.split()[:3] == ["toolwire", "view", "--open"]
    shown = subprocess.run(
        [sys.executable, "-m", "toolwire", "runs", "show", "last"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "TOOLWIRE_JOURNAL": str(journal)},
    )
    assert shown.returncode == 0 and run_id[:12] in shown.stdout


def test_the_demo_says_when_it_records_nothing() -> None:
    proc = _demo("--now", FROZEN, env={"TOOLWIRE_JOURNAL": "off"})
    assert proc.stdout.rstrip().splitlines()[-1] == "not journaled ($TOOLWIRE_JOURNAL is off)"


@pytest.mark.parametrize(
    ("now", "tz", "weekday", "local"),
    [
        # Sunday 23:59 in UTC is already Monday in Hangzhou (UTC+8).
        ("2026-11-29T23:59:00Z", "UTC", "Monday", "2026-11-30T07:59:00+08:00"),
        ("2026-11-25T02:30:00Z", "Pacific/Kiritimati", "Wednesday", "2026-11-25T10:30:00+08:00"),
        ("2027-02-28T16:00:00-08:00", "America/Adak", "Monday", "2027-03-01T08:00:00+08:00"),
        ("2028-02-29T12:00:00+08:00", "Asia/Shanghai", "Tuesday", "2028-02-29T12:00:00+08:00"),
    ],
)
def test_the_demo_runs_at_any_date_and_in_any_time_zone(
    now: str, tz: str, weekday: str, local: str
) -> None:
    # The demo's clock stands where it is told, whatever the machine's date
    # and time zone: the time tool answers for that instant, in Hangzhou.
    proc = _demo("--json", "--now", now, tz=tz)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    clock = next(r for r in record["tool_calls"] if r["call"]["name"] == "get_current_time")
    value = json.loads(clock["result"]["content"])
    assert (value["weekday"], value["datetime"]) == (weekday, local)
    assert record["outcome"] == "answered"


def test_demo_now_must_be_an_aware_instant() -> None:
    result = CliRunner().invoke(main, ["demo", "--now", "2026-11-25T10:00:00"])
    assert result.exit_code == 2 and "UTC offset" in result.output
    result = CliRunner().invoke(main, ["demo", "--now", "yesterday"])
    assert result.exit_code == 2 and "not an ISO 8601" in result.output


def test_chat_talks_to_any_openai_compatible_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    scenario = Scenario.from_dict(
        {
            "name": "calc",
            "turns": [
                {"tool_calls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]},
                {"text": "6*7 = {result:calculator.result}"},
            ],
        }
    )
    with EmulationServer(scenario) as server:
        result = CliRunner().invoke(
            main,
            [
                "chat",
                "--provider",
                "openai-chat",
                "--model",
                "qwen-plus",
                "--base-url",
                server.url_for("openai-chat"),
                "--json",
                "what is 6*7?",
            ],
        )
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["output"] == "6*7 = 42"
    assert "sk-test-not-real" not in result.output
