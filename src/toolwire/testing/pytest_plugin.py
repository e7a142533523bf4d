"""The pytest plugin of toolwire: the ``toolwire_server``, ``toolwire_cassette``,
``toolwire_journal`` and ``toolwire_approvals`` fixtures.

Installed as a ``pytest11`` entry point, so any project that installs toolwire
gets the fixtures::

    def test_agent(toolwire_server):
        server = toolwire_server(Scenario.builtin("weather"))
        client = openai.OpenAI(base_url=server.url_for("openai-chat"), api_key="test")

    def test_agent_on_real_traffic(toolwire_cassette):
        wire = toolwire_cassette("https://api.openai.com/v1")
        client = openai.OpenAI(base_url=wire.url, api_key=wire.api_key("OPENAI_API_KEY"))

``toolwire_cassette`` replays the test's cassette by default; with
``TOOLWIRE_RECORD=1`` in the environment (and a real key) it records it anew
through ``toolwire proxy``. ``toolwire_approvals`` answers a suspended run's
calls from another process (``toolwire runs approve`` in a subprocess)::

    def test_payment_waits_for_approval(toolwire_server, toolwire_approvals):
        ...
        result = agent.run_sync("pay ann")          # suspended
        toolwire_approvals.approve(result.run_id)   # from another process
        assert agent.resume_sync(result.run_id).outcome == "answered"

Loading the plugin imports neither the emulation server nor its web stack
(nor pydantic): every pytest run of a project that installs toolwire loads
this module, and only the tests that use a fixture pay for what it needs.
Agents of a test that uses any of them record to a journal of its own in
pytest's temporary directory, never to the user's.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from toolwire.testing._desk import ApprovalDesk
    from toolwire.testing.scenario import Scenario
    from toolwire.testing.server import EmulationServer
    from toolwire.testing.serving import LoopbackServer

__all__ = [
    "RECORD_ENV",
    "CassetteFactory",
    "CassetteSession",
    "ServerFactory",
    "toolwire_approvals",
    "toolwire_cassette",
    "toolwire_journal",
    "toolwire_server",
]


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


@pytest.fixture
def toolwire_approvals(toolwire_journal: Path) -> ApprovalDesk:
    """Answers the calls a suspended run waits on from another process, as an
    operator would: ``approve``, ``deny`` and ``answer`` run ``toolwire runs
    approve/deny/answer`` in a subprocess on the test's journal, and
    ``pending(run_id)`` lists what the run waits on (see
    :class:`~toolwire.testing._desk.ApprovalDesk`)."""
    from toolwire.testing._desk import ApprovalDesk

    return ApprovalDesk(toolwire_journal)


RECORD_ENV = "TOOLWIRE_RECORD"
"""Set to ``1`` to record cassettes through the proxy instead of replaying them."""

REPLAY_KEY = "toolwire-replay-key"
"""The API key :meth:`CassetteSession.api_key` gives while replaying."""


def _recording() -> bool:
    return os.environ.get(RECORD_ENV, "").strip().lower() not in ("", "0", "false", "no")


@dataclass(frozen=True)
class CassetteSession:
    """A test's cassette, replayed (or recorded) on a loopback server."""

    url: str
    """The base URL to give the client: the proxy's or the replay server's root."""
    directory: Path
    recording: bool
    """True when this run records the cassette through the proxy."""
    server: LoopbackServer

    def api_key(self, env_var: str) -> str:
        """The real key from ``env_var`` while recording; a dummy while replaying.

        Raises:
            pytest.fail: recording without the key in the environment.
        """
        if not self.recording:
            return REPLAY_KEY
        key = os.environ.get(env_var)
        if not key:
            pytest.fail(f"recording {self.directory} needs a real key in ${env_var}")
        return key


CassetteFactory = Callable[..., CassetteSession]
"""``factory(upstream, *, name=None, directory=None, ignore=(), realtime=False)``."""


def _cassette_dir(request: pytest.FixtureRequest, name: str) -> Path:
    test_file = Path(str(request.node.path))
    safe = re.sub(r"[^\w.-]+", "-", name).strip("-")
    return test_file.parent / "cassettes" / test_file.stem / safe


@pytest.fixture
def toolwire_cassette(
    request: pytest.FixtureRequest, toolwire_journal: Path
) -> Iterator[CassetteFactory]:
    """Replay (or, with ``TOOLWIRE_RECORD=1``, record) a cassette of real traffic.

    Call it with the provider's base URL; give the returned session's
    ``url`` to the client. The cassette is ``cassettes/<test module>/<test
    name>/`` beside the test file, unless ``directory`` or ``name`` says
    otherwise. Replaying, a request the cassette does not hold gets an HTTP
    error naming the nearest recorded request, and fails the test at teardown.
    Recording, the cassette's previous exchanges are replaced.

    Keyword options: ``name`` (a second cassette in the same test),
    ``directory``, ``ignore`` (body fields left out of matching) and
    ``realtime`` (replay at the recorded pace).
    """
    from toolwire.testing.proxy import RecordingProxy
    from toolwire.testing.replay import CassetteServer

    recording = _recording()
    sessions: list[CassetteSession] = []

    def factory(
        upstream: str,
        *,
        name: str | None = None,
        directory: str | os.PathLike[str] | None = None,
        ignore: Iterable[str] = (),
        realtime: bool = False,
    ) -> CassetteSession:
        if directory is not None:
            path = Path(directory)
        else:
            default = request.node.name
            if sessions:
                default += f"-{len(sessions) + 1}"
            path = _cassette_dir(request, name or default)
        server: LoopbackServer
        if recording:
            server = RecordingProxy(upstream, record=path, fresh=True).start()
        else:
            if not path.is_dir() or not any(path.glob("[0-9]*.json")):
                pytest.fail(f"no cassette at {path}: record it with {RECORD_ENV}=1 and a real key")
            server = CassetteServer(path, ignore=ignore, realtime=realtime).start()
        session = CassetteSession(server.base_url, path, recording, server)
        sessions.append(session)
        return session

    try:
        yield factory
    finally:
        for session in reversed(sessions):
            session.server.stop()
    mismatches = [
        m for s in sessions if isinstance(s.server, CassetteServer) for m in s.server.mismatches
    ]
    if mismatches:
        pytest.fail("\n\n".join(mismatches), pytrace=False)
