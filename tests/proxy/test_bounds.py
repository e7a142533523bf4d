"""The proxy's bounds: request size, upstream deadlines, a client hanging up,
loopback only; each ends in a clear answer and a recorded reason."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from toolwire.errors import UsageError
from toolwire.http.transport import Timeouts
from toolwire.testing import Cassette, RecordingProxy, Scenario

from ._support import Upstream

CHAT = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


class Lines:
    """Summary lines, with a way to wait for the n-th one."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._changed = threading.Condition()

    def __call__(self, line: str) -> None:
        with self._changed:
            self.lines.append(line)
            self._changed.notify_all()

    def wait(self, count: int) -> list[str]:
        with self._changed:
            assert self._changed.wait_for(lambda: len(self.lines) >= count, timeout=30)
            return list(self.lines)


@pytest.fixture
def silent_upstream() -> Iterator[str]:
    """A listening socket that never answers (connections wait in its backlog)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_a_request_body_over_the_limit_is_refused_before_the_upstream(tmp_path: Path) -> None:
    lines = Lines()
    with Upstream(Scenario.from_dict({"turns": [{"text": "ok"}]})) as upstream:
        with RecordingProxy(
            upstream.url_for("openai-chat"), record=tmp_path, max_request_bytes=1000, log=lines
        ) as proxy:
            big = {**CHAT, "messages": [{"role": "user", "content": "x" * 2000}]}
            response = httpx.post(proxy.base_url + "/chat/completions", json=big)
            small = httpx.post(proxy.base_url + "/chat/completions", json=CHAT)
        assert len(upstream.sent) == 1
    assert response.status_code == 413
    assert "larger than 1000 bytes" in response.json()["error"]["message"]
    assert small.status_code == 200
    assert " 413 " in lines.wait(2)[0]
    assert [e.number for e in Cassette.load(tmp_path)] == [2]  # refusals are not recorded


def test_an_unreachable_upstream_is_a_502(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with RecordingProxy(f"http://127.0.0.1:{port}/v1", record=tmp_path) as proxy:
        response = httpx.post(proxy.base_url + "/chat/completions", json=CHAT)
    assert response.status_code == 502
    assert "cannot reach the upstream" in response.json()["error"]["message"]
    assert list(tmp_path.iterdir()) == []


def test_an_upstream_that_never_answers_is_a_504(silent_upstream: str) -> None:
    lines = Lines()
    with RecordingProxy(silent_upstream, timeouts=Timeouts(read=0.2), log=lines) as proxy:
        response = httpx.post(proxy.base_url + "/chat/completions", json=CHAT)
    assert response.status_code == 504
    assert "did not answer in time" in response.json()["error"]["message"]
    assert " 504 " in lines.wait(1)[0]


def test_an_upstream_stalling_mid_stream_is_cut_and_recorded_as_such(tmp_path: Path) -> None:
    scenario = Scenario.from_dict(
        {"turns": [{"text": "slow " * 10, "chunk_size": 5, "faults": [{"slow_chunk_delay": 30}]}]}
    )
    with Upstream(scenario) as upstream:
        with RecordingProxy(
            upstream.url_for("openai-chat"), record=tmp_path, timeouts=Timeouts(read=0.3)
        ) as proxy:
            with pytest.raises(httpx.RemoteProtocolError):
                httpx.post(proxy.base_url + "/chat/completions", json=CHAT)
            # The upstream still sends, slowly: the test ends without waiting.
    (exchange,) = Cassette.load(tmp_path)
    assert not exchange.response.complete
    assert "ReadTimeout" in (exchange.response.error or "")
    assert exchange.response.body() == upstream.sent[0].chunks[0]


def test_a_client_hanging_up_stops_the_upstream_request(tmp_path: Path) -> None:
    scenario = Scenario.from_dict(
        {
            "turns": [
                {"text": "tick " * 200, "chunk_size": 5, "faults": [{"slow_chunk_delay": 0.05}]}
            ]
        }
    )
    lines = Lines()
    with Upstream(scenario) as upstream:
        with RecordingProxy(upstream.url_for("openai-chat"), record=tmp_path, log=lines) as proxy:
            with httpx.stream("POST", proxy.base_url + "/chat/completions", json=CHAT) as response:
                first = next(response.iter_raw())
            line = lines.wait(1)[0]
    assert first.startswith(b"data: ")
    assert "the client hung up" in line
    (exchange,) = Cassette.load(tmp_path)
    assert exchange.response.error == "the client hung up"
    assert len(exchange.response.chunks) < 100  # the upstream's 200 chunks were not all read


def test_listening_beyond_loopback_needs_permission() -> None:
    with pytest.raises(UsageError, match="loopback"):
        RecordingProxy("http://127.0.0.1:9/v1", host="0.0.0.0")
    with pytest.raises(UsageError, match="http"):
        RecordingProxy("ftp://example.com/")
    proxy = RecordingProxy("http://127.0.0.1:9/v1", host="0.0.0.0", allow_remote=True)
    assert "stopped" in repr(proxy)


def test_error_bodies_are_json_every_sdk_reads() -> None:
    with RecordingProxy("http://127.0.0.1:9/v1", max_request_bytes=1) as proxy:
        response = httpx.post(proxy.base_url + "/x", content=b"too big")
    assert response.status_code == 413
    assert json.loads(response.content)["error"]["type"] == "proxy_error"
