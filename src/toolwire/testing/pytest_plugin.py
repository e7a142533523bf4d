"""The pytest plugin of toolwire: the ``toolwire_server`` and ``toolwire_cassette`` fixtures.

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
through ``toolwire proxy``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from toolwire.testing.scenario import Scenario
from toolwire.testing.server import EmulationServer

if TYPE_CHECKING:
    from toolwire.testing._serving import LoopbackServer

__all__ = [
    "RECORD_ENV",
    "CassetteFactory",
    "CassetteSession",
    "ServerFactory",
    "toolwire_cassette",
    "toolwire_server",
]

ServerFactory = Callable[..., EmulationServer]
"""``factory(scenario, **options) -> EmulationServer``, started on a free port."""


@pytest.fixture
def toolwire_server() -> Iterator[ServerFactory]:
    """A factory of started emulation servers, all stopped at teardown.

    Call it with a :class:`~toolwire.testing.Scenario` (or a built-in name, a
    file path, or the scenario's JSON shape) and any keyword option of
    :class:`~toolwire.testing.EmulationServer`.
    """
    servers: list[EmulationServer] = []

    def factory(
        scenario: Scenario | str | Path | dict[str, Any], **options: Any
    ) -> EmulationServer:
        options.setdefault("port", 0)
        server = EmulationServer(scenario, **options)
        server.start()
        servers.append(server)
        return server

    try:
        yield factory
    finally:
        for server in reversed(servers):
            server.stop()


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
def toolwire_cassette(request: pytest.FixtureRequest) -> Iterator[CassetteFactory]:
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
