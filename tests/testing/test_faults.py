"""Fault injection, seen through the official SDKs and plain httpx."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai
import pytest

from toolwire.testing import FAULT_HEADER, EmulationServer, Scenario
from toolwire.testing.pytest_plugin import ServerFactory

from ._wire import sse_events, sse_json

CALL = {"name": "get_weather", "arguments": {"city": "杭州", "days": 3}}
MESSAGES: list[Any] = [{"role": "user", "content": "weather?"}]


def _scenario(*faults: dict[str, Any], chunk_size: int = 4) -> Scenario:
    return Scenario.from_dict(
        {"turns": [{"tool_calls": [CALL], "chunk_size": chunk_size, "faults": list(faults)}]}
    )


def _chat(server: EmulationServer, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url_for("openai-chat"), api_key="test", **options)


def _stream_chat(client: openai.OpenAI, **extra: Any) -> list[Any]:
    with client.chat.completions.stream(model="m", messages=MESSAGES, **extra) as stream:
        for _ in stream:
            pass
        return stream.get_final_completion().choices[0].message.tool_calls or []


def test_429_then_success_with_sdk_retry(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(_scenario({"status": 429, "retry_after": 0.05}))
    calls = _stream_chat(_chat(server, max_retries=1))
    assert [json.loads(c.function.arguments) for c in calls] == [{"city": "杭州", "days": 3}]
    assert len(server.requests) == 2 and server.requests[0] == server.requests[1]


def test_429_headers_and_body(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(_scenario({"status": 429, "retry_after": 0.05}))
    body = {"model": "m", "messages": MESSAGES, "stream": True}
    first = httpx.post(server.url_for("openai-chat") + "/chat/completions", json=body)
    assert first.status_code == 429
    assert first.headers["retry-after"] == "0.05"
    assert first.headers["retry-after-ms"] == "50"
    error = first.json()["error"]
    assert list(error) == ["message", "type", "param", "code"]
    assert error["code"] == "rate_limit_exceeded"
    # The same body again is the next attempt, which has no fault left.
    second = httpx.post(server.url_for("openai-chat") + "/chat/completions", json=body)
    assert second.status_code == 200 and sse_events(second.content)[-1] == (None, "[DONE]")
    # A different body is a different request: its own first attempt.
    other = dict(body, model="other")
    assert httpx.post(server.base_url + "/v1/chat/completions", json=other).status_code == 429


def test_500_without_retries(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(_scenario({"status": 500, "message": "kaputt"}))
    with pytest.raises(openai.InternalServerError, match="kaputt"):
        _stream_chat(_chat(server, max_retries=0))
    client = anthropic.Anthropic(base_url=server.base_url, api_key="t", max_retries=0)
    with pytest.raises(anthropic.InternalServerError) as caught:
        client.messages.create(model="c", max_tokens=5, messages=MESSAGES)
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "api_error", "message": "kaputt"},
    }


def test_cut_stream_is_an_error_for_the_client(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(_scenario({"cut_after_bytes": 900}))
    # Whether the SDK wraps the transport error depends on whether it had
    # already handed the response over; either way the cause is the cut.
    with pytest.raises((openai.APIConnectionError, httpx.RemoteProtocolError)) as caught:
        _stream_chat(_chat(server, max_retries=0))
    cause = caught.value.__cause__ or caught.value
    assert "incomplete chunked read" in str(cause)

    body = {"model": "m", "messages": MESSAGES, "stream": True}
    received = b""
    with pytest.raises(httpx.RemoteProtocolError, match="incomplete chunked read"):
        with httpx.stream("POST", server.base_url + "/v1/chat/completions", json=body) as r:
            for piece in r.iter_raw():
                received += piece
    assert len(received) == 900  # exactly the bytes before the cut
    assert b"[DONE]" not in received


def test_anthropic_cut_stream(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(_scenario({"cut_after_bytes": 700}))
    client = anthropic.Anthropic(base_url=server.base_url, api_key="t", max_retries=0)
    # The SDK lets its HTTP library's RemoteProtocolError through.
    with pytest.raises(Exception, match="incomplete chunked read") as caught:
        with client.messages.stream(model="c", max_tokens=5, messages=MESSAGES) as stream:
            stream.get_final_message()
    assert type(caught.value).__name__ == "RemoteProtocolError"


def test_openai_error_event(toolwire_server: ServerFactory) -> None:
    fault = {"error_event": {"message": "tool call validation failed", "code": "tool_use_failed"}}
    server = toolwire_server(_scenario(fault))
    with pytest.raises(openai.APIError, match="tool call validation failed") as caught:
        _stream_chat(_chat(server, max_retries=0))
    assert caught.value.body == {
        "message": "tool call validation failed",
        "type": "server_error",
        "param": None,
        "code": "tool_use_failed",
    }


def test_anthropic_error_event(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(_scenario({"error_event": {"type": "overloaded_error"}}))
    client = anthropic.Anthropic(base_url=server.base_url, api_key="t", max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as caught:
        with client.messages.stream(model="c", max_tokens=5, messages=MESSAGES) as stream:
            stream.get_final_message()
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }


def test_error_event_placement_in_each_dialect(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(_scenario({"error_event": {"message": "boom"}, "at_chunk": 3}))
    headers = {FAULT_HEADER: json.dumps({"error_event": {"message": "boom"}, "at_chunk": 3})}
    responses = httpx.post(
        server.base_url + "/v1/responses",
        json={"model": "m", "input": "x", "stream": True},
        headers=headers,
    )
    events = sse_json(responses.content)
    assert len(events) == 4
    assert events[3] == (
        "error",
        {
            "type": "error",
            "code": "server_error",
            "message": "boom",
            "param": None,
            "sequence_number": 3,
        },
    )
    gemini = httpx.post(
        server.base_url + "/v1beta/models/g:streamGenerateContent?alt=sse",
        json={"contents": [{"role": "user", "parts": [{"text": "x"}]}]},
        headers={FAULT_HEADER: json.dumps({"error_event": {"message": "boom"}, "at_chunk": 0})},
    )
    assert sse_json(gemini.content) == [
        (None, {"error": {"code": 500, "message": "boom", "status": "INTERNAL"}})
    ]


def test_malformed_json_chunk(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(_scenario({"malformed_json": True}))
    with pytest.raises(json.JSONDecodeError):
        _stream_chat(_chat(server, max_retries=0))
    # Exactly one chunk is broken; the stream otherwise ends normally.
    body = {"model": "m", "messages": MESSAGES, "stream": True}
    response = httpx.post(
        server.base_url + "/v1/chat/completions",
        json=body,
        headers={FAULT_HEADER: json.dumps({"malformed_json": True})},
    )
    broken = 0
    for _, data in sse_events(response.content)[:-1]:  # all but [DONE]
        try:
            json.loads(data)
        except json.JSONDecodeError:
            broken += 1
    assert broken == 1
    assert sse_events(response.content)[-1] == (None, "[DONE]")


def test_slow_chunks(toolwire_server: ServerFactory, anyio_sleeps: list[float]) -> None:
    # The server (in its own thread of this process) waits with anyio.sleep.
    server = toolwire_server(_scenario(chunk_size=100))
    body = {"model": "m", "messages": MESSAGES, "stream": True}
    fault = {FAULT_HEADER: json.dumps({"slow_chunk_delay": 0.05})}
    response = httpx.post(server.base_url + "/v1/chat/completions", json=body, headers=fault)
    chunks = len(sse_events(response.content))
    assert chunks == 5  # role, opener, arguments, finish, [DONE]
    assert anyio_sleeps == [0.05] * (chunks - 1), "a wait before every chunk but the first"


def test_bad_fault_header_is_rejected(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(_scenario())
    response = httpx.post(
        server.base_url + "/v1/messages",
        json={"model": "c", "max_tokens": 5, "messages": MESSAGES},
        headers={FAULT_HEADER: '{"status": 200}'},
    )
    assert response.status_code == 400
    body = response.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert FAULT_HEADER in body["error"]["message"]


def test_non_streaming_faults(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(_scenario())
    url = server.base_url + "/v1/chat/completions"
    body = {"model": "m", "messages": MESSAGES}
    event = httpx.post(url, json=body, headers={FAULT_HEADER: '{"error_event": {"status": 503}}'})
    assert event.status_code == 503 and event.json()["error"]["type"] == "server_error"
    broken = httpx.post(url, json=body, headers={FAULT_HEADER: '{"malformed_json": true}'})
    assert broken.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(broken.content)
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(url, json=body, headers={FAULT_HEADER: '{"cut_after_bytes": 10}'})
