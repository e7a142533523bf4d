"""A reader that goes away (``toolwire demo | head``) ends the command quietly,
with status 0: real processes, real pipes."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from toolwire.testing import EmulationServer, Scenario

TOOLWIRE = [sys.executable, "-m", "toolwire"]

# Slow enough that the reader is gone long before the run ends.
SLOW = Scenario.from_dict(
    {
        "turns": [
            {"tool_calls": [{"name": "calculator", "arguments": {"expression": "6*7"}}]},
            {"text": "6*7 = {result:calculator.result}, " * 8, "chunk_size": 4, "delay": 0.05},
        ]
    }
)


@pytest.fixture
def server() -> Iterator[EmulationServer]:
    with EmulationServer(SLOW) as running:
        yield running


def head(args: list[str], lines: int, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run ``toolwire ARGS | head -LINES``: the lines read, then the pipe closed."""
    proc = subprocess.Popen(
        [*TOOLWIRE, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    read = "".join(proc.stdout.readline() for _ in range(lines))
    proc.stdout.close()
    stderr = proc.stderr.read()
    proc.stderr.close()
    return proc.wait(timeout=120), read, stderr


def closed_pipe(args: list[str]) -> tuple[int, str]:
    """Run ``toolwire ARGS`` writing into a pipe whose reader is already gone."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [*TOOLWIRE, *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(write_end)
    return proc.returncode, proc.stderr


def test_demo_into_head() -> None:
    code, read, stderr = head(["demo"], 3)
    assert read.splitlines()[2] == "turn 1: asking the model"
    assert (code, stderr) == (0, "")


def test_chat_into_head(server: EmulationServer) -> None:
    env = dict(os.environ, OPENAI_API_KEY="sk-test")
    args = ["chat", "--provider", "openai-chat", "--model", "m"]
    args += ["--base-url", server.url_for("openai-chat"), "6*7?"]
    code, read, stderr = head(args, 1, env)
    assert read == "turn 1: asking the model\n"
    assert (code, stderr) == (0, "")


@pytest.mark.parametrize(
    "args",
    [["demo"], ["demo", "--json"], ["--help"], ["runs", "list"], ["serve", "--help"]],
)
def test_reader_gone_before_the_first_line(args: list[str]) -> None:
    assert closed_pipe(args) == (0, "")
