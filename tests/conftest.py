"""Shared test helpers: the conformance corpus of recorded provider streams,
a journal of its own for every test, a home folder of the suite's own, and
the event loops every async test runs on.

The whole suite runs with ``HOME`` and ``XDG_STATE_HOME`` pointed at one
empty temporary folder, and fails if anything is left in it at the end:
nothing the tests run (agents, the CLI, Ray, the examples) may write where
the user did not ask.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests._hypothesis import load_profile
from tests._tracing import guard_thread_tracing

pytest_plugins = ["pytester", "tests._postgres"]

load_profile()  # before any test module is imported: examples() reads it

CORPUS = Path(__file__).parent / "fixtures" / "conformance"

_HOME_KEY = pytest.StashKey[Path]()


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        # A pytest-xdist worker, measured by make test's coverage from its
        # start (pyproject.toml: patch = subprocess); the processes the tests
        # start are not: they would import coverage's own modules.
        os.environ.pop("COVERAGE_PROCESS_CONFIG", None)
    guard_thread_tracing()
    home = Path(tempfile.mkdtemp(prefix="toolwire-test-home-"))
    config.stash[_HOME_KEY] = home
    os.environ["HOME"] = os.environ["XDG_STATE_HOME"] = str(home)
    # Ray writes a generated token to ~/.ray/auth_token unless it is given one.
    os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))


RAY_TESTS = ("tests/ray/", "tests/cluster/", "test_ray_", "[ray.md]")
"""Tests that start Ray: ``make test`` runs them one after another on one
worker (``--dist loadgroup``), since two Ray instances at once would only
slow each other on a small machine."""


def is_ray_test(nodeid: str) -> bool:
    return any(part in nodeid for part in RAY_TESTS)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` with the Ray tests as one group, the largest unit,
    so it is handed out first; every other test is a unit of its own.

    pytest-xdist's own ``xdist_group`` marker renames the node ids it groups,
    which pytest 9.2 no longer lets a plugin do: the group is made here."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class RayGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "ray" if is_ray_test(nodeid) else nodeid

    return RayGroupScheduling(config, log)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    home = session.config.stash.get(_HOME_KEY, None)
    if home is None:
        return
    left = sorted(str(p.relative_to(home)) for p in home.rglob("*"))
    shutil.rmtree(home, ignore_errors=True)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            shown = ", ".join(left[:20])
            reporter.write_line(f"FAILED: the suite wrote in HOME: {shown}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@dataclass(frozen=True)
class Trace:
    """One recorded stream and its sidecar's expectations."""

    name: str
    body: bytes
    dialect: str
    expected: dict[str, Any]

    @property
    def decoder_api(self) -> str:
        return "cohere-v2" if self.dialect == "other" else self.dialect


def load_traces() -> list[Trace]:
    traces = []
    for sidecar in sorted(CORPUS.glob("*/*.json")):
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
        body = sidecar.with_suffix(".sse").read_bytes()
        name = f"{sidecar.parent.name}/{sidecar.stem}"
        traces.append(Trace(name, body, meta["api"], meta["expected"]))
    return traces


TRACES = load_traces()


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every async test runs on asyncio and on trio: toolwire promises anyio,
    so nothing outside code that says so may assume one event loop. A test
    that truly needs one loop pins it where it stands and says why."""
    backend: str = request.param
    return backend


@pytest.fixture
def anyio_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The delay of every ``anyio.sleep`` in this process from now on, in
    order (threads included); each still sleeps."""
    delays: list[float] = []
    real_sleep = anyio.sleep

    async def sleep(seconds: float) -> None:
        delays.append(seconds)
        await real_sleep(seconds)

    monkeypatch.setattr(anyio, "sleep", sleep)
    return delays


# The providers read these as the official SDKs do; a developer's own settings
# must not point the suite at a real server.
_BASE_URL_VARS = (
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "GEMINI_BASE_URL",
    "GOOGLE_GEMINI_BASE_URL",
)


@pytest.fixture(autouse=True)
def _hermetic_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Agents record to a journal in the test's own directory, never to the
    user's state directory, and providers ignore the developer's base URLs."""
    from toolwire.journal import close_journals

    for var in _BASE_URL_VARS:
        monkeypatch.delenv(var, raising=False)
    path = tmp_path / "journal.sqlite3"
    monkeypatch.setenv("TOOLWIRE_JOURNAL", str(path))
    yield path
    close_journals()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--realservers",
        action="store_true",
        help="run tests/realservers against real llama.cpp servers (make test-llamacpp)",
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/realservers needs servers built by make test-llamacpp: only with --realservers."""
    here = Path(__file__).parent
    if collection_path == here / "realservers" and not config.getoption("--realservers"):
        return True
    return None
