"""kill -9 between an asynchronous call and its result, resume in a new
process: the call's effect happens once, and the run answers with its result.

The agent runs in a subprocess (``_async_worker.py``) against an emulation
server run by this test; the call is asynchronous (``async: true``) and the
model keeps streaming text after it. One process dies inside the tool right
after its effect (its outcome never recorded: the resumed run runs the
idempotent tool again under the same key, which changes nothing), the other
right after the outcome is journaled while the answer still streams (the
resumed run asks again and reuses the outcome: the tool does not run). A
tool that is not safe to repeat, killed mid-call, is answered as
interrupted on resume: it never runs twice.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import toolwire
from toolwire.testing import EmulationServer, Scenario

WORKER = Path(__file__).with_name("_async_worker.py")
TAIL = "While the booking runs, here is what happens next: " + "more words " * 20


def scenario() -> Scenario:
    call = {"name": "book", "arguments": {"room": "A"}, "fields": {"async": True}}
    first = {"tool_calls": [call], "text": TAIL, "chunk_size": 8, "delay": 0.005}
    return Scenario.from_dict({"turns": [first, {"text": "booked: {result:book}"}]})


def worker(url: str, folder: Path, mode: str) -> subprocess.CompletedProcess[str]:
    src = str(Path(toolwire.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, str(Path.cwd())])}
    return subprocess.run(
        [sys.executable, str(WORKER), url, str(folder), mode],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("mode", ["start", "outcome"])
def test_the_effect_happens_once_across_a_kill(tmp_path: Path, mode: str) -> None:
    with EmulationServer(scenario()) as server:
        url = server.url_for("openai-responses")
        first = worker(url, tmp_path, mode)
        assert first.returncode == -signal.SIGKILL, first.stderr
        assert len((tmp_path / "ledger").read_text().split()) == 1
        second = worker(url, tmp_path, "resume")
    assert second.returncode == 0, second.stderr
    result = json.loads(second.stdout)
    assert len((tmp_path / "ledger").read_text().split()) == 1, "the effect happened once"
    assert result["output"] == "booked: room A booked"
    assert result["calls"] == [["book", "room A booked"]]
    assert result["turns"] == 2


def test_a_call_not_safe_to_repeat_is_answered_as_interrupted(tmp_path: Path) -> None:
    (tmp_path / "not-idempotent").touch()
    with EmulationServer(scenario()) as server:
        url = server.url_for("openai-responses")
        first = worker(url, tmp_path, "start")
        assert first.returncode == -signal.SIGKILL, first.stderr
        second = worker(url, tmp_path, "resume")
    assert second.returncode == 0, second.stderr
    result = json.loads(second.stdout)
    assert len((tmp_path / "ledger").read_text().split()) == 1, "it did not run again"
    ((name, content),) = result["calls"]
    assert name == "book" and "may have run" in content
