"""``toolwire chat``: a deadline of its own, the prompt from stdin, and a
waiting indicator on a terminal only."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest
from rich.console import Console

from toolwire.agent import TurnStarted
from toolwire.cli._render import Renderer
from toolwire.events import TextDelta
from toolwire.testing import EmulationServer, Scenario


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A server that accepts connections and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"


CHAT = [sys.executable, "-m", "toolwire", "chat", "--provider", "openai-chat", "--model", "m"]


def chat(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, OPENAI_API_KEY="sk-test-not-real")
    return subprocess.run(
        [*CHAT, *args],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_timeout_against_a_server_that_never_answers(silent_server: str) -> None:
    proc = chat("--base-url", silent_server, "--timeout", "0.5", "hi")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "Error: timeout: total timeout (0.5s) expired; --timeout 0.5 to wait longer"
    ]


def test_timeout_must_be_positive() -> None:
    proc = chat("--timeout", "0", "hi")
    assert proc.returncode == 2 and "Invalid value for '--timeout'" in proc.stderr


def test_prompt_from_stdin_and_json_alone_on_stdout() -> None:
    scenario = Scenario.from_dict({"turns": [{"text": "pong"}]})
    with EmulationServer(scenario) as server:
        proc = chat("--base-url", server.url_for("openai-chat"), "--json", stdin="ping\n")
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)  # nothing but the record: no "you: " prompt
    assert record["output"] == "pong"
    assert server.requests[0]["messages"][-1]["content"] == "ping\n"


def test_an_empty_prompt_is_refused() -> None:
    proc = chat(stdin="  \n")
    assert proc.returncode == 2 and proc.stderr.startswith("Error: the prompt is empty")


def rendered(terminal: bool, events: list[object]) -> str:
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=100, color_system=None)
    with Renderer(console) as renderer:
        for event in events:
            renderer.handle(event)  # type: ignore[arg-type]
    return out.getvalue()


def test_waiting_indicator_on_a_terminal_only() -> None:
    waiting = [TurnStarted(turn=1)]
    assert "waiting for the model" in rendered(True, waiting)
    assert rendered(False, waiting) == "turn 1: asking the model\n"
    answered = [TurnStarted(turn=1), TextDelta(text="hello")]
    assert "waiting for the model" not in rendered(True, answered)
