"""The transport bounds what it reads and how long it waits, whatever the
server does: an error body is read up to a cap (a gigabyte-sized one leaves
the client's memory flat), a whole body beyond its cap is refused, a server
that keeps the connection alive forever meets the default total deadline, and
a redirect is reported as one, never followed: the key never travels to
another host."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from toolwire import (
    Agent,
    BodyLimits,
    HttpRetryPolicy,
    HttpxTransport,
    ProviderError,
    RemoteProtocolError,
    Timeouts,
    TransportTimeout,
)
from toolwire.http import HttpRequest
from toolwire.providers import OpenAIChat
from toolwire.testing.serving import LoopbackServer

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
MIB = 1024 * 1024
MOVED = "/moved/chat/completions"
HUGE = 256 * MIB  # the full-size 1 GB figure is measured by bench/bench_bounds.py


class Misbehaving:
    """Routes that misbehave in a bounded way, counting what they sent."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.redirect_to = ""

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/huge-error", self.huge_error, methods=["POST"]),
                Route("/big-body", self.big_body, methods=["POST"]),
                Route("/keep-alive/chat/completions", self.keep_alive, methods=["POST"]),
                Route("/moved/chat/completions", self.moved, methods=["POST"]),
                Route("/v1/chat/completions", self.target, methods=["POST"]),
            ]
        )

    async def _stream(self, total: int) -> AsyncIterator[bytes]:
        piece = b"x" * min(MIB, total)
        yield b'{"error": {"message": "'
        left = total
        while left > 0:
            left -= len(piece)
            yield piece
        yield b'"}}'

    async def huge_error(self, request: Request) -> Response:
        return StreamingResponse(self._stream(HUGE), status_code=500)

    async def big_body(self, request: Request) -> Response:
        size = int(request.query_params["size"])
        headers = {"content-length": str(size + 26)} if "length" in request.query_params else {}
        return StreamingResponse(self._stream(size), headers=headers)

    async def keep_alive(self, request: Request) -> Response:
        async def comments() -> AsyncIterator[bytes]:
            while True:  # a byte now and then, never an event, never an end
                yield b": keep-alive\n\n"
                await anyio.sleep(0.02)

        return StreamingResponse(comments(), media_type="text/event-stream")

    async def moved(self, request: Request) -> Response:
        return Response(status_code=307, headers={"location": self.redirect_to})

    async def target(self, request: Request) -> Response:
        self.requests["target"] += 1
        return Response(b"{}", media_type="application/json")


@pytest.fixture
def server() -> Iterator[tuple[Misbehaving, str]]:
    behaviour = Misbehaving()
    with LoopbackServer(behaviour.app()) as running:
        yield behaviour, running.base_url


def post(url: str, *, stream: bool) -> HttpRequest:
    return HttpRequest(
        method="POST", url=url, headers={"x-api-key": "k"}, json={"m": 1}, stream=stream
    )


async def test_a_huge_error_body_leaves_the_client_memory_flat(
    server: tuple[Misbehaving, str],
) -> None:
    _, url = server
    done = await anyio.to_thread.run_sync(
        lambda: subprocess.run(
            [sys.executable, "-m", "tests.transport._bounds_client", url + "/huge-error"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
            check=True,
        )
    )
    report = json.loads(done.stdout)
    assert report["status"] == 500
    assert report["body_chars"] <= 64 * 1024 + 100  # the cap, as JSON text
    growth_mib = (report["after_kib"] - report["before_kib"]) / 1024
    assert growth_mib < 40, f"the client's peak memory grew by {growth_mib:.0f} MiB"


@pytest.mark.parametrize("length", [True, False], ids=["content-length", "chunked"])
async def test_a_whole_body_beyond_its_cap_is_refused(
    server: tuple[Misbehaving, str], length: bool
) -> None:
    _, url = server
    target = url + f"/big-body?size={8 * MIB}" + ("&length=1" if length else "")
    limits = BodyLimits(max_body_bytes=MIB)
    async with HttpxTransport(limits=limits, retry=HttpRetryPolicy(retries=0)) as transport:
        with pytest.raises(RemoteProtocolError, match="larger than 1048576 bytes"):
            await transport.send(post(target, stream=False))
        small = await transport.send(post(url + "/big-body?size=1000", stream=False))
    assert len(small.content) == 1000 + 26


def test_the_default_limits_and_total_deadline() -> None:
    assert Timeouts().total == 600.0
    assert BodyLimits() == BodyLimits(max_body_bytes=32 * MIB, max_error_body_bytes=64 * 1024)


async def test_keep_alives_cannot_hold_a_run_forever(server: tuple[Misbehaving, str]) -> None:
    _, url = server
    agent = Agent(
        OpenAIChat(base_url=url + "/keep-alive", api_key="k", timeout=Timeouts(read=5, total=0.5)),
        model="m",
        journal=False,
    )
    try:
        with pytest.raises(TransportTimeout, match="total timeout"):
            await agent.run("hi")
    finally:
        await agent.aclose()


@pytest.mark.parametrize("follow", [False, True], ids=["own client", "client that follows"])
async def test_a_redirect_is_reported_and_never_followed(
    server: tuple[Misbehaving, str], follow: bool
) -> None:
    import httpx

    behaviour, url = server
    with LoopbackServer(behaviour.app()) as other:  # another host:port
        behaviour.redirect_to = other.base_url + "/v1/chat/completions?token=abc123"
        client = httpx.AsyncClient(follow_redirects=True) if follow else None
        async with HttpxTransport(client=client) as transport:
            for stream in (True, False):
                with pytest.raises(ProviderError) as caught:
                    if stream:
                        async with transport.stream(
                            post(url + "/moved/chat/completions", stream=True)
                        ):
                            pass
                    else:
                        await transport.send(post(url + "/moved/chat/completions", stream=False))
                error: Any = caught.value
                assert error.status_code == 307
                assert f"redirects to {other.base_url}/v1/chat/completions" in error.message
                assert "abc123" not in error.message
        if client is not None:
            await client.aclose()
    assert behaviour.requests["target"] == 0, "the key never went to the other host"
