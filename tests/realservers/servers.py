"""Start and stop a real server process on 127.0.0.1, with a deadline on every wait.

A server is ready when its health URL answers 200; it is given a free port
(if another process takes the port first, the server exits and is started
again on another). Its output goes to a log file, whose tail goes into the
error when it fails to start and into the report of a failing test.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

START_DEADLINE = 120.0
"""Seconds a server may take to load the model and answer its health URL."""
STOP_DEADLINE = 20.0
"""Seconds a server may take to exit after SIGTERM, before SIGKILL."""
POLL_INTERVAL = 0.1
STARTS = 3


class ServerFailed(Exception):
    """A server did not become ready; the message ends with its log's tail."""


@dataclass
class Server:
    """A running server process."""

    name: str
    base_url: str
    """The OpenAI-compatible base URL (``http://127.0.0.1:PORT/v1``)."""
    log: Path
    process: subprocess.Popen[bytes]

    def log_tail(self, lines: int = 60) -> str:
        return tail(self.log, lines)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after :data:`STOP_DEADLINE`; never left running."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_DEADLINE)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=STOP_DEADLINE)


def tail(path: Path, lines: int, *, width: int = 300) -> str:
    """The last ``lines`` lines, each cut at ``width`` characters."""
    if not path.exists():
        return ""
    last = path.read_text("utf-8", "replace").splitlines()[-lines:]
    return "\n".join(line if len(line) <= width else line[:width] + " [...]" for line in last)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start(
    name: str,
    command: Callable[[int], Sequence[str | Path]],
    *,
    health: str,
    log_dir: Path,
    env: Mapping[str, str] | None = None,
) -> Server:
    """Start ``command(port)`` and return once ``health`` answers 200.

    Raises:
        ServerFailed: the process exited, or was not ready in time.
    """
    failure = ""
    for attempt in range(1, STARTS + 1):
        port = free_port()
        log = log_dir / f"{name}.{attempt}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(arg) for arg in command(port)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
                start_new_session=True,  # its own process group: stop() reaches every child
            )
        server = Server(name, f"http://127.0.0.1:{port}/v1", log, process)
        try:
            wait_ready(server, f"http://127.0.0.1:{port}{health}")
            return server
        except ServerFailed as error:
            exited = process.poll() is not None
            server.stop()
            failure = str(error)
            if not exited:
                break  # alive but not ready in time: starting again would not help
    raise ServerFailed(f"{name} did not start: {failure}")


def wait_ready(server: Server, url: str) -> None:
    deadline = time.monotonic() + START_DEADLINE
    with httpx.Client(timeout=5.0) as client:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                raise ServerFailed(
                    f"exited with status {server.process.returncode}\n{server.log_tail()}"
                )
            try:
                if client.get(url).status_code == 200:
                    return
            except httpx.TransportError:
                pass  # not listening yet
            time.sleep(POLL_INTERVAL)
    raise ServerFailed(f"not ready within {START_DEADLINE:.0f} s\n{server.log_tail()}")
