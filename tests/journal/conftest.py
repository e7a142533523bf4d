"""The journal suites run against every store: SQLite files and a real
PostgreSQL server (started once per session by :mod:`tests._postgres`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from toolwire.journal import Journal

from ._holder import open_store

OpenJournal = Callable[[], Journal]
"""Opens another journal object on the test's store (a second worker)."""


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the test's journal lives: a SQLite file, or a Postgres URL."""
    if request.param == "sqlite":
        return str(tmp_path / "j.sqlite3")
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def open_journal(store: str) -> Iterator[OpenJournal]:
    """Opens journals on the test's store; closes them at the end."""
    opened: list[Journal] = []

    def make() -> Journal:
        journal = open_store(store)
        opened.append(journal)
        return journal

    yield make
    for journal in opened:
        journal.close()
