"""``toolwire batch`` in local mode, against the emulation server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolwire.cli import main
from toolwire.testing import EmulationServer, Scenario

SCENARIO = Scenario.from_dict(
    {"turns": [{"tool_calls": [{"name": "whoami", "arguments": {}}]}, {"text": "done"}]}
)


def test_batch_command_runs_and_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"prompt": "一"}\n"二"\n\n{"prompt": "三"}\n', encoding="utf-8")
    results = tmp_path / "results.jsonl"
    args = [
        "batch",
        str(prompts),
        "--agent",
        "tests.ray._tools:agent_from_env",
        "--results",
        str(results),
        "--local",
        "--no-progress",
    ]
    with EmulationServer(SCENARIO) as server:
        monkeypatch.setenv("TOOLWIRE_TEST_BASE_URL", server.url_for("openai-chat"))
        first = CliRunner().invoke(main, args)
        second = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert "3 runs: 3 answered, 0 failed" in first.output
    assert second.exit_code == 0 and "0 runs" in second.output and "3 skipped" in second.output
    lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    assert sorted(line["prompt"] for line in lines) == ["一", "三", "二"]
    assert all(line["output"] == "done" for line in lines)


def test_failed_runs_exit_with_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("first\nsecond\n", encoding="utf-8")
    # Nothing listens there: every run fails to connect.
    monkeypatch.setenv("TOOLWIRE_TEST_BASE_URL", "http://127.0.0.1:9/v1")
    result = CliRunner().invoke(
        main,
        [
            "batch",
            str(prompts),
            "--agent",
            "tests.ray._tools:agent_from_env",
            "--results",
            str(tmp_path / "r.jsonl"),
            "--local",
            "--no-progress",
        ],
    )
    assert result.exit_code == 1
    assert "2 runs: 0 answered, 2 failed" in result.output


@pytest.mark.parametrize(
    ("agent", "message"),
    [("nocolon", "module:attribute"), ("tests.ray._tools:missing", "cannot import")],
)
def test_bad_agent_reference(tmp_path: Path, agent: str, message: str) -> None:
    prompts = tmp_path / "p.txt"
    prompts.write_text("x\n", encoding="utf-8")
    result = CliRunner().invoke(
        main, ["batch", str(prompts), "--agent", agent, "--results", str(tmp_path / "r")]
    )
    assert result.exit_code == 2 and message in result.output


def test_bad_jsonl_line(tmp_path: Path) -> None:
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('{"prompt": 3}\n', encoding="utf-8")
    result = CliRunner().invoke(
        main,
        [
            "batch",
            str(prompts),
            "--agent",
            "tests.ray._tools:agent_from_env",
            "--results",
            str(tmp_path / "r"),
        ],
    )
    assert result.exit_code == 2 and "line 1" in result.output
