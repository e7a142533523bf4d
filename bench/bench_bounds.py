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

    python bench/bench_bounds.py [--error-mib 1024] [--post-mib 512] [--slow 1024]
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--error-mib", type=int, default=1024)
    parser.add_argument("--post-mib", type=int, default=512)
    parser.add_argument("--slow", type=int, default=1024)
    args = parser.parse_args()
    print(json.dumps(measure_error_body(args.error_mib)), flush=True)
    for row in measure_post(args.post_mib):
        print(json.dumps(row), flush=True)
    print(json.dumps(measure_slow_loris(args.slow)), flush=True)


if __name__ == "__main__":
    main()
