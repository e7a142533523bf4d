"""The emulation server bounds the request bodies it holds at once, over real
HTTP on loopback: a crowd of concurrent uploads shares one budget (each
body waits for its turn and is joined once, never copied per step), a
body over the cap gets 413, and the bytes held never pass the budget."""

from __future__ import annotations

import socket
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from toolwire.testing import EmulationServer, Scenario, ServerLimits
from toolwire.testing._guard import BodyLimit

KIB = 1024
CAP = 256 * KIB
BUDGET = 512 * KIB


def _settled(guard: BodyLimit) -> tuple[int, int]:
    """The bytes held and reserved once the server is done: a client has its
    answer a moment before the server's handler returns and gives the body
    back, so the figures are read when they stop moving (within 10 s)."""
    deadline = time.monotonic() + 10
    while (guard.buffered or guard.reserved) and time.monotonic() < deadline:
        time.sleep(0.01)
    return guard.buffered, guard.reserved


def _body(size: int) -> bytes:
    text = "x" * (size - 80)
    return b'{"model":"m","messages":[{"role":"user","content":"%s"}]}' % text.encode()


def test_concurrent_uploads_stay_within_the_budget() -> None:
    limits = ServerLimits(max_body_bytes=CAP, max_buffered_bytes=BUDGET)
    with EmulationServer(Scenario.builtin("quickstart"), limits=limits) as server:
        url = server.url_for("openai-chat") + "/chat/completions"
        body = _body(CAP - KIB)

        def post(_: int) -> int:
            with httpx.Client(timeout=60) as client:
                headers = {"content-type": "application/json"}
                return client.post(url, content=body, headers=headers).status_code

        with ThreadPoolExecutor(24) as pool:
            codes = list(pool.map(post, range(24)))
        guard = server.body_limit
        assert guard is not None
        assert codes == [200] * 24
        assert 0 < guard.peak_buffered <= BUDGET
        assert _settled(guard) == (0, 0)


def test_a_body_over_the_cap_gets_413_and_holds_nothing() -> None:
    limits = ServerLimits(max_body_bytes=CAP, max_buffered_bytes=BUDGET)
    with EmulationServer(Scenario.builtin("quickstart"), limits=limits) as server:
        # Chunked, so no Content-Length refuses it before its bytes arrive.
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                b"Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
            )
            piece = b"x" * (64 * KIB)
            reply = b""
            sock.settimeout(30)
            for _ in range(4 * CAP // len(piece)):
                try:
                    sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                except OSError:
                    break
            try:
                sock.sendall(b"0\r\n\r\n")
                while b"\r\n\r\n" not in reply:
                    got = sock.recv(4096)
                    if not got:
                        break
                    reply += got
            except OSError:
                pass  # the server closed after its answer
        assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
        guard = server.body_limit
        assert guard is not None
        assert guard.peak_buffered <= BUDGET  # the cap, and the last piece that passed it
        assert _settled(guard) == (0, 0)
        with httpx.Client(timeout=30) as client:
            assert (
                client.post(
                    server.url_for("openai-chat") + "/chat/completions",
                    content=_body(KIB),
                    headers={"content-type": "application/json"},
                ).status_code
                == 200
            )
