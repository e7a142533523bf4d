"""Bounds at full size: what a hostile server or client costs toolwire.

Three measurements, each in processes of their own so that the figures are
the process under test's alone (the test suite runs scaled-down versions):

* **error body**: a server answers HTTP 500 with a 1 GiB body, streamed from
  a generator; a client process sends one request through ``HttpxTransport``
  and reports the growth of its peak RSS (``ru_maxrss``).
* **huge POST**: ``toolwire serve`` in a child process receives a 512 MiB
  POST (streamed from a generator, with and without ``Content-Length``); the
  answer's status and the server's RSS (``/proc/PID/status``) before, after
  and after a following normal request are reported.
* **slow loris**: ``toolwire serve`` with a 2,048-descriptor limit; 1,024
  connections send half a request head and stop; then a legitimate request
  is sent, and its status and latency are reported.
* **slow bodies**: ``toolwire serve``; 200 connections send a whole head
  announcing a 1 MiB body, then trickle it a byte a second; a legitimate
  request is sent meanwhile; how many trickling clients got ``408`` (and
  when) is reported.
* **many choices**: a client process decodes a response of 16 choices of
  60 MiB of text each (960 MiB in all), and one of 1,000,000 tool calls
  spread over 10 choices; what it accepted before refusing, and its peak RSS.
* **gzip ratio**: a server answers with a 1 GiB gzip bomb (1 MiB on the
  wire); a client process reads it through ``HttpxTransport``: what was
  inflated before the refusal, and its peak RSS.

    python bench/bench_bounds.py [--error-mib 1024] [--post-mib 512] [--slow 1024]
        [--slow-bodies 200] [--bomb-mib 1024]
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

MIB = 1024 * 1024
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}

_CLIENT = """
import json, resource, sys, anyio
from toolwire import HttpRetryPolicy, HttpxTransport, ProviderError
from toolwire.http import HttpRequest

async def main(url):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    request = HttpRequest(method="POST", url=url, json={"m": 1}, stream=True)
    async with HttpxTransport(retry=HttpRetryPolicy(retries=0)) as transport:
        try:
            async with transport.stream(request):
                status, size = 200, 0
        except ProviderError as exc:
            status, size = exc.status_code, len(json.dumps(exc.body))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"status": status, "body_chars": size, "before_kib": before,
                      "after_kib": after}))

anyio.run(main, sys.argv[1])
"""


_GZIP_CLIENT = """
import json, resource, sys, anyio
from toolwire import HttpRetryPolicy, HttpxTransport, RemoteProtocolError
from toolwire.http import HttpRequest

async def main(url):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    request = HttpRequest(method="POST", url=url, json={"m": 1}, stream=True)
    inflated, error = 0, None
    async with HttpxTransport(retry=HttpRetryPolicy(retries=0)) as transport:
        try:
            async with transport.stream(request) as response:
                async for chunk in response.aiter_bytes():
                    inflated += len(chunk)
        except RemoteProtocolError as exc:
            error = str(exc)[:90]
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"inflated": inflated, "error": error, "before_kib": before,
                      "after_kib": after}))

anyio.run(main, sys.argv[1])
"""

_CHOICES_CLIENT = """
import json, resource, sys, time
from toolwire.stream.decoder import StreamDecoder

def sse(chunk):
    return ("data: " + json.dumps(chunk) + "\\n\\n").encode()

def text(choices, mib):
    piece = "x" * (1 << 20)
    payloads = [sse({"choices": [{"index": c, "delta": {"content": piece}}]})
                for c in range(choices)]
    decoder, fed = StreamDecoder("openai-chat"), 0
    for _ in range(mib):
        for payload in payloads:
            decoder.feed(payload)
            if decoder.error is not None:
                return fed, decoder.error
            fed += 1 << 20
    return fed, decoder.error

def calls(count, choices):
    decoder, fed = StreamDecoder("openai-chat"), 0
    for start in range(0, count, 10_000):
        batch = b"".join(
            sse({"choices": [{"index": n % choices, "delta": {"tool_calls": [{"index": n,
                 "id": f"c{n}", "function": {"name": "f", "arguments": "{}"}}]}}]})
            for n in range(start, start + 10_000))
        events = decoder.feed(batch)
        fed += sum(1 for e in events if e.kind == "tool_call_started")
        if decoder.error is not None:
            return fed, decoder.error
    return fed, decoder.error

before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
if sys.argv[1] == "text":
    accepted, error = text(int(sys.argv[2]), int(sys.argv[3]))
else:
    accepted, error = calls(int(sys.argv[2]), int(sys.argv[3]))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"accepted": accepted, "error": str(error)[:90] if error else None,
                  "before_kib": before, "after_kib": after,
                  "seconds": round(time.perf_counter() - started, 2)}))
"""


def huge_error_server(size: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(500)
            self.send_header("content-length", str(size))
            self.end_headers()
            piece = b"x" * MIB
            try:
                for _ in range(size // MIB):
                    self.wfile.write(piece)
            except OSError:  # the client stopped reading, as it should
                pass

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def measure_error_body(mib: int) -> dict[str, object]:
    server = huge_error_server(mib * MIB)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _CLIENT, url], capture_output=True, text=True, check=True
    )
    server.shutdown()
    report = json.loads(done.stdout)
    growth = (report["after_kib"] - report["before_kib"]) / 1024
    return {
        "error body": f"{mib} MiB",
        "status": report["status"],
        "body kept (chars)": report["body_chars"],
        "client peak RSS growth (MiB)": round(growth, 1),
        "client peak RSS (MiB)": round(report["after_kib"] / 1024, 1),
        "seconds": round(time.perf_counter() - started, 2),
    }


class Served:
    def __init__(self, nofile: int | None = None) -> None:
        def limit() -> None:
            if nofile is not None:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.process = subprocess.Popen(
            [sys.executable, "-m", "toolwire", "serve", "--port", "0", "--scenario", "weather"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            preexec_fn=limit,
        )
        assert self.process.stdout is not None
        match = re.search(r"listening on (http://\S+)", self.process.stdout.readline())
        assert match is not None
        self.url = match.group(1)

    def rss_mib(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        match = re.search(r"VmRSS:\s+(\d+) kB", status)
        assert match is not None
        return round(int(match.group(1)) / 1024, 1)

    def close(self) -> None:
        self.process.terminate()
        self.process.communicate(timeout=30)


def chunks(size: int) -> Iterator[bytes]:
    piece = b" " * MIB
    for _ in range(size // MIB):
        yield piece


def measure_post(mib: int) -> list[dict[str, object]]:
    rows = []
    for with_length in (True, False):
        served = Served()
        try:
            with httpx.Client(timeout=600) as client:
                client.post(served.url + "/v1/chat/completions", json=CHAT)
                baseline = served.rss_mib()
                headers = {"content-length": str(mib * MIB)} if with_length else {}
                started = time.perf_counter()
                reply = client.post(
                    served.url + "/v1/chat/completions", content=chunks(mib * MIB), headers=headers
                )
                seconds = time.perf_counter() - started
                after = served.rss_mib()
                client.post(served.url + "/v1/chat/completions", json=CHAT)
                rows.append(
                    {
                        "POST": f"{mib} MiB, " + ("Content-Length" if with_length else "chunked"),
                        "status": reply.status_code,
                        "server RSS before (MiB)": baseline,
                        "after (MiB)": after,
                        "after one more request (MiB)": served.rss_mib(),
                        "seconds": round(seconds, 2),
                    }
                )
        finally:
            served.close()
    return rows


def measure_slow_loris(count: int) -> dict[str, object]:
    served = Served(nofile=2 * count)
    slow: list[socket.socket] = []
    try:
        host, port = served.url.removeprefix("http://").split(":")
        for _ in range(count):
            sock = socket.create_connection((host, int(port)), timeout=60)
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
            slow.append(sock)
        started = time.perf_counter()
        with httpx.Client(timeout=120) as client:
            reply = client.post(served.url + "/v1/chat/completions", json=CHAT)
        return {
            "slow connections": count,
            "server descriptor limit": 2 * count,
            "legitimate request": reply.status_code,
            "its latency (s)": round(time.perf_counter() - started, 3),
        }
    finally:
        for sock in slow:
            sock.close()
        served.close()


def measure_slow_bodies(count: int) -> dict[str, object]:
    served = Served(nofile=4 * count + 64)
    slow: list[socket.socket] = []
    try:
        host, port = served.url.removeprefix("http://").split(":")
        head = (
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
            b"\r\nContent-Length: 1048576\r\n\r\n{"
        )
        started = time.perf_counter()
        for _ in range(count):
            sock = socket.create_connection((host, int(port)), timeout=60)
            sock.sendall(head)
            sock.setblocking(False)
            slow.append(sock)
        with httpx.Client(timeout=120) as client:
            asked = time.perf_counter()
            reply = client.post(served.url + "/v1/chat/completions", json=CHAT)
            latency = time.perf_counter() - asked
        answered: dict[int, float] = {}
        while len(answered) < count and time.perf_counter() - started < 60:
            for n, sock in enumerate(slow):
                if n in answered:
                    continue
                try:
                    if sock.recv(64).startswith(b"HTTP/1.1 408"):
                        answered[n] = time.perf_counter() - started
                    continue
                except BlockingIOError:
                    pass
                except OSError:
                    answered[n] = time.perf_counter() - started
                    continue
                try:
                    sock.send(b" ")  # a byte a second, at most
                except OSError:
                    pass
            time.sleep(1)
        return {
            "slow bodies": count,
            "answered 408 or closed": len(answered),
            "last one after (s)": round(max(answered.values(), default=0.0), 1),
            "legitimate request meanwhile": reply.status_code,
            "its latency (s)": round(latency, 3),
        }
    finally:
        for sock in slow:
            sock.close()
        served.close()


def _child(code: str, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    report: dict[str, object] = json.loads(done.stdout)
    before, after = report.pop("before_kib"), report.pop("after_kib")
    assert isinstance(before, int) and isinstance(after, int)
    report["client peak RSS growth (MiB)"] = round((after - before) / 1024, 1)
    return report


def measure_many_choices() -> list[dict[str, object]]:
    text = _child(_CHOICES_CLIENT, "text", "16", "60")
    calls = _child(_CHOICES_CLIENT, "calls", "1000000", "10")
    return [
        {
            "response": "16 choices x 60 MiB of text (960 MiB)",
            "chars accepted": text["accepted"],
            **{k: v for k, v in text.items() if k != "accepted"},
        },
        {
            "response": "1,000,000 tool calls over 10 choices",
            "calls accepted": calls["accepted"],
            **{k: v for k, v in calls.items() if k != "accepted"},
        },
    ]


def gzip_bomb_server(mib: int) -> ThreadingHTTPServer:
    buffer = io.BytesIO()
    packer = gzip.GzipFile(fileobj=buffer, mode="wb")
    zeros = b"\0" * MIB
    for _ in range(mib):
        packer.write(zeros)
    packer.close()
    bomb = buffer.getvalue()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(200)
            self.send_header("content-encoding", "gzip")
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(bomb)))
            self.end_headers()
            try:
                self.wfile.write(bomb)
            except OSError:  # the client stopped reading, as it should
                pass

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.bomb_bytes = len(bomb)  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def measure_gzip_bomb(mib: int) -> dict[str, object]:
    server = gzip_bomb_server(mib)
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    started = time.perf_counter()
    report = _child(_GZIP_CLIENT, url)
    server.shutdown()
    return {
        "gzip bomb": f"{mib} MiB inflated, {server.bomb_bytes} bytes on the wire",  # type: ignore[attr-defined]
        "inflated before refusal (bytes)": report["inflated"],
        "error": report["error"],
        "client peak RSS growth (MiB)": report["client peak RSS growth (MiB)"],
        "seconds": round(time.perf_counter() - started, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--error-mib", type=int, default=1024)
    parser.add_argument("--post-mib", type=int, default=512)
    parser.add_argument("--slow", type=int, default=1024)
    parser.add_argument("--slow-bodies", type=int, default=200)
    parser.add_argument("--bomb-mib", type=int, default=1024)
    parser.add_argument(
        "--only", choices=["error", "post", "slow", "bodies", "choices", "gzip"], default=None
    )
    args = parser.parse_args()
    if args.only in (None, "error"):
        print(json.dumps(measure_error_body(args.error_mib)), flush=True)
    if args.only in (None, "post"):
        for row in measure_post(args.post_mib):
            print(json.dumps(row), flush=True)
    if args.only in (None, "slow"):
        print(json.dumps(measure_slow_loris(args.slow)), flush=True)
    if args.only in (None, "bodies"):
        print(json.dumps(measure_slow_bodies(args.slow_bodies)), flush=True)
    if args.only in (None, "choices"):
        for row in measure_many_choices():
            print(json.dumps(row), flush=True)
    if args.only in (None, "gzip"):
        print(json.dumps(measure_gzip_bomb(args.bomb_mib)), flush=True)


if __name__ == "__main__":
    main()
