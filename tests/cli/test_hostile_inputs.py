"""Every CLI path ends in one ``Error:`` line on hostile input, never in a
traceback or a hang: an endless device, a FIFO with no writer, JSON nested
past the limit (a sidecar, a scenario, a journal's run header), binary
prompts, a cassette whose body file is a symbolic link or whose fields are
malformed."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests._linear import cpu_guard
from toolwire.cli import main
from toolwire.testing.cassette import Cassette, CassetteError

DEEP = "[" * 100_000 + "]" * 100_000


def run(*args: str) -> str:
    """The CLI's stderr, asserted to be one ``Error:`` line and a failure."""
    with cpu_guard(20):  # a hang on a FIFO or /dev/zero would show here
        result = CliRunner().invoke(main, list(args))
    assert result.exit_code in (1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


@pytest.fixture
def fifo(tmp_path: Path) -> str:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return str(path)


def sidecar(folder: Path, *, number: int = 1, **response: object) -> Path:
    folder.mkdir(exist_ok=True)
    body = folder / f"{number:04d}.sse"
    if not body.exists() and not body.is_symlink():
        body.write_bytes(b"data: {}\n\n")
    meta = {
        "toolwire_cassette": 1,
        "exchange": number,
        "dialect": "openai-chat",
        "request": {"method": "POST", "path": "/v1/chat/completions", "headers": []},
        "response": {
            "status": 200,
            "headers": [["content-type", "text/event-stream"]],
            "body_file": body.name,
            "chunks": [[10, 1.0]],
            **response,
        },
    }
    path = folder / f"{number:04d}.json"
    path.write_text(json.dumps(meta))
    return path


@pytest.mark.parametrize("command", ["inspect", "scenario", "replay", "prompts", "journal"])
@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_devices_and_fifos_are_refused(
    command: str, target: str, fifo: str, tmp_path: Path
) -> None:
    path = fifo if target == "fifo" else target
    args = {
        "inspect": ["inspect", path],
        "scenario": ["serve", "--port", "0", "--scenario", path],
        "replay": ["serve", "--port", "0", "--replay", path],
        "prompts": ["batch", path, "--agent", "x:y", "--results", str(tmp_path / "r"), "--local"],
        "journal": ["runs", "list", "--journal", path],
    }[command]
    line = run(*args)
    assert "not a regular file" in line


def test_results_on_a_device_are_refused(tmp_path: Path) -> None:
    prompts = tmp_path / "p.txt"
    prompts.write_text("hello\n")
    line = run("batch", str(prompts), "--agent", "x:y", "--results", "/dev/zero", "--local")
    assert "--results" in line and "not a regular file" in line


def test_binary_prompts_are_refused(tmp_path: Path) -> None:
    prompts = tmp_path / "p.txt"
    prompts.write_bytes(bytes(range(256)) * 4)
    line = run("batch", str(prompts), "--agent", "x:y", "--results", str(tmp_path / "r"), "--local")
    assert "not UTF-8" in line


def test_deep_json_in_a_scenario(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"name": "x", "turns": ' + DEEP + "}")
    assert "nests deeper" in run("serve", "--port", "0", "--scenario", str(path))
    path = tmp_path / "s.yaml"
    path.write_text("turns: " + "[" * 5000 + "]" * 5000)
    assert "nests deeper" in run("serve", "--port", "0", "--scenario", str(path))


def test_deep_json_in_a_sidecar(tmp_path: Path) -> None:
    folder = tmp_path / "cassette"
    path = sidecar(folder)
    path.write_text('{"toolwire_cassette": 1, "x": ' + DEEP + "}")
    assert "nests deeper" in run("inspect", str(folder))
    assert "nests deeper" in run("serve", "--port", "0", "--cassette", str(folder))


def test_deep_json_in_a_journal_run_header(tmp_path: Path) -> None:
    from toolwire.journal import SQLiteJournal

    path = tmp_path / "j.sqlite3"
    SQLiteJournal(path).close()
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO runs (run_id, started_at, updated_at, status, header) "
            "VALUES ('r1', 1.0, 1.0, 'running', ?)",
            (DEEP,),
        )
    line = run("runs", "list", "--journal", str(path))
    assert "nests deeper" in line


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"status": 99}, "HTTP status"),
        ({"status": "two hundred"}, "invalid field"),
        ({"headers": [["content-type", "a\r\nx-evil: 1"]]}, "one line"),
        ({"headers": [["bad name", "v"]]}, "HTTP token"),
        ({"headers": "x"}, "pairs"),
        ({"headers": [["a", "b", "c"]]}, "pairs"),
        ({"chunks": [[-1, 1.0]]}, "chunk size"),
        ({"chunks": [[1, float("nan")]]}, "not valid JSON"),
        ({"chunks": [[1, -5]]}, "milliseconds"),
        ({"body_file": "../outside.sse"}, "beside the sidecar"),
        ({"body_file": "/etc/passwd"}, "beside the sidecar"),
        ({"body_file": 5}, "beside the sidecar"),
        ({"error": {"x": 1}}, "strings"),
    ],
)
def test_malformed_cassette_fields_fail_at_load(
    tmp_path: Path, fields: dict[str, object], message: str
) -> None:
    folder = tmp_path / "cassette"
    sidecar(folder, **fields)
    with pytest.raises(CassetteError, match=message):
        Cassette.load(folder)
    assert message in run("serve", "--port", "0", "--cassette", str(folder))


def test_a_symlinked_body_file_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "cassette"
    folder.mkdir()
    (folder / "0001.sse").symlink_to("/proc/self/environ")
    sidecar(folder)
    with pytest.raises(CassetteError, match="symbolic link"):
        Cassette.load(folder)
    assert "symbolic link" in run("serve", "--port", "0", "--cassette", str(folder))


def test_a_symlinked_sidecar_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    real = sidecar(elsewhere)
    folder = tmp_path / "cassette"
    folder.mkdir()
    (folder / "0001.json").symlink_to(real)
    (folder / "0001.sse").write_bytes(b"data: {}\n\n")
    with pytest.raises(CassetteError, match="symbolic link"):
        Cassette.load(folder)
