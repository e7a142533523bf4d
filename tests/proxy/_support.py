"""What the proxy tests share: an upstream that tells what it sent, and
conversations run by real clients."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tests.testing.conftest import quoting_weather
from toolwire.testing import EmulationServer, Scenario
from toolwire.testing.cassette import Cassette

QUESTION = "杭州天气怎么样?现在几点?"
WEATHER = {"city": "杭州", "temperature_c": 22, "condition": "多云"}
TIME = {"timezone": "Asia/Shanghai", "time": "2025-05-01 10:30"}
RESULTS = {"get_weather": WEATHER, "get_current_time": TIME}


@dataclass
class Sent:
    """One response as an ASGI app handed it to the server: each body message."""

    path: str
    query: str
    status: int = 0
    headers: list[tuple[str, str]] = field(default_factory=list)
    chunks: list[bytes] = field(default_factory=list)
    complete: bool = False

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)


class SentRecorder:
    """ASGI middleware keeping what the wrapped app sends, chunk by chunk.

    Each message is kept before it is passed on, so a client that has read a
    response whole finds it here whole.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.sent: list[Sent] = []
        self._lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        record = Sent(scope["path"], scope["query_string"].decode())
        with self._lock:
            self.sent.append(record)

        async def keep(message: Message) -> None:
            if message["type"] == "http.response.start":
                record.status = message["status"]
                record.headers = [(k.decode(), v.decode()) for k, v in message["headers"]]
            elif message["type"] == "http.response.body":
                if message.get("body"):
                    record.chunks.append(message["body"])
                if not message.get("more_body", False):
                    record.complete = True
            await send(message)

        await self.app(scope, receive, keep)


class Upstream(EmulationServer):
    """The emulation server, keeping every response it sends (``.sent``)."""

    def __init__(self, scenario: Scenario | str | Path | dict[str, Any], **options: Any) -> None:
        super().__init__(scenario, **options)
        self.recorder = SentRecorder(self.app)
        self.app = self.recorder

    @property
    def sent(self) -> list[Sent]:
        return self.recorder.sent


def weather() -> Scenario:
    """Two parallel calls, then an answer quoting their results, no delays."""
    return quoting_weather()


def assert_recorded_as_sent(cassette_dir: Path, sent: list[Sent]) -> Cassette:
    """Each recorded body is byte for byte what the upstream sent, in order."""
    cassette = Cassette.load(cassette_dir)
    assert len(cassette) == len(sent)
    for exchange, original in zip(cassette, sent, strict=True):
        assert exchange.response.body() == original.body
        assert exchange.response.status == original.status
        assert exchange.response.complete == original.complete
        assert sum(size for size, _ in exchange.response.chunks) == len(original.body)
    return cassette


def assert_replayed_in_recorded_chunks(cassette: Cassette, sent: list[Sent]) -> None:
    """The replay sent each recorded body in its recorded chunks."""
    assert len(sent) == len(cassette)
    for exchange, replayed in zip(cassette, sent, strict=True):
        recorded = [chunk for chunk, _ in exchange.response.iter_chunks()]
        assert replayed.chunks == recorded
        assert replayed.status == exchange.response.status


def without_timestamps(value: Any) -> Any:
    """``value`` without the fields that hold the time of answering."""
    if isinstance(value, dict):
        return {
            k: without_timestamps(v)
            for k, v in value.items()
            if k not in ("created", "created_at", "completed_at")
        }
    if isinstance(value, list):
        return [without_timestamps(v) for v in value]
    return value
