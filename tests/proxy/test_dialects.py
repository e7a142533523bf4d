"""Every dialect toolwire decodes, through the proxy and back from the replay:
what a client reads is what the upstream sent, and the summary line reads it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import httpx
import pytest

from toolwire.stream.decoder import StreamDecoder
from toolwire.testing import CassetteServer, RecordingProxy, Scenario

from ..conftest import CORPUS
from ._support import Upstream, assert_recorded_as_sent, weather

GEMINI_BODY = {"contents": [{"role": "user", "parts": [{"text": "杭州天气怎么样?现在几点?"}]}]}


def _decoded(body: bytes, dialect: str) -> dict[str, object]:
    numbers = itertools.count()
    decoder = StreamDecoder(dialect, id_factory=lambda: f"call_{next(numbers)}")
    decoder.feed(body)
    decoder.close()
    return decoder.result().to_dict()


@pytest.mark.parametrize(
    ("recording", "path", "dialect", "media"),
    [
        ("ollama/ndjson_single_call_docs.sse", "/api/chat", "ollama-ndjson", "ndjson"),
        ("cohere/v2_tool_plan_then_two_calls.sse", "/v2/chat", "cohere-v2", "sse"),
        (
            "bedrock/rubyllm_nova2lite_weather_i0.sse",
            "/model/us.amazon.nova-2-lite-v1:0/converse-stream",
            "bedrock-converse",
            "bin",
        ),
        (
            "bedrock/chatlas_claude45_invoke_stream_i0.sse",
            "/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream",
            "bedrock-invoke",
            "bin",
        ),
    ],
)
def test_recorded_dialects_relay_record_and_replay(
    recording: str, path: str, dialect: str, media: str, tmp_path: Path
) -> None:
    original = (CORPUS / recording).read_bytes()
    lines: list[str] = []
    with Upstream(Scenario.replay_file(CORPUS / recording)) as upstream:
        with RecordingProxy(upstream.base_url, record=tmp_path / "c", log=lines.append) as proxy:
            relayed = httpx.post(proxy.base_url + path, json={"model": "m", "messages": []})
        sent = upstream.sent
    assert relayed.content == original
    cassette = assert_recorded_as_sent(tmp_path / "c", sent)
    assert cassette.exchanges[0].dialect == dialect
    assert cassette.exchanges[0].response.body_file.name == f"0001.response.{media}"
    expected = _decoded(original, dialect)
    calls = [c["name"] for choice in expected["choices"] for c in choice["tool_calls"]]  # type: ignore[attr-defined]
    assert calls and all(f"{name}(" in lines[0] for name in calls)
    assert f" {dialect} " in lines[0] and " stream " in lines[0]

    with CassetteServer(tmp_path / "c") as replay:
        replayed = httpx.post(replay.base_url + path, json={"model": "m", "messages": []})
    assert replayed.content == original
    assert replayed.headers["content-type"] == relayed.headers["content-type"]
    assert _decoded(replayed.content, dialect) == expected


def test_gemini_json_array_and_sse(tmp_path: Path) -> None:
    lines: list[str] = []
    target = "/models/gemini-2.5-flash:streamGenerateContent"
    with Upstream(weather()) as upstream:
        with RecordingProxy(upstream.url_for("gemini"), record=tmp_path, log=lines.append) as px:
            array = httpx.post(px.base_url + target, json=GEMINI_BODY)
            sse = httpx.post(px.base_url + target + "?alt=sse", json=GEMINI_BODY)
        sent = upstream.sent
    assert array.content.lstrip().startswith(b"[") and sse.content.startswith(b"data: ")
    cassette = assert_recorded_as_sent(tmp_path, sent)
    assert [e.request.query for e in cassette] == ["", "alt=sse"]
    assert [e.response.body_file.suffix for e in cassette] == [".json", ".sse"]
    for line in lines:
        assert "gemini" in line and "get_weather(" in line and " stream " in line

    with CassetteServer(tmp_path) as replay:
        # The query tells the two apart: each gets its own framing back.
        again_sse = httpx.post(replay.base_url + target + "?alt=sse", json=GEMINI_BODY)
        again_array = httpx.post(replay.base_url + target, json=GEMINI_BODY)
    assert (again_array.content, again_sse.content) == (array.content, sse.content)


def test_a_cut_stream_is_recorded_and_replayed_cut_at_the_same_byte(tmp_path: Path) -> None:
    scenario = Scenario.from_dict(
        {"turns": [{"text": "a long answer " * 20, "faults": [{"cut_after_bytes": 700}]}]}
    )
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "?"}]}
    lines: list[str] = []
    with Upstream(scenario) as upstream:
        with RecordingProxy(
            upstream.url_for("openai-chat"), record=tmp_path, log=lines.append
        ) as px:
            with pytest.raises(httpx.RemoteProtocolError):
                httpx.post(px.base_url + "/chat/completions", json=body)
        sent = upstream.sent
    cassette = assert_recorded_as_sent(tmp_path, sent)
    (exchange,) = cassette
    assert not exchange.response.complete and "broke off" in (exchange.response.error or "")
    assert len(exchange.response.body()) == 700
    assert "stream_truncated" in lines[0]

    received = bytearray()
    with CassetteServer(tmp_path) as replay:
        with httpx.stream("POST", replay.base_url + "/chat/completions", json=body) as response:
            with pytest.raises(httpx.RemoteProtocolError):
                for chunk in response.iter_raw():
                    received += chunk
    assert bytes(received) == exchange.response.body()


def test_repeated_requests_replay_in_recorded_order(tmp_path: Path) -> None:
    """A 429 and then the retry's 200, for the same request: replayed in that order."""
    scenario = Scenario.from_dict(
        {"turns": [{"text": "hello", "faults": [{"status": 429, "retry_after": 0}]}]}
    )
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with Upstream(scenario) as upstream:
        with RecordingProxy(upstream.url_for("openai-chat"), record=tmp_path) as proxy:
            first = httpx.post(proxy.base_url + "/chat/completions", json=body)
            second = httpx.post(proxy.base_url + "/chat/completions", json=body)
    assert (first.status_code, second.status_code) == (429, 200)
    with CassetteServer(tmp_path) as replay:
        statuses = [
            httpx.post(replay.base_url + "/chat/completions", json=body).status_code
            for _ in range(3)
        ]
    # Once every recording has answered, the last one answers again.
    assert statuses == [429, 200, 200]
    assert json.loads(first.content)["error"]["message"]
