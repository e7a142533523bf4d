"""``toolwire batch`` in local mode, against the emulation server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


AGENTS_MODULE = """
import os
from dataclasses import dataclass

from toolwire import Agent, OpenAIChat


@dataclass(frozen=True)
class MakeAgent:
    model: str = "gpt-4.1-mini"

    def __call__(self) -> Agent:
        return Agent(OpenAIChat(base_url=os.environ["TOOLWIRE_TEST_BASE_URL"]), model=self.model)


def make_agent() -> Agent:
    return MakeAgent()()


def broken_agent() -> Agent:
    raise RuntimeError("the factory is broken")
"""


BATCH = [sys.executable, "-m", "toolwire", "batch", "prompts.txt", "--local", "--no-progress"]


def batch_in(cwd: Path, *args: str, base_url: str) -> subprocess.CompletedProcess[str]:
    """``toolwire batch`` as a user runs it: a process in their project folder."""
    env = dict(os.environ, TOOLWIRE_TEST_BASE_URL=base_url, OPENAI_API_KEY="test-key")
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [*BATCH, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "myagents.py").write_text(AGENTS_MODULE, encoding="utf-8")
    (tmp_path / "prompts.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("factory", ["myagents:MakeAgent", "myagents:make_agent"])
def test_a_class_or_a_function_from_the_current_directory(project: Path, factory: str) -> None:
    scenario = Scenario.from_dict({"turns": [{"text": "done"}]})
    with EmulationServer(scenario) as server:
        proc = batch_in(
            project, "--agent", factory, "--results", "r.jsonl", base_url=server.url_for("openai")
        )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("3 runs: 3 answered, 0 failed")
    assert proc.stderr == ""


def test_failures_are_summarized_once(project: Path) -> None:
    proc = batch_in(
        project,
        "--agent",
        "myagents:broken_agent",
        "--results",
        "r.jsonl",
        base_url="http://127.0.0.1:9/v1",
    )
    assert proc.returncode == 1
    assert proc.stdout.startswith("3 runs: 0 answered, 3 failed")
    # one line on stderr, for the first failure; the rest is in the results file
    assert proc.stderr.splitlines() == [
        "first failure (prompt 0): RuntimeError: the factory is broken; "
        "where it was raised: in r.jsonl"
    ]
    lines = [json.loads(line) for line in (project / "r.jsonl").read_text().splitlines()]
    assert len(lines) == 3 and all(line["outcome"] == "error" for line in lines)
    frames = lines[0]["error"]["traceback"]
    assert frames[-1].endswith("in broken_agent") and "myagents.py:" in frames[-1]


@pytest.mark.parametrize("where", ["a-directory", "a-file/r.jsonl"])
def test_a_results_file_that_cannot_be_written(project: Path, where: str) -> None:
    if where == "a-directory":
        (project / where).mkdir()
    else:  # its folder would have to be where a file is
        (project / "a-file").write_text("not a folder", encoding="utf-8")
    proc = batch_in(project, "--agent", "myagents:make_agent", "--results", where, base_url="x")
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("Error: Invalid value for '--results'")
