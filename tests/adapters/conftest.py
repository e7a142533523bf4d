"""Shared pieces of the SDK adapter tests: the traces the SDKs can stream, and clients."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import anthropic
import openai
import pytest

from tests.conftest import CORPUS, TRACES, Trace
from toolwire.testing import EmulationServer, Scenario

SDK_APIS = ("openai-chat", "openai-responses", "anthropic-messages")
SDK_TRACES = [t for t in TRACES if t.dialect in SDK_APIS]
USER = [{"role": "user", "content": "x"}]

# The official SDKs' async clients are tested on asyncio only. The openai SDK
# stops reading its stream's chain of async generators (its own and httpx2's)
# at [DONE] without closing them, the same with no adapter in between, and
# leaves them to the garbage collector, some in reference cycles. asyncio
# closes them quietly; under trio (anyio's test runner runs it as a guest)
# trio warns about each one, and in a whole-suite run one was finalized from
# the emulation server's thread while trio's ran ("async generator already
# executing"). The adapters' own async code runs on trio in test_adapters_unit.
SDK_ASYNC_CLIENT = pytest.mark.parametrize("anyio_backend", ["asyncio"])


@pytest.fixture(scope="session")
def replay_servers() -> Iterator[dict[str, EmulationServer]]:
    """One emulation server per recorded trace, replaying its exact bytes.

    Started together and stopped in parallel: a server takes a few
    milliseconds to start but about a tenth of a second to stop.
    """
    servers: dict[str, EmulationServer] = {}
    try:
        for trace in SDK_TRACES:
            replay = Scenario.replay_file(CORPUS / f"{trace.name}.sse")
            servers[trace.name] = EmulationServer(replay).start()
        yield servers
    finally:
        with ThreadPoolExecutor(max_workers=len(servers) or 1) as pool:
            list(pool.map(lambda s: s.stop(), servers.values()))


@pytest.fixture(scope="session")
def openai_client() -> Iterator[openai.OpenAI]:
    """One client (and connection pool); tests point it at a server with ``with_options``."""
    with openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key="k", max_retries=0) as client:
        yield client


@pytest.fixture(scope="session")
def anthropic_client() -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url="http://127.0.0.1:9", api_key="k", max_retries=0) as client:
        yield client


def trace_id(trace: Trace) -> str:
    return trace.name
