"""A real MCP server process (tests/mcp/server_app.py) over stdio and over
streamable HTTP on loopback, shared by the tests of a module."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from toolwire.mcp import MCPConnection, connect_stdio

SERVER_APP = Path(__file__).parent / "server_app.py"
TOKEN = "mcp-test-token"


@pytest.fixture(scope="module", params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    # Module scope, for the module-scoped server below; not session: anyio's
    # runner stays alive (an event loop running in the main thread) as long
    # as an async fixture does, and other tests call anyio.run() in that thread.
    backend: str = request.param
    return backend


@pytest.fixture(scope="module")
async def stdio_server() -> AsyncIterator[MCPConnection]:
    """One server process per test module, talked to over stdio."""
    env = {"TOOLWIRE_MCP_TEST": "passed through env"}
    async with connect_stdio(sys.executable, [str(SERVER_APP)], env=env) as server:
        yield server


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """The URL of a server process (server_app.py) serving streamable HTTP on 127.0.0.1."""
    with serve_http(SERVER_APP) as url:
        yield url


@contextmanager
def serve_http(app: Path) -> Iterator[str]:
    """Run ``python APP --http-fd N`` serving streamable HTTP on 127.0.0.1: its URL.

    The test binds the socket and hands it to the child, so the port is known
    and cannot be taken in between; readiness is polled with short, bounded
    requests that also notice a child that died.
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    fd = listener.fileno()
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(
            [sys.executable, str(app), "--http-fd", str(fd)],
            pass_fds=(fd,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        listener.close()  # the child has its own copy
        url = f"http://127.0.0.1:{port}/mcp"
        try:
            for _ in range(100):
                if proc.poll() is not None:
                    break
                try:
                    # Any answer (a 401 without the token) means ready.
                    httpx.get(url, timeout=0.1)
                    break
                except httpx.TimeoutException:
                    continue
            if proc.poll() is not None:
                errors.seek(0)
                pytest.fail(f"the MCP test server exited: {errors.read().decode(errors='replace')}")
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
