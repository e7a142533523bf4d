"""The emulation server survives its clients: a request body over its cap gets
413 and leaves the server's memory where it was, a crowd of slow-loris
connections cannot keep a legitimate request out, a connection that never
finishes its request head is closed, and the server keeps only its latest
requests."""

from __future__ import annotations

import re
import resource
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from toolwire.testing import EmulationServer, Scenario, ServerLimits

MIB = 1024 * 1024
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


class Served:
    """``toolwire serve`` in a child process."""

    def __init__(self, process: subprocess.Popen[str], url: str) -> None:
        self.process = process
        self.url = url

    def rss_kib(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        match = re.search(r"VmRSS:\s+(\d+) kB", status)
        assert match is not None
        return int(match.group(1))


def serve(nofile: int | None = None) -> Iterator[Served]:
    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    process = subprocess.Popen(
        [sys.executable, "-m", "toolwire", "serve", "--port", "0", "--scenario", "weather"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=limit,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"listening on (http://\S+)", line)
    assert match is not None, line
    try:
        yield Served(process, match.group(1))
    finally:
        process.terminate()
        process.communicate(timeout=30)


@pytest.fixture
def served() -> Iterator[Served]:
    yield from serve()


def chunks(total: int) -> Iterator[bytes]:
    piece = b" " * MIB  # a light client: the same megabyte, again and again
    for _ in range(total // MIB):
        yield piece


@pytest.mark.parametrize("with_length", [True, False], ids=["content-length", "chunked"])
def test_a_huge_post_is_refused_and_the_server_memory_stays_put(
    served: Served, with_length: bool
) -> None:
    size = 256 * MIB  # the full 512 MB figure is measured by bench/bench_bounds.py
    with httpx.Client(timeout=120) as client:
        assert client.post(served.url + "/v1/chat/completions", json=CHAT).status_code == 200
        baseline = served.rss_kib()
        headers = {"content-type": "application/json"}
        if with_length:
            headers["content-length"] = str(size)
        reply = client.post(
            served.url + "/v1/chat/completions", content=chunks(size), headers=headers
        )
        assert reply.status_code == 413
        assert "larger than 33554432 bytes" in reply.json()["error"]["message"]
        after = served.rss_kib()
        # Still serving.
        assert client.post(served.url + "/v1/chat/completions", json=CHAT).status_code == 200
    assert (after - baseline) / 1024 < 48, f"the server grew by {(after - baseline) / 1024} MiB"


def test_slow_loris_connections_do_not_starve_a_legitimate_request() -> None:
    # The server may hold 256 descriptors (so 128 connections): 320 clients
    # that open a connection and never finish their request would use them
    # all, and accept() would fail for everyone after them.
    for served in serve(nofile=256):
        slow: list[socket.socket] = []
        try:
            host, port = served.url.removeprefix("http://").split(":")
            for _ in range(320):
                sock = socket.create_connection((host, int(port)))
                sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
                slow.append(sock)
            with httpx.Client(timeout=60) as client:
                reply = client.post(served.url + "/v1/chat/completions", json=CHAT)
            assert reply.status_code == 200
            assert "choices" in reply.json()
        finally:
            for sock in slow:
                sock.close()


def test_a_connection_that_never_finishes_its_head_is_closed() -> None:
    limits = ServerLimits(header_timeout=0.3)
    with EmulationServer(Scenario.builtin("quickstart"), limits=limits) as server:
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
            sock.settimeout(30)  # a guard: the server closes it long before
            assert sock.recv(1) == b""
        with httpx.Client(timeout=30) as client:  # the others are served
            assert client.post(server.url_for("openai-chat") + "/chat/completions", json=CHAT)


def test_the_server_keeps_only_its_latest_requests() -> None:
    scenario = Scenario.from_dict({"name": "t", "turns": [{"text": "ok"}]})
    with EmulationServer(scenario, max_recorded_requests=2) as server:
        with httpx.Client(timeout=30) as client:
            for n in range(5):
                body = {**CHAT, "messages": [{"role": "user", "content": str(n)}]}
                client.post(server.url_for("openai-chat") + "/chat/completions", json=body)
    assert [r["messages"][0]["content"] for r in server.requests] == ["3", "4"]


def test_the_body_cap_is_a_setting() -> None:
    limits = ServerLimits(max_body_bytes=1000)
    with EmulationServer(Scenario.builtin("quickstart"), limits=limits) as server:
        url = server.url_for("openai-chat") + "/chat/completions"
        with httpx.Client(timeout=30) as client:
            big = {**CHAT, "messages": [{"role": "user", "content": "x" * 2000}]}
            assert client.post(url, json=big).status_code == 413
            assert client.post(url, json=CHAT).status_code == 200


def test_a_body_sent_slowly_gets_408_and_the_others_are_served() -> None:
    limits = ServerLimits(body_timeout=0.3, min_body_rate=1000)
    with EmulationServer(Scenario.builtin("quickstart"), limits=limits) as server:
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                b"Content-Length: 100000\r\nContent-Type: application/json\r\n\r\n{"
            )
            sock.settimeout(30)  # a guard: the server answers long before
            reply = b""
            while b"\r\n\r\n" not in reply:
                piece = sock.recv(4096)
                if not piece:
                    break
                reply += piece
                sock.sendall(b" ")  # a byte at a time: far below the minimum rate
            assert reply.startswith(b"HTTP/1.1 408")
        with httpx.Client(timeout=30) as client:
            assert client.post(server.url_for("openai-chat") + "/chat/completions", json=CHAT)


def test_large_bodies_are_kept_as_digests() -> None:
    scenario = Scenario.from_dict({"name": "t", "turns": [{"text": "ok"}]})
    with EmulationServer(scenario) as server:
        with httpx.Client(timeout=30) as client:
            big = {**CHAT, "messages": [{"role": "user", "content": "x" * 2 * MIB}]}
            for body in (big, CHAT):
                client.post(server.url_for("openai-chat") + "/chat/completions", json=body)
    first, second = server.requests
    assert set(first) == {"toolwire_body_digest", "bytes"} and first["bytes"] > 2 * MIB
    assert second == CHAT
