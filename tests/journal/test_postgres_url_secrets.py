"""A Postgres password written as it is, ``?`` and ``#`` in it, never shows:
not in the journal's name, its errors, ``toolwire runs``' messages nor the
viewer's start-up line (a parser that ended the authority at ``?`` showed
``u:hun`` as the host, and the rest as the query). The scheme may be written
in any case."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from click.testing import CliRunner

from toolwire.cli import main
from toolwire.journal import JournalError
from toolwire.journal._postgres import is_postgres_url

PASSWORD = "hun?ter#2secret"
HALVES = ("hun", "ter", "2secret")
UNREACHABLE = f"postgresql://u:{PASSWORD}@127.0.0.1:1/db"


def assert_hidden(text: str) -> None:
    for half in HALVES:
        assert half not in text, text


def test_a_journal_on_a_real_server_never_shows_its_password(postgres_server: Any) -> None:
    from toolwire.journal import PostgresJournal

    url = postgres_server.new_database().replace("postgres@", f"postgres:{PASSWORD}@")
    journal = PostgresJournal(url)
    try:
        assert journal.where.startswith("postgresql:///") and "?" not in journal.where
        with pytest.raises(JournalError) as caught:
            journal.load_run("nope")
        assert_hidden(journal.where + repr(journal) + str(caught.value))
    finally:
        journal.close()
    with pytest.raises(JournalError) as refused:
        PostgresJournal(UNREACHABLE, timeout=1)
    assert "postgresql://127.0.0.1:1/db" in str(refused.value)
    assert_hidden(str(refused.value))


@pytest.mark.parametrize("scheme", ["postgresql", "POSTGRESQL", "Postgres"])
def test_toolwire_runs_never_shows_the_password(scheme: str) -> None:
    url = UNREACHABLE.replace("postgresql", scheme, 1)
    assert is_postgres_url(url)
    result = CliRunner().invoke(main, ["runs", "list", "--journal", url])
    assert result.exit_code == 2, result.output
    assert "cannot read the journal" in result.output and "127.0.0.1:1" in result.output
    assert_hidden(result.output)


def test_the_viewers_start_up_line_never_shows_the_password() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "toolwire", "view", "--journal", UNREACHABLE],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
    finally:
        process.terminate()
        process.wait(10)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    where, _, address = line.partition(": open ")
    assert where == "toolwire view of postgresql://127.0.0.1:1/db"
    assert address.startswith("http://127.0.0.1:")  # its random token may hold anything
    assert_hidden(where)
