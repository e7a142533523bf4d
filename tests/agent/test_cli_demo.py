"""``toolwire demo`` (offline, every wire format) and ``toolwire chat``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from toolwire.cli import main
from toolwire.testing import EmulationServer, Scenario


@pytest.mark.parametrize("provider", ["openai-chat", "openai-responses", "anthropic", "gemini"])
def test_demo_json_in_every_wire_format(provider: str) -> None:
    result = CliRunner().invoke(main, ["demo", "--provider", provider, "--json"])
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


def test_demo_renders_without_a_terminal() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toolwire", "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "turn 1: asking the model" in out and "turn 2: asking the model" in out
    assert 'tool call get_weather({"city": "杭州"})' in out
    assert "✓ get_weather" in out and "✓ get_current_time" in out
    # The answer streams once; nothing animated, no table, no second copy.
    assert out.count("杭州现在小雨") == 1
    assert out.rstrip().splitlines()[-1] == "usage: 2 turns, 2 tool calls, tokens 1185 in / 36 out"
    assert "\x1b[" not in out and "waiting for the model" not in out
    assert proc.stderr == ""


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
