"""Gemini over plain httpx: SSE with CRLF, the streamed JSON array, generateContent."""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.testing.conftest import quoting_weather
from toolwire.testing import Scenario
from toolwire.testing.pytest_plugin import ServerFactory

from ._wire import sse_events

QUESTION = {"role": "user", "parts": [{"text": "杭州天气怎么样?现在几点?"}]}


def _calls(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        part["functionCall"]
        for chunk in chunks
        for part in chunk["candidates"][0].get("content", {}).get("parts", [])
        if "functionCall" in part
    ]


def test_sse_stream_uses_crlf_and_whole_function_calls(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(quoting_weather())
    url = f"{server.url_for('gemini')}/models/gemini-2.5-flash:streamGenerateContent"
    response = httpx.post(url, params={"alt": "sse", "key": "k"}, json={"contents": [QUESTION]})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    body = response.content
    assert body.startswith(b"data: {") and body.endswith(b"}\r\n\r\n")
    assert b"\n\n" not in body.replace(b"\r\n", b"")  # no bare LF separators
    assert "杭州".encode() in body  # raw UTF-8, not \\u escapes
    chunks = [json.loads(data) for _, data in sse_events(body)]
    calls = _calls(chunks)
    assert [(c["name"], c["args"]) for c in calls] == [
        ("get_weather", {"city": "杭州"}),
        ("get_current_time", {"timezone": "Asia/Shanghai"}),
    ]
    assert all(len(c["id"]) == 8 for c in calls) and calls[0]["id"] != calls[1]["id"]
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert chunks[-1]["modelVersion"] == "gemini-2.5-flash"


def test_json_array_stream_and_function_responses(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(quoting_weather())
    url = f"{server.base_url}/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    first = httpx.post(url, json={"contents": [QUESTION]})
    assert first.headers["content-type"].startswith("application/json")
    assert first.content.startswith(b"[{\n") and first.content.endswith(b"\n]")
    assert b"\n,\r\n" in first.content
    calls = _calls(json.loads(first.content))
    assert len(calls) == 2

    contents: list[Any] = [
        QUESTION,
        {"role": "model", "parts": [{"functionCall": c} for c in calls]},
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get_weather", "response": {"result": "晴"}}},
                {
                    "functionResponse": {
                        "name": "get_current_time",
                        "id": calls[1]["id"],
                        "response": {"time": "10:00"},
                    }
                },
            ],
        },
    ]
    second = httpx.post(url, json={"contents": contents})
    text = "".join(
        part.get("text", "")
        for chunk in json.loads(second.content)
        for part in chunk["candidates"][0]["content"]["parts"]
    )
    assert "天气:晴" in text and '{"time":"10:00"}' in text


def test_generate_content_and_malformed_call(toolwire_server: ServerFactory) -> None:
    scenario = Scenario.from_dict(
        {
            "turns": [
                {"reasoning": "hmm", "text": "ok", "tool_calls": [{"name": "f", "arguments": {}}]},
                {"tool_calls": [{"name": "f", "arguments": "{broken"}]},
            ]
        }
    )
    server = toolwire_server(scenario)
    url = f"{server.base_url}/v1beta/models/gemini-2.0-flash:generateContent"
    body = httpx.post(url, json={"contents": [QUESTION]}).json()
    parts = body["candidates"][0]["content"]["parts"]
    assert parts[0] == {"text": "hmm", "thought": True}
    assert parts[1] == {"text": "ok"}
    assert parts[2]["functionCall"]["name"] == "f" and parts[2]["functionCall"]["args"] == {}
    assert body["usageMetadata"]["thoughtsTokenCount"] == 0  # 3 characters: under a token

    # Gemini cannot send arguments it cannot parse: it ends the candidate instead.
    history = {"contents": [QUESTION, {"role": "model", "parts": [{"text": "ok"}]}]}
    bad = httpx.post(url, json=history).json()["candidates"][0]
    assert bad["finishReason"] == "MALFORMED_FUNCTION_CALL" and "content" not in bad
    assert bad["finishMessage"] == "Malformed function call: {broken"


def test_gemini_errors_have_googles_shape(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(Scenario.from_dict({"turns": [{"text": "x"}]}))
    unknown = httpx.post(f"{server.base_url}/v1beta/models/g:countTokens", json={})
    assert unknown.status_code == 404
    assert unknown.json()["error"]["status"] == "NOT_FOUND"
    bad = httpx.post(f"{server.base_url}/v1beta/models/g:generateContent", content=b"{")
    assert bad.status_code == 400
    error = bad.json()["error"]
    assert error["code"] == 400 and error["status"] == "INVALID_ARGUMENT"
    assert "not valid JSON" in error["message"]
