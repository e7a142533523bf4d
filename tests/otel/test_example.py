"""examples/tracing.py runs as a program and prints the run's span tree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_tracing_example_prints_the_span_tree() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "tracing.py"), "--eager", "--capture-content"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("answer: 杭州现在小雨")
    kinds = ("invoke_agent", "chat", "execute_tool")
    names = [line for line in lines if line.strip().split(" ")[0] in kinds]
    assert [n.split("  [")[0] for n in names] == [
        "invoke_agent weather-agent",
        "  chat gpt-4.1-mini",
        "    execute_tool get_weather",
        "    execute_tool get_current_time",
        "  chat gpt-4.1-mini",
    ]
    assert all(n.endswith(", UNSET]") for n in names)
    assert '        gen_ai.tool.call.arguments = "{\\"city\\":\\"杭州\\"}"' in lines
