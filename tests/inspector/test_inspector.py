"""The MCP Inspector's CLI mode (``@modelcontextprotocol/inspector`` from npm)
lists and calls the tools of ``toolwire mcp serve`` over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SERVED = Path(__file__).resolve().parent.parent / "mcp" / "served"
SRC = Path(__file__).resolve().parents[2] / "src"


def inspect(*method: str) -> dict[str, object]:
    command = [os.environ["TOOLWIRE_INSPECTOR"], "--cli", sys.executable, "-m", "toolwire",
               "mcp", "serve", "toolbox_app:toolbox", *method]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(SRC), "TOOLWIRE_JOURNAL": "off"}
    proc = subprocess.run(
        command, cwd=SERVED, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    loaded: dict[str, object] = json.loads(proc.stdout)
    return loaded


def test_the_inspector_lists_the_tools() -> None:
    listed = inspect("--method", "tools/list")
    tools = {t["name"]: t for t in listed["tools"]}  # type: ignore[attr-defined]
    assert list(tools) == ["add", "get_weather", "delete_record"]
    assert tools["add"]["inputSchema"]["required"] == ["a", "b"]
    assert tools["add"]["annotations"]["readOnlyHint"] is True


def test_the_inspector_calls_a_tool() -> None:
    called = inspect("--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2",
                     "--tool-arg", "b=40")  # fmt: skip
    assert called["content"] == [{"type": "text", "text": "42"}]
