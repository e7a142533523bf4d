"""The viewer's server drops a connection whose request head does not
arrive whole in time (a client that sends a few bytes now and then would
hold it forever), over a real socket; a request on time is answered."""

from __future__ import annotations

import socket
import time
from pathlib import Path

from toolwire.journal import SQLiteJournal
from toolwire.view import ViewSettings

from ._support import serving


def _connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.settimeout(0.2)
    return sock


def _closed_within(sock: socket.socket, seconds: float, trickle: bytes) -> bool:
    """Whether the server closes ``sock`` within ``seconds``, while a byte of
    ``trickle`` is sent every 0.2 s (the keep-alive timer of uvicorn is reset
    by each)."""
    limit = time.monotonic() + seconds
    at = 0
    while time.monotonic() < limit:
        try:
            if sock.recv(1024) == b"":
                return True
        except TimeoutError:
            pass
        except ConnectionResetError:
            return True
        try:
            sock.sendall(trickle[at % len(trickle) : at % len(trickle) + 1])
        except (BrokenPipeError, ConnectionResetError):
            return True
        at += 1
    return False


def test_a_head_that_trickles_in_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    SQLiteJournal(path).close()
    with serving(path, head_timeout=1.0) as viewer:
        port = viewer.settings.port
        with _connect(port) as slow:
            slow.sendall(f"GET {viewer.root}/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
            started = time.monotonic()
            # Generous: dropped after about a second, on a machine however loaded.
            assert _closed_within(slow, 20.0, b"X-Slow: yes\r\n"), "the slow head was kept"
            assert time.monotonic() - started >= 0.9  # not before its time
        with viewer.client() as client:  # the viewer answers on
            assert client.get("/").status_code == 200


def test_a_silent_connection_is_dropped_too(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    SQLiteJournal(path).close()
    with serving(path, head_timeout=1.0) as viewer:
        with _connect(viewer.settings.port) as silent:
            limit = time.monotonic() + 20.0
            closed = False
            while not closed and time.monotonic() < limit:
                try:
                    closed = silent.recv(1024) == b""
                except TimeoutError:
                    pass
        assert closed, "a connection that sent nothing was kept"


def test_the_default_head_timeout_is_a_few_seconds() -> None:
    assert 1.0 <= ViewSettings(journal="j", token="t", port=1).head_timeout <= 10.0
