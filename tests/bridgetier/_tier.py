"""What the coding agents' tests share: ``toolwire bridge`` run as its own
process (the command a user types), the agents' binaries from the tier's
npm install, and an environment with nothing of the machine's: a temporary
``HOME``, no telemetry or update checks, and a proxy that refuses every
connection off loopback, so an agent that reaches for the network fails
instead of leaving the machine."""

from __future__ import annotations

import os
import queue
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULES = Path(
    os.environ.get(
        "TOOLWIRE_BRIDGE_MODULES", str(HERE.parents[1] / ".tiers" / "bridge" / "node_modules")
    )
)
AGENT_DEADLINE = 180.0
"""Seconds an agent's whole run may take (a few, unloaded)."""
START_DEADLINE = 30.0
"""Seconds the bridge may take to say where it listens."""


def agent(name: str) -> str:
    """The path of an installed agent's command (``claude``, ``codex``)."""
    path = MODULES / ".bin" / name
    assert path.exists(), f"{path} is missing: run make test-bridge, which installs it"
    return str(path)


class Nowhere:
    """A proxy on loopback that forwards nothing: it keeps the first line
    of each request (``CONNECT api.example.com:443 ...``) and hangs up."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self.asked: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> Nowhere:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self._socket.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(2)
                try:
                    head = connection.recv(1024)
                except OSError:
                    head = b""
                self.asked.append(head.split(b"\r\n", 1)[0].decode("latin-1"))


def offline_env(home: Path, nowhere: Nowhere, **more: str) -> dict[str, str]:
    """An agent's environment: ``HOME`` at ``home``, every connection off
    loopback through ``nowhere``, and ``more``."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": str(home),
        "HTTPS_PROXY": nowhere.url,
        "HTTP_PROXY": nowhere.url,
        "https_proxy": nowhere.url,
        "http_proxy": nowhere.url,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    env.update(more)
    return env


def run_agent(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """An agent's run to its end, within :data:`AGENT_DEADLINE`."""
    return subprocess.run(
        args,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=AGENT_DEADLINE,
        check=False,
    )


@dataclass
class Bridge:
    """A running ``toolwire bridge``: its URL and what it printed."""

    url: str
    lines: list[str] = field(default_factory=list)

    @property
    def log(self) -> str:
        return "".join(self.lines)


@contextmanager
def bridge(*options: str) -> Iterator[Bridge]:
    """``toolwire bridge --port 0 OPTIONS`` until the block ends."""
    command = [sys.executable, "-m", "toolwire", "bridge", "--port", "0", *options]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    assert process.stdout is not None
    printed: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(target=_read, args=(process.stdout, printed), daemon=True)
    reader.start()
    try:
        first = printed.get(timeout=START_DEADLINE)
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", first)
        assert found, first
        running = Bridge(found.group(1), [first])
        yield running
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        reader.join(timeout=10)
        process.stdout.close()
    while not printed.empty():
        running.lines.append(printed.get_nowait())


def _read(stream: object, into: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line)
