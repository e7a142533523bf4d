"""A hostile provider on loopback for the resumed-stream tests: a real HTTP
server that answers a model turn with a stream it cuts, and its reopening
with whatever the test scripts (a replay, a duplicate, another response's
events); the streams come from ``tests._kept_streams``.

Both dialects whose provider keeps its streams are spoken: Responses
(``POST /v1/responses``, ``GET /v1/responses/{id}?stream=true&starting_after=N``)
and Gemini Interactions (``POST /v1beta/interactions``, ``GET
/v1beta/interactions/{id}?stream=true&last_event_id=...``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Script:
    """What the server answers, and what it was asked."""

    first: list[bytes]
    """The first answer to the turn that calls (cut after ``cut_after`` of
    its events and half the next one; not cut when ``cut_after`` is None)."""
    again: list[bytes]
    """The answer each time that turn is asked again."""
    final: list[bytes]
    """The answer to the turn after the call's result."""
    reopened: list[bytes] = field(default_factory=list)
    """The answer to a reopening of the cut stream."""
    cut_after: int | None = None
    posts: list[dict[str, Any]] = field(default_factory=list)
    gets: list[str] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    script: Script

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        script = self.script
        script.posts.append(body)
        if _answered(body):
            self._send(script.final)
        elif sum(1 for b in script.posts if not _answered(b)) == 1:
            self._send(script.first, cut_after=script.cut_after)
        else:
            self._send(script.again)

    def do_GET(self) -> None:
        self.script.gets.append(self.path)
        self._send(self.script.reopened)

    def _send(self, events: list[bytes], *, cut_after: int | None = None) -> None:
        whole = b"".join(events)
        sent = whole
        if cut_after is not None:
            head = b"".join(events[: cut_after + 1])
            sent = head + events[cut_after + 1][: len(events[cut_after + 1]) // 2]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(whole)))  # cut: more than is sent
        self.end_headers()
        self.wfile.write(sent)
        self.wfile.flush()
        if cut_after is not None:
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _answered(body: dict[str, Any]) -> bool:
    text = json.dumps(body)
    return "function_call_output" in text or "function_result" in text


@contextmanager
def serving(script: Script) -> Iterator[str]:
    """The server's root URL while it serves ``script``."""
    handler = type("Handler", (_Handler,), {"script": script})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
