"""Fixtures of the real-server tier: the built cache, and one process per server.

Each server starts once per test session, on a free port of 127.0.0.1, and is
stopped at its end. Logs go to the session's temporary folder (kept by
pytest); a failing test's report ends with the tail of its server's log.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from tests.realservers.cache import CACHE_ENV, Cache, Tokens
from tests.realservers.servers import Server, start

SEED = "42"
CONTEXT = "2048"


@pytest.fixture(scope="session")
def cache() -> Cache:
    cache = Cache.from_env()
    missing = cache.missing()
    if missing:
        listed = ", ".join(str(path) for path in missing)
        pytest.fail(
            f"not built yet: {listed}. `make test-llamacpp` builds them "
            f"(in ${CACHE_ENV}, default .cache/llamacpp/).",
            pytrace=False,
        )
    return cache


@pytest.fixture(scope="session")
def tokens(cache: Cache) -> Tokens:
    return Tokens.load(cache.tokens)


@pytest.fixture(scope="session")
def server_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("server-logs")


@pytest.fixture(scope="session")
def llama_cpp_python(cache: Cache, server_logs: Path) -> Iterator[Server]:
    """llama-cpp-python's server, with the chat format that calls tools."""

    def command(port: int) -> list[str | Path]:
        return [
            *(cache.python, "-m", "llama_cpp.server", "--model", cache.model),
            *("--model_alias", "tiny", "--chat_format", "chatml-function-calling"),
            *("--host", "127.0.0.1", "--port", str(port), "--n_ctx", CONTEXT),
            *("--seed", SEED, "--n_threads", "1"),
        ]

    server = start("llama-cpp-python", command, health="/v1/models", log_dir=server_logs)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def llama_server(cache: Cache, server_logs: Path) -> Iterator[Server]:
    """llama.cpp's llama-server, rendering and parsing tools with the model's own template."""

    def command(port: int) -> list[str | Path]:
        return [
            *(cache.llama_server, "--model", cache.model, "--jinja", "--no-webui"),
            *("--host", "127.0.0.1", "--port", str(port), "--ctx-size", CONTEXT),
            *("--seed", SEED, "--parallel", "1", "--threads", "1"),
        ]

    server = start("llama-server", command, health="/health", log_dir=server_logs)
    yield server
    server.stop()


@pytest.fixture
def anyio_backend() -> str:
    # One event loop for this tier: the real servers are what it tests, each
    # test costs seconds of CPU inference, and make test already runs the
    # agent on asyncio and trio against the emulation server.
    return "asyncio"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failing test's report ends with its servers' logs."""
    report = yield
    if report.failed:
        for value in getattr(item, "funcargs", {}).values():
            if isinstance(value, Server):
                report.sections.append((f"{value.name} log: {value.log}", value.log_tail()))
    return report
