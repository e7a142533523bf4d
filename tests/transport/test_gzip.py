"""A compressed body is inflated in bounded pieces, with a ratio limit: a
gzip bomb is refused after a few MiB, never inflated a network read at a
time; a real compressed stream reads back exactly."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import AsyncIterator, Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from toolwire import BodyLimits, HttpRetryPolicy, HttpxTransport, RemoteProtocolError
from toolwire.http import HttpRequest
from toolwire.http._inflate import inflate
from toolwire.testing.serving import LoopbackServer

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024
BOMB = gzip.compress(b"\0" * (64 * MIB), compresslevel=9)  # about 64 KiB
EVENTS = b"".join(b'data: {"n": %d, "text": "some words"}\n\n' % i for i in range(20_000))


def app() -> Starlette:
    async def pieces(body: bytes) -> AsyncIterator[bytes]:
        for i in range(0, len(body), 16384):
            yield body[i : i + 16384]

    async def bomb(request: Request) -> Response:
        headers = {"content-encoding": "gzip"}
        return StreamingResponse(pieces(BOMB), headers=headers, status_code=200)

    async def events(request: Request) -> Response:
        encoding = request.query_params["encoding"]
        body = gzip.compress(EVENTS) if encoding == "gzip" else zlib.compress(EVENTS)
        return StreamingResponse(
            pieces(body), headers={"content-encoding": encoding}, media_type="text/event-stream"
        )

    return Starlette(
        routes=[
            Route("/bomb", bomb, methods=["POST"]),
            Route("/events", events, methods=["POST"]),
        ]
    )


@pytest.fixture
def url() -> Iterator[str]:
    with LoopbackServer(app()) as running:
        yield running.base_url


def post(url: str, *, stream: bool) -> HttpRequest:
    return HttpRequest(method="POST", url=url, headers={}, json={"m": 1}, stream=stream)


@pytest.mark.parametrize("stream", [True, False])
async def test_a_gzip_bomb_is_refused_by_its_ratio(url: str, stream: bool) -> None:
    async with HttpxTransport(retry=HttpRetryPolicy(retries=0)) as transport:
        with pytest.raises(RemoteProtocolError, match="inflates more than 100 times"):
            if stream:
                async with transport.stream(post(url + "/bomb", stream=True)) as response:
                    async for chunk in response.aiter_bytes():
                        assert len(chunk) <= MIB
            else:
                limits = BodyLimits(max_body_bytes=128 * MIB)
                async with HttpxTransport(limits=limits) as big:
                    await big.send(post(url + "/bomb", stream=False))


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_compressed_stream_reads_back_exactly(url: str, encoding: str) -> None:
    async with HttpxTransport() as transport:
        async with transport.stream(post(url + f"/events?encoding={encoding}", stream=True)) as r:
            body = b"".join([chunk async for chunk in r.aiter_bytes()])
    assert body == EVENTS


async def test_inflate_in_bounded_pieces() -> None:
    async def raw(data: bytes) -> AsyncIterator[bytes]:
        yield data

    sizes = [len(p) async for p in inflate(raw(BOMB), "gzip", max_ratio=10_000, piece_bytes=MIB)]
    assert sum(sizes) == 64 * MIB and max(sizes) <= MIB
    two = gzip.compress(b"a") + gzip.compress(b"b")  # two members
    assert b"".join([p async for p in inflate(raw(two), "gzip", max_ratio=100)]) == b"ab"
    raw_deflate = zlib.compressobj(wbits=-15)
    data = raw_deflate.compress(b"hello") + raw_deflate.flush()
    assert b"".join([p async for p in inflate(raw(data), "deflate", max_ratio=100)]) == b"hello"
    with pytest.raises(RemoteProtocolError, match="not valid gzip"):
        [p async for p in inflate(raw(b"not gzip at all"), "gzip", max_ratio=100)]
