"""The pytest plugin of toolwire: the ``toolwire_server`` and ``toolwire_journal`` fixtures.

Installed as a ``pytest11`` entry point, so any project that installs toolwire
gets the fixtures::

    def test_agent(toolwire_server):
        server = toolwire_server(Scenario.builtin("weather"))
        client = openai.OpenAI(base_url=server.url_for("openai-chat"), api_key="test")

Loading the plugin imports neither the emulation server nor its web stack
(nor pydantic): every pytest run of a project that installs toolwire loads
this module, and only the tests that use a fixture pay for what it needs.
Agents of a test that uses either fixture record to a journal of its own in
pytest's temporary directory, never to the user's.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from toolwire.testing.scenario import Scenario
    from toolwire.testing.server import EmulationServer

__all__ = ["ServerFactory", "toolwire_journal", "toolwire_server"]


class ServerFactory:
    """``factory(scenario, **options) -> EmulationServer``, started on a free port.

    ``scenario`` is a :class:`~toolwire.testing.Scenario`, a built-in name, a
    file path or the scenario's JSON shape; ``options`` are keyword options of
    :class:`~toolwire.testing.EmulationServer`.
    """

    def __init__(self, journal: Path) -> None:
        self.journal = journal
        """The test's journal file (see the ``toolwire_journal`` fixture)."""
        self.servers: list[EmulationServer] = []
        """The servers started so far, oldest first."""

    def __call__(
        self, scenario: Scenario | str | Path | dict[str, Any], **options: Any
    ) -> EmulationServer:
        from toolwire.testing.server import EmulationServer

        options.setdefault("port", 0)
        server = EmulationServer(scenario, **options)
        server.start()
        self.servers.append(server)
        return server

    def stop_all(self) -> None:
        """Stop every server this factory started, newest first."""
        while self.servers:
            self.servers.pop().stop()


@pytest.fixture
def toolwire_journal(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """The journal file the test's agents record to: ``TOOLWIRE_JOURNAL`` points
    at a new file in pytest's temporary directory (created on first use). Read it
    with :class:`~toolwire.SQLiteJournal` or ``toolwire runs --journal``."""
    path = tmp_path_factory.mktemp("toolwire") / "journal.sqlite3"
    monkeypatch.setenv("TOOLWIRE_JOURNAL", str(path))
    try:
        yield path
    finally:
        journal = sys.modules.get("toolwire.journal")
        if journal is not None:  # opened by the test: release the file
            journal.close_journals()


@pytest.fixture
def toolwire_server(toolwire_journal: Path) -> Iterator[ServerFactory]:
    """A factory of started emulation servers, all stopped at teardown; its
    ``journal`` is the test's journal file."""
    factory = ServerFactory(toolwire_journal)
    try:
        yield factory
    finally:
        factory.stop_all()
