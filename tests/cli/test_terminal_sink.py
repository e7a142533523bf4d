"""The terminal sink: ``toolwire inspect`` (a real subprocess) prints what a
stream holds with every control character (C0, DEL, C1 such as ``U+009B``,
a CSI on its own), bidirectional and format character and lone surrogate
shown as an escape, never as a terminal command; ``--json`` stays valid
JSON that means the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolwire.cli._terminal import terminal_json, terminal_text

# Each is written as a JSON escape on the wire, so the stream itself is ASCII.
HOSTILE = ["\u009b", "\u001b", "\u0007", "\u007f", "\u202e", "\u2066", "\u200b", "\ufeff"]
_WIRE = "".join(f"\\u{ord(c):04x}" for c in HOSTILE) + "\\ud800"


def _stream(tmp_path: Path) -> Path:
    chunks = [
        '{"choices":[{"index":0,"delta":{"content":"a' + _WIRE + 'b"}}]}',
        '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c' + _WIRE + '",'
        '"function":{"name":"f'
        + _WIRE
        + '","arguments":"{\\"k\\": \\"'
        + _WIRE.replace("\\", "\\\\")
        + '\\"}"}}]}}]}',
        '{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}',
        "[DONE]",
    ]
    path = tmp_path / "hostile.sse"
    path.write_text("".join(f"data: {c}\n\n" for c in chunks), encoding="ascii")
    return path


def _inspect(*args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "toolwire", "inspect", *args],
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )


def _unsafe(out: bytes) -> list[str]:
    text = out.decode("utf-8", "surrogateescape")
    return [c for c in HOSTILE if c in text]


def test_inspect_shows_controls_as_escapes(tmp_path: Path) -> None:
    done = _inspect(str(_stream(tmp_path)))
    assert done.returncode == 0, done.stderr.decode()
    assert _unsafe(done.stdout) == []
    out = done.stdout.decode("utf-8")
    assert "\\x9b" in out and "\\x1b" in out and "\\u202e" in out and "\\ud800" in out
    assert "tool call #0 name f\\x9b\\x1b" in out


def test_inspect_json_is_safe_and_means_the_same(tmp_path: Path) -> None:
    done = _inspect("--json", str(_stream(tmp_path)))
    assert done.returncode == 0, done.stderr.decode()
    assert _unsafe(done.stdout) == []
    (call,) = json.loads(done.stdout)["choices"][0]["tool_calls"]
    assert call["name"] == "f" + "".join(HOSTILE) + "\ud800"
    assert call["arguments"] == {"k": "".join(HOSTILE) + "\ud800"}


@pytest.mark.parametrize("char", [*HOSTILE, "\ud800", "\x00", "\x85"])
def test_every_unsafe_character_is_escaped(char: str) -> None:
    assert char not in terminal_text(f"a{char}b")
    assert json.loads(terminal_json(json.dumps(f"a{char}b", ensure_ascii=False))) == f"a{char}b"


def test_tab_line_feed_and_plain_text_are_kept() -> None:
    assert terminal_text("a\tb\nc é 日本 🙂") == "a\tb\nc é 日本 🙂"
