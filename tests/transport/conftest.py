"""A real HTTP server on 127.0.0.1 that misbehaves on request.

Each behaviour lives under its own path prefix followed by a per-test token,
so that attempt counters (kept server-side) never mix between tests.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route

SSE_EVENTS = [
    b'data: {"choices": [{"index": 0, "delta": {"content": "Hel"}}]}\n\n',
    b'data: {"choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]}\n\n',
    b"data: [DONE]\n\n",
]


class LoopbackServer:
    """A uvicorn server in a background thread, with attempt counters."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.client_ports: dict[str, list[int]] = {}
        self.seen_headers: dict[str, dict[str, str]] = {}
        self.seen_header_names: dict[str, list[str]] = {}
        self._release: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._ready = threading.Event()
        config = uvicorn.Config(
            self._app(),
            log_level="critical",
            lifespan="off",
            http="h11",
            ws="none",
            timeout_graceful_shutdown=1,
        )
        server = _Server(config, self)
        self._server = server
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    def start(self) -> None:
        self._thread.start()
        if not self._ready.wait(timeout=10) or not self._server.started:
            raise RuntimeError("the loopback server did not start")

    def stop(self) -> None:
        if self._loop is not None and self._release is not None:
            self._loop.call_soon_threadsafe(self._release.set)
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def on_started(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._release = asyncio.Event()
        self._ready.set()

    def path(self, behaviour: str) -> str:
        """A fresh path for ``behaviour``; its attempts are counted apart."""
        return f"/{behaviour}/{uuid.uuid4().hex}"

    async def _drain(self, receive: Any) -> None:
        # Read the whole request body first: closing a socket with unread
        # input makes the kernel send RST, which may destroy the bytes we
        # sent before reaching the client.
        while True:
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body"):
                return

    def _record(self, scope: Any) -> int:
        path = scope["path"]
        self.counts[path] += 1
        client = scope.get("client") or ("", 0)
        self.client_ports.setdefault(path, []).append(client[1])
        self.seen_headers[path] = {k.decode(): v.decode() for k, v in scope["headers"]}
        self.seen_header_names[path] = [k.decode() for k, _ in scope["headers"]]
        return self.counts[path]

    def _app(self) -> Starlette:
        async def ok(request: Request) -> Response:
            self._record(request.scope)
            body = await request.body()
            return JSONResponse({"ok": True, "echo": json.loads(body or b"null")})

        async def cookie(request: Request) -> Response:
            self._record(request.scope)
            await request.body()
            response = JSONResponse({"ok": True})
            response.set_cookie("session", "from-the-server")
            return response

        async def rate_limited(request: Request) -> Response:
            if self._record(request.scope) == 1:
                return JSONResponse(
                    {"error": {"message": "slow down", "type": "requests"}},
                    status_code=429,
                    headers={"Retry-After": request.query_params.get("after", "1")},
                )
            return JSONResponse({"ok": True})

        async def rate_limited_ms(request: Request) -> Response:
            if self._record(request.scope) == 1:
                return JSONResponse({"error": "wait"}, 429, headers={"retry-after-ms": "20"})
            return JSONResponse({"ok": True})

        async def storm(request: Request) -> Response:
            self._record(request.scope)
            return JSONResponse({"error": {"message": "boom", "type": "server_error"}}, 500)

        async def bad_request(request: Request) -> Response:
            self._record(request.scope)
            return JSONResponse({"error": {"message": "bad tool schema"}}, 400)

        async def slow(request: Request) -> Response:
            self._record(request.scope)
            assert self._release is not None
            try:
                await asyncio.wait_for(self._release.wait(), timeout=5)
            except asyncio.TimeoutError:
                pass
            return JSONResponse({"late": True})

        async def sse(request: Request) -> Response:
            self._record(request.scope)

            async def events() -> Any:
                for event in SSE_EVENTS:
                    yield event

            return StreamingResponse(events(), media_type="text/event-stream")

        async def gzip_sse(request: Request) -> Response:
            # The stream compressed as one gzip member, sent in two pieces.
            self._record(request.scope)
            packed = gzip.compress(b"".join(SSE_EVENTS))

            async def pieces() -> Any:
                yield packed[: len(packed) // 2]
                yield packed[len(packed) // 2 :]

            return StreamingResponse(
                pieces(), media_type="text/event-stream", headers={"content-encoding": "gzip"}
            )

        async def chat(request: Request) -> Response:
            attempt = self._record(request.scope)
            mode = request.path_params["mode"]
            if mode == "ok":
                return JSONResponse(CHAT_BODY)
            if mode == "echo-key" and attempt == 1:
                return JSONResponse({"error": "busy"}, 429, headers={"retry-after-ms": "0"})
            auth = request.headers.get("authorization", "")
            return JSONResponse(
                {"error": {"message": f"Incorrect API key provided: {auth}", "code": "bad_key"}},
                401,
            )

        async def cut_stream(scope: Any, receive: Any, send: Any) -> None:
            # Headers and one event, then the app returns without finishing the
            # chunked body: the server closes the connection mid-body.
            self._record(scope)
            await self._drain(receive)
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            await send({"type": "http.response.body", "body": SSE_EVENTS[0], "more_body": True})

        async def stall_stream(scope: Any, receive: Any, send: Any) -> None:
            # One event, then silence until the server shuts down.
            self._record(scope)
            await self._drain(receive)
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            await send({"type": "http.response.body", "body": SSE_EVENTS[0], "more_body": True})
            assert self._release is not None
            try:
                await asyncio.wait_for(self._release.wait(), timeout=5)
            except asyncio.TimeoutError:
                pass
            await send({"type": "http.response.body", "body": b"", "more_body": False})

        async def cut_once(scope: Any, receive: Any, send: Any) -> None:
            # First attempt: a body shorter than its Content-Length. Then whole.
            attempt = self._record(scope)
            await self._drain(receive)
            payload = b'{"ok": true, "attempt": 2}'
            length = str(len(payload) + (50 if attempt == 1 else 0)).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", length),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": payload, "more_body": attempt == 1})

        return Starlette(
            routes=[
                Route("/ok/{token}", ok, methods=["POST"]),
                Route("/cookie/{token}", cookie, methods=["POST"]),
                Route("/rate-limited/{token}", rate_limited, methods=["POST"]),
                Route("/rate-limited-ms/{token}", rate_limited_ms, methods=["POST"]),
                Route("/storm/{token}", storm, methods=["POST"]),
                Route("/bad-request/{token}", bad_request, methods=["POST"]),
                Route("/slow/{token}", slow, methods=["POST"]),
                Route("/sse/{token}", sse, methods=["POST"]),
                Route("/gzip-sse/{token}", gzip_sse, methods=["POST"]),
                Route("/sse/{token}/chat/completions", sse, methods=["POST"]),
                Route("/chat/{token}/{mode}/chat/completions", chat, methods=["POST"]),
                Mount("/cut-stream", app=cut_stream),
                Mount("/cut-once", app=cut_once),
                Mount("/stall-stream", app=stall_stream),
            ]
        )


CHAT_BODY = {
    "id": "chatcmpl-loop",
    "model": "loop-model",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"杭州"}'},
                    }
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
}


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, owner: LoopbackServer) -> None:
        super().__init__(config)
        self._owner = owner

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        self._owner.on_started()


@pytest.fixture(scope="session")
def server() -> Iterator[LoopbackServer]:
    instance = LoopbackServer()
    instance.start()
    yield instance
    instance.stop()


@pytest.fixture
def refused_url() -> str:
    """A loopback URL nothing listens on."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/nothing"
