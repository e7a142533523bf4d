"""examples/mcp_tools.py runs, offline, and answers from both kinds of tool."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp_tools.py"


def test_example_runs() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "toolwire-test-server offers:"
    assert any(line.split() == ["demo_delete_record", "requires_approval"] for line in lines)
    assert lines[-1] == "answer: In Lisbon it is 09:15 and the weather is light rain, 24.5 °C."
