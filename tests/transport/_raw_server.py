"""An HTTP/1.1 server on 127.0.0.1 written on bare sockets, for comparing what
two ways of sending put on the wire.

Every request is recorded as it arrived (the request line, the header lines
in their order, the body), under the first two segments of its path (a
test's own prefix, ``/way/token``); each prefix answers what the test
scripted for it, in turn (the last answer repeats). An answer can be cut (its
declared length never sent, the connection closed) or silent (no answer, the
connection held until the client leaves).
"""

from __future__ import annotations

import gzip
import socket
import threading
from dataclasses import dataclass

__all__ = ["Answer", "RawServer", "Seen"]


@dataclass(frozen=True)
class Answer:
    """What the server answers one request with."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    gzip: bool = False
    cut: bool = False
    """Declare the whole length (at least one byte), send half, close."""
    silent: bool = False
    """Never answer; hold the connection until the client closes it."""


@dataclass(frozen=True)
class Seen:
    """One request as it arrived."""

    method: str
    target: str
    version: str
    headers: tuple[tuple[str, str], ...]
    """As they came: names in their case, in their order."""
    body: bytes


class RawServer:
    """The server; :meth:`start` it, script paths with :meth:`script`."""

    def __init__(self) -> None:
        self.seen: dict[str, list[Seen]] = {}
        self._answers: dict[str, list[Answer]] = {}
        self._lock = threading.Condition()
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self.url = ""

    def __repr__(self) -> str:  # short: Hypothesis shows it with every example
        return f"RawServer({self.url!r})"

    def start(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        sock.settimeout(0.2)
        self._sock = sock
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        if self._sock is not None:
            self._sock.close()

    def script(self, path: str, answers: list[Answer]) -> None:
        """What requests under ``path`` (``/a/b``) are answered, in turn."""
        with self._lock:
            self._answers[path] = list(answers)
            self.seen[path] = []

    def wait_for(self, path: str, count: int, timeout: float = 30.0) -> None:
        """Block until ``count`` requests under ``path`` have arrived."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self.seen.get(path, ())) >= count, timeout):
                raise TimeoutError(f"{count} requests under {path} never arrived")

    def _accept(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(0.2)
        buffer = b""
        with conn:
            while not self._stop.is_set():
                head, buffer = _read_head(conn, buffer, self._stop)
                if head is None:
                    return
                method, target, version, headers = _parse_head(head)
                length = int({k.lower(): v for k, v in headers}.get("content-length", "0"))
                body, buffer = _read_exactly(conn, buffer, length, self._stop)
                if body is None:
                    return
                path = "/".join(target.split("?", 1)[0].split("/")[:3])
                with self._lock:
                    self.seen.setdefault(path, []).append(
                        Seen(method, target, version, headers, body)
                    )
                    self._lock.notify_all()
                    queue = self._answers.get(path) or [Answer(status=404)]
                    answer = queue.pop(0) if len(queue) > 1 else queue[0]
                if not self._answer(conn, answer):
                    return

    def _answer(self, conn: socket.socket, answer: Answer) -> bool:
        """Send ``answer``; whether the connection may carry another request."""
        if answer.silent:
            while not self._stop.is_set():
                try:
                    if not conn.recv(65536):
                        return False
                except TimeoutError:
                    continue
                except OSError:
                    return False
            return False
        body = gzip.compress(answer.body, mtime=0) if answer.gzip else answer.body
        # A cut empty body declares one byte, never sent: sent whole, it would
        # be a complete answer on a connection then closed, and whether the
        # client's next request found it closed would depend on the load.
        declared = max(len(body), 1) if answer.cut else len(body)
        lines = [f"HTTP/1.1 {answer.status} Scripted", f"Content-Length: {declared}"]
        if answer.gzip:
            lines.append("Content-Encoding: gzip")
        lines += [f"{name}: {value}" for name, value in answer.headers]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        try:
            if answer.cut:
                conn.sendall(head + body[: len(body) // 2])
                return False
            conn.sendall(head + body)
        except OSError:
            return False
        return True


def _read_head(
    conn: socket.socket, buffer: bytes, stop: threading.Event
) -> tuple[bytes | None, bytes]:
    while b"\r\n\r\n" not in buffer:
        chunk = _recv(conn, stop)
        if not chunk:
            return None, b""
        buffer += chunk
    head, rest = buffer.split(b"\r\n\r\n", 1)
    return head, rest


def _read_exactly(
    conn: socket.socket, buffer: bytes, length: int, stop: threading.Event
) -> tuple[bytes | None, bytes]:
    while len(buffer) < length:
        chunk = _recv(conn, stop)
        if not chunk:
            return None, b""
        buffer += chunk
    return buffer[:length], buffer[length:]


def _recv(conn: socket.socket, stop: threading.Event) -> bytes:
    while not stop.is_set():
        try:
            return conn.recv(65536)
        except TimeoutError:
            continue
        except OSError:
            return b""
    return b""


def _parse_head(head: bytes) -> tuple[str, str, str, tuple[tuple[str, str], ...]]:
    first, *lines = head.decode("latin-1").split("\r\n")
    method, target, version = first.split(" ", 2)
    headers = []
    for line in lines:
        name, _, value = line.partition(":")
        headers.append((name, value.strip()))
    return method, target, version, tuple(headers)
