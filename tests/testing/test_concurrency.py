"""Many conversations at once against one server."""

from __future__ import annotations

import json

import anyio
import httpx
import pytest

from toolwire.testing import EmulationServer, Scenario

from ._wire import sse_json

SCENARIO = Scenario.from_dict(
    {
        "turns": [
            {
                "text": "查询中",
                "tool_calls": [
                    {"name": "get_weather", "arguments": {"city": "杭州", "unit": "celsius"}},
                    {"name": "get_current_time", "arguments": {"timezone": "Asia/Shanghai"}},
                ],
                "chunk_size": 3,
                "delay": 0.002,
            }
        ]
    }
)


@pytest.mark.anyio
async def test_fifty_concurrent_streams_are_complete_and_correct() -> None:
    results: dict[int, tuple[str, dict[int, dict[str, str]]]] = {}

    async def one(client: httpx.AsyncClient, n: int) -> None:
        body = {
            "model": "m",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": f"conversation {n}"}],
        }
        response = await client.post("/chat/completions", json=body)
        assert response.status_code == 200
        text = ""
        calls: dict[int, dict[str, str]] = {}
        events = sse_json(response.content)
        assert events[-1] == (None, "[DONE]")
        for _, chunk in events[:-1]:
            for choice in chunk["choices"]:
                text += choice["delta"].get("content") or ""
                for call in choice["delta"].get("tool_calls", []):
                    slot = calls.setdefault(call["index"], {"id": "", "name": "", "args": ""})
                    slot["id"] += call.get("id", "")
                    slot["name"] += call.get("function", {}).get("name", "")
                    slot["args"] += call.get("function", {}).get("arguments", "")
        results[n] = (text, calls)

    async with EmulationServer(SCENARIO) as server:
        limits = httpx.Limits(max_connections=50)
        async with httpx.AsyncClient(base_url=server.url_for("openai"), limits=limits) as client:
            async with anyio.create_task_group() as group:
                for n in range(50):
                    group.start_soon(one, client, n)
        assert len(server.requests) == 50

    assert sorted(results) == list(range(50))
    ids: set[str] = set()
    for text, calls in results.values():
        assert text == "查询中"
        assert [(c["name"], json.loads(c["args"])) for c in calls.values()] == [
            ("get_weather", {"city": "杭州", "unit": "celsius"}),
            ("get_current_time", {"timezone": "Asia/Shanghai"}),
        ]
        ids.update(c["id"] for c in calls.values())
    # Ids derive from the conversation: 50 conversations, 100 distinct ids.
    assert len(ids) == 100
