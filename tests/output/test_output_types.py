"""mypy --strict infers the output type of a typed run (``RunResult[Invoice]``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import toolwire

SAMPLE = Path(__file__).with_name("typed_sample.py")
SRC = Path(toolwire.__file__).resolve().parents[1]
"""This checkout's src/: mypy reads toolwire from it (``MYPYPATH``)."""


def mypy(path: Path) -> subprocess.CompletedProcess[str]:
    # The checkout's own cache (``make lint``'s): a warm one makes this quick.
    cache = SRC.parent / ".mypy_cache"
    command = [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(cache), str(path)]
    env = {**os.environ, "MYPYPATH": str(SRC)}
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


@pytest.mark.timeout(900)
def test_mypy_strict_infers_run_result_of_the_output_type(tmp_path: Path) -> None:
    done = mypy(SAMPLE)
    assert done.returncode == 0, done.stdout + done.stderr
    # The check can fail: the same sample, expecting a text output.
    wrong = tmp_path / "wrong_sample.py"
    text = SAMPLE.read_text(encoding="utf-8")
    expected = "assert_type(result, RunResult[Invoice])"
    wrong.write_text(text.replace(expected, "assert_type(result, RunResult[str])"), "utf-8")
    done = mypy(wrong)
    assert done.returncode == 1 and 'not "RunResult[str]"' in done.stdout, done.stdout
