"""EmulationServer lifecycle, routing, replay, errors and the pytest fixture."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from toolwire.errors import UsageError
from toolwire.testing import EmulationServer, Scenario, ScenarioError
from toolwire.testing.pytest_plugin import ServerFactory

from ._wire import CONFORMANCE

SCENARIO = Scenario.from_dict({"turns": [{"text": "hello"}]})
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_sync_context_manager_lifecycle() -> None:
    server = EmulationServer(SCENARIO, port=0)
    assert "stopped" in repr(server)
    with pytest.raises(UsageError, match="not started"):
        _ = server.base_url
    with server:
        assert server.base_url.startswith("http://127.0.0.1:") and server.port > 0
        assert server.url_for("openai-chat") == server.base_url + "/v1"
        assert server.url_for("openai-responses") == server.base_url + "/v1"
        assert server.url_for("anthropic-messages") == server.base_url
        assert server.url_for("gemini") == server.base_url + "/v1beta"
        with pytest.raises(UsageError, match="unknown dialect"):
            server.url_for("cohere")
        with pytest.raises(UsageError, match="already started"):
            server.start()
        response = httpx.post(server.url_for("openai") + "/chat/completions", json=CHAT)
        assert response.json()["choices"][0]["message"]["content"] == "hello"
        assert server.requests == [CHAT]
        port = server.port
    # Stopped: nothing listens any more.
    with pytest.raises(httpx.ConnectError):
        httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json=CHAT)
    server.stop()  # idempotent


@pytest.mark.anyio
async def test_async_context_manager() -> None:
    async with EmulationServer(SCENARIO) as server:
        async with httpx.AsyncClient() as client:
            response = await client.post(server.base_url + "/v1/messages", json=CHAT)
            body = response.json()
    assert body["content"] == [{"type": "text", "text": "hello"}]
    assert body["stop_reason"] == "end_turn"


def test_refuses_non_loopback_hosts() -> None:
    with pytest.raises(UsageError, match="loopback"):
        EmulationServer(SCENARIO, host="0.0.0.0")
    with pytest.raises(UsageError, match="loopback"):
        EmulationServer(SCENARIO, host="example.com")


def test_scenario_sources(tmp_path: Path) -> None:
    assert EmulationServer("weather").scenario.name == "weather"
    path = tmp_path / "mine.json"
    path.write_text('{"turns": [{"text": "x"}]}')
    assert EmulationServer(path).scenario.turns[0].text == "x"
    assert EmulationServer({"turns": [{"text": "y"}]}).scenario.turns[0].text == "y"
    with pytest.raises(ScenarioError):
        EmulationServer(tmp_path / "missing.json")


def test_replay_sends_the_recorded_bytes(toolwire_server: ServerFactory) -> None:
    trace = CONFORMANCE / "gemini" / "json_array_thought_then_call.sse"
    server = toolwire_server(Scenario.replay_file(trace))
    for path in ("/v1/chat/completions", "/v1beta/models/x:streamGenerateContent"):
        response = httpx.post(server.base_url + path, json=CHAT)
        assert response.content == trace.read_bytes()
    assert response.headers["content-type"].startswith("application/json")
    sse = toolwire_server(
        Scenario.replay_file(CONFORMANCE / "anthropic" / "text_then_tool_use.sse")
    )
    response = httpx.post(sse.base_url + "/v1/messages", json=CHAT)
    assert response.headers["content-type"].startswith("text/event-stream")
    assert len(sse.requests) == 1


@pytest.mark.parametrize(
    ("path", "check"),
    [
        ("/v1/chat/completions", lambda b: b["error"]["type"] == "invalid_request_error"),
        ("/v1/responses", lambda b: b["error"]["type"] == "invalid_request_error"),
        ("/v1/messages", lambda b: b["type"] == "error" and "message" in b["error"]),
        ("/v1beta/models/g:generateContent", lambda b: b["error"]["code"] == 400),
    ],
)
def test_bad_bodies_get_the_dialects_error_shape(
    toolwire_server: ServerFactory, path: str, check: Any
) -> None:
    server = toolwire_server(SCENARIO)
    response = httpx.post(server.base_url + path, content=b"not json")
    assert response.status_code == 400
    body = response.json()
    assert check(body)
    assert "not valid JSON" in str(body)
    assert server.requests == ["not json"]


def test_unknown_result_reference_is_reported(toolwire_server: ServerFactory) -> None:
    server = toolwire_server({"turns": [{"text": "{result:get_weather}"}]})
    response = httpx.post(server.base_url + "/v1/chat/completions", json=CHAT)
    assert response.status_code == 400
    assert "no result of tool 'get_weather'" in response.json()["error"]["message"]


def test_fixture_stops_servers_at_teardown(toolwire_server: ServerFactory) -> None:
    first = toolwire_server(SCENARIO)
    second = toolwire_server("weather")
    assert first.port != second.port
    assert httpx.post(first.base_url + "/v1/messages", json=CHAT).status_code == 200


def test_unknown_endpoint_names_the_real_ones(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(SCENARIO)
    response = httpx.post(server.base_url + "/v1/v1/chat/completions", json=CHAT)
    assert response.status_code == 404
    error = response.json()["error"]
    assert "no endpoint POST /v1/v1/chat/completions" in error["message"]
    assert "/v1/chat/completions" in error["message"]
    anthropic_style = httpx.post(server.base_url + "/messages", json=CHAT).json()
    assert anthropic_style["type"] == "error"
    assert anthropic_style["error"]["type"] == "not_found_error"
