"""A private journal: created 0700/0600 (never readable by others, not even
for a moment), read-only for the reading commands (``runs list|show|export``
change no byte and create no file), and a clear error for a file that is not
a journal, naming ``TOOLWIRE_JOURNAL=off``."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolwire import Agent, JournalError
from toolwire.cli import main
from toolwire.journal import SQLiteJournal
from toolwire.providers import OpenAIChat
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The most permissive umask: modes must not depend on the user's."""
    previous = os.umask(0)
    yield
    os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def scenario() -> Scenario:
    return Scenario.from_dict({"name": "hello", "turns": [{"text": "hello"}]})


async def run_once(server: EmulationServer, journal: Path) -> str:
    agent = Agent(
        OpenAIChat(base_url=server.url_for("openai-chat"), api_key="k"),
        model="m",
        journal=journal,
    )
    try:
        return (await agent.run("hi")).run_id
    finally:
        await agent.aclose()


async def test_a_fresh_journal_is_private(tmp_path: Path, open_umask: None) -> None:
    journal = tmp_path / "state" / "toolwire" / "journal.sqlite3"
    with EmulationServer(scenario()) as server:
        await run_once(server, journal)
        files = {p.name: mode(p) for p in journal.parent.iterdir()}
    assert mode(tmp_path / "state") == 0o700
    assert mode(journal.parent) == 0o700
    assert files == {
        "journal.sqlite3": 0o600,
        "journal.sqlite3-wal": 0o600,
        "journal.sqlite3-shm": 0o600,
    }


def test_an_existing_directory_keeps_its_mode(tmp_path: Path, open_umask: None) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    SQLiteJournal(shared / "j.sqlite3").close()
    assert mode(shared) == 0o755
    assert mode(shared / "j.sqlite3") == 0o600


def snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


async def test_reading_commands_change_nothing(tmp_path: Path) -> None:
    journal = tmp_path / "j" / "journal.sqlite3"
    with EmulationServer(scenario()) as server:
        run_id = await run_once(server, journal)
    from toolwire.journal import close_journals

    close_journals()  # the writer is gone: no -wal file is left
    before = snapshot(journal.parent)
    runner = CliRunner()
    for args in (["list"], ["list", "--json"], ["show", "last"], ["show", run_id, "--json"],
                 ["export", run_id]):  # fmt: skip
        result = runner.invoke(main, ["runs", *args, "--journal", str(journal)])
        assert result.exit_code == 0, result.output
        assert snapshot(journal.parent) == before, args


def test_reading_an_empty_file_writes_no_schema(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite3"
    empty.touch()
    result = CliRunner().invoke(main, ["runs", "list", "--journal", str(empty)])
    assert result.exit_code == 0, result.output
    assert empty.stat().st_size == 0 and sorted(p.name for p in tmp_path.iterdir()) == [
        "empty.sqlite3"
    ]
    missing = CliRunner().invoke(main, ["runs", "show", "last", "--journal", str(empty)])
    assert missing.exit_code == 2 and "holds no run" in missing.output


def test_reading_while_a_run_writes_sees_its_records(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    writer = SQLiteJournal(path)
    writer.record_run("r1", header='{"model": "m"}', messages=[], resumed=False)
    reader = SQLiteJournal(path, read_only=True)
    assert [run.run_id for run in reader.list_runs()] == ["r1"]
    with pytest.raises(JournalError, match="read-only"):
        reader.record_event("r1", "model_request", "{}")
    reader.close()
    writer.close()


async def test_a_corrupt_journal_is_a_clear_error(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite3"
    journal.write_bytes(b"this is not a database, it is a note\n" * 200)
    result = CliRunner().invoke(main, ["runs", "list", "--journal", str(journal)])
    assert result.exit_code == 2
    assert "is not a toolwire journal, or it is corrupt" in result.output
    with EmulationServer(scenario()) as server:
        with pytest.raises(JournalError) as caught:
            await run_once(server, journal)
    assert "TOOLWIRE_JOURNAL=off" in caught.value.message
    assert journal.read_bytes().startswith(b"this is not a database")
