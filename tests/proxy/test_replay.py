"""Replaying a cassette: chunks on the wire, pacing, matching and the mismatch error."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import h11
import httpx
import openai
import pytest

from toolwire.testing import VOLATILE_FIELDS, Cassette, CassetteServer, RecordingProxy, Scenario
from toolwire.testing.replay import ReplayApp

from ._clients import KEY, openai_chat
from ._support import Upstream, weather

CHAT = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "杭州天气怎么样?"}]}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-turn chat conversation (streamed), recorded through the proxy."""
    directory = tmp_path_factory.mktemp("cassette")
    with Upstream(weather()) as upstream:
        with RecordingProxy(upstream.url_for("openai-chat"), record=directory) as proxy:
            openai_chat(proxy.base_url, True)
    return directory


def _h11_chunks(base_url: str, path: str, body: dict[str, Any]) -> list[bytes]:
    """The response body's HTTP/1.1 chunks, as they are framed on the wire."""
    host, port = base_url.removeprefix("http://").split(":")
    data = json.dumps(body).encode()
    conn = h11.Connection(h11.CLIENT)
    chunks: list[bytes] = []
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        headers = [("host", host), ("content-type", "application/json")]
        headers.append(("content-length", str(len(data))))
        sock.sendall(conn.send(h11.Request(method="POST", target=path, headers=headers)))
        sock.sendall(conn.send(h11.Data(data=data)))
        sock.sendall(conn.send(h11.EndOfMessage()))
        current = b""
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(sock.recv(65536))
            elif isinstance(event, h11.Data):
                current += event.data
                if event.chunk_end:
                    chunks.append(current)
                    current = b""
            elif isinstance(event, h11.EndOfMessage):
                return chunks


def test_a_client_receives_the_recorded_chunks_on_the_wire(recorded: Path) -> None:
    exchange = Cassette.load(recorded).exchanges[0]
    body = exchange.request.json()
    with CassetteServer(recorded) as replay:
        chunks = _h11_chunks(replay.base_url, exchange.request.path, body)
    assert chunks == [chunk for chunk, _ in exchange.response.iter_chunks()]
    assert len(chunks) > 5


@pytest.mark.anyio
async def test_realtime_waits_for_each_recorded_arrival_time(recorded: Path) -> None:
    exchange = Cassette.load(recorded).exchanges[0]
    now = 0.0
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        nonlocal now
        waits.append(seconds)
        now += seconds

    app = ReplayApp(Cassette.load(recorded), realtime=True, sleep=sleep, clock=lambda: now)
    sent: list[Any] = []

    messages = [{"type": "http.request", "body": json.dumps(exchange.request.json()).encode()}]

    async def receive() -> Any:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append((now, message))

    scope = {
        "type": "http",
        "method": "POST",
        "path": exchange.request.path,
        "raw_path": exchange.request.path.encode(),
        "query_string": b"",
        "headers": [],
    }
    await app(scope, receive, send)
    times = [exchange.response.headers_ms] + [at for _, at in exchange.response.chunks]
    bodies = [(at, m) for at, m in sent if m["type"] == "http.response.body" and m["body"]]
    # Each chunk leaves at its recorded time (milliseconds after the request).
    assert [round(at * 1000, 6) for at, _ in bodies] == [round(t, 6) for t in times[1:]]
    assert round(sent[0][0] * 1000, 6) == round(times[0], 6)
    assert sum(waits) == pytest.approx(times[-1] / 1000)


def test_a_request_the_cassette_lacks_gets_the_nearest_and_its_differences(
    recorded: Path,
) -> None:
    second = Cassette.load(recorded).exchanges[1].request.json()
    second["messages"][-1]["content"] = "不同的结果"
    with CassetteServer(recorded) as replay:
        with openai.OpenAI(base_url=replay.base_url, api_key=KEY, max_retries=0) as client:
            with pytest.raises(openai.BadRequestError) as caught:
                client.chat.completions.create(**second)
        mismatches = list(replay.mismatches)
    message = caught.value.message
    assert caught.value.status_code == 400
    assert "no recorded exchange in the cassette" in message
    assert "The nearest is #2 (0002.json) POST /chat/completions, which differs at:" in message
    assert 'body.messages[3].content: recorded "{\\"timezone\\"' in message
    assert 'received "不同的结果"' in message
    assert mismatches == [json.loads(caught.value.response.content)["error"]["message"]]


def test_volatile_and_ignored_fields_do_not_matter(tmp_path: Path) -> None:
    with Upstream(weather()) as upstream:
        with RecordingProxy(upstream.url_for("openai-chat"), record=tmp_path) as proxy:
            recorded = httpx.post(proxy.base_url + "/chat/completions", json=CHAT).content
    changed = {
        **CHAT,
        "user": "someone-else",
        "stream_options": {"include_usage": True},
        "metadata": {"run": "42"},
        "temperature": 0.5,
    }
    assert set(VOLATILE_FIELDS) >= {"user", "stream_options", "metadata"}
    with CassetteServer(tmp_path, ignore=["temperature"]) as replay:
        response = httpx.post(replay.base_url + "/chat/completions", json=changed)
    assert response.status_code == 200 and response.content == recorded
    with CassetteServer(tmp_path) as strict:
        refused = httpx.post(strict.base_url + "/chat/completions", json=changed)
    assert refused.status_code == 400
    assert "body.temperature: recorded absent, received 0.5" in refused.json()["error"]["message"]


def test_numbers_booleans_and_key_order_are_told_apart_as_json_does(tmp_path: Path) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "n": 1}
    with Upstream(Scenario.from_dict({"turns": [{"text": "ok"}]})) as upstream:
        with RecordingProxy(upstream.url_for("openai-chat"), record=tmp_path) as proxy:
            httpx.post(proxy.base_url + "/chat/completions", json=body)
    reordered = json.dumps(dict(reversed(list(body.items())))).encode()
    with CassetteServer(tmp_path) as replay:
        url = replay.base_url + "/chat/completions"
        assert httpx.post(url, content=reordered).status_code == 200
        assert httpx.post(url, json={**body, "n": True}).status_code == 400
        assert httpx.post(url, json={**body, "n": 1.0}).status_code == 400
        assert httpx.post(url.replace("/chat", "/v2/chat"), json=body).status_code == 400


@pytest.fixture(scope="module")
def recorded_under_v1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One chat request recorded at ``/v1/chat/completions``."""
    directory = tmp_path_factory.mktemp("cassette-v1")
    with Upstream(weather()) as upstream:
        with RecordingProxy(upstream.base_url, record=directory) as proxy:
            assert httpx.post(proxy.base_url + "/v1/chat/completions", json=CHAT).is_success
    return directory


def test_a_missing_base_url_prefix_is_named_with_its_fix_not_a_new_recording(
    recorded_under_v1: Path,
) -> None:
    with CassetteServer(recorded_under_v1) as replay:
        refused = httpx.post(replay.base_url + "/chat/completions", json=CHAT)
        base_urls = replay.base_urls()
        root = replay.base_url
    message = refused.json()["error"]["message"]
    assert refused.status_code == 400
    assert 'path: recorded "/v1/chat/completions", received "/chat/completions"' in message
    assert "differ only by a '/v1' prefix: the client's base URL lacks it" in message
    assert f"End the base URL with '/v1' ({root}/v1) instead of recording again." in message
    assert "TOOLWIRE_RECORD" not in message and "also differs" not in message
    assert base_urls == {"openai-chat": root + "/v1"}


def test_an_extra_base_url_prefix_is_named_with_the_other_differences(recorded: Path) -> None:
    changed = {**Cassette.load(recorded).exchanges[0].request.json(), "model": "other"}
    with CassetteServer(recorded) as replay:
        refused = httpx.post(replay.base_url + "/v1/chat/completions", json=changed)
        assert replay.base_urls() == {"openai-chat": replay.base_url}
    message = refused.json()["error"]["message"]
    assert "the client's base URL has it and the recording's had not. Drop '/v1'" in message
    assert "The request also differs at body.model." in message
    assert "TOOLWIRE_RECORD" not in message


def test_a_changed_request_is_advised_a_new_recording(recorded: Path) -> None:
    changed = {**Cassette.load(recorded).exchanges[0].request.json(), "model": "other"}
    with CassetteServer(recorded) as replay:
        refused = httpx.post(replay.base_url + "/chat/completions", json=changed)
    message = refused.json()["error"]["message"]
    assert "record the cassette again (TOOLWIRE_RECORD=1)" in message
    assert "prefix" not in message


def test_only_a_whole_path_prefix_is_called_a_prefix() -> None:
    from toolwire.testing._match import _prefix_fix

    fix = _prefix_fix("/v1/chat/completions", "/chat/completions", "http://h:1")
    assert fix is not None and "End the base URL with '/v1' (http://h:1/v1)" in fix
    assert _prefix_fix("/v1/chat/completions", "", "http://h:1") is None  # the root
    assert _prefix_fix("/chat/completions", "/chat/completions", "http://h:1") is None
    assert _prefix_fix("/v1/responses", "/v1/chat/completions", "http://h:1") is None
