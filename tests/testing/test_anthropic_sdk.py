"""The official anthropic SDK against the emulation server."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx
import pytest

from tests.testing.conftest import quoting_weather
from toolwire.testing import EmulationServer, Scenario, Turn
from toolwire.testing.pytest_plugin import ServerFactory

from ._wire import sse_json

QUESTION = "杭州天气怎么样?现在几点?"


def _client(server: EmulationServer, **options: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=server.url_for("anthropic-messages"), api_key="test", **options
    )


def test_stream_final_message_has_the_tool_use_blocks(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(quoting_weather())
    client = _client(server)
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    with client.messages.stream(model="claude-sonnet-4", max_tokens=512, messages=messages) as s:
        events = [event.type for event in s]
        message = s.get_final_message()
    assert events.count("input_json") > 4  # arguments arrive in fragments
    assert message.stop_reason == "tool_use"
    uses = [b for b in message.content if b.type == "tool_use"]
    assert [(b.name, b.input) for b in uses] == [
        ("get_weather", {"city": "杭州"}),
        ("get_current_time", {"timezone": "Asia/Shanghai"}),
    ]
    assert all(b.id.startswith("toolu_01") and len(b.id) == 30 for b in uses)
    assert message.usage.output_tokens > 0

    # Non-streaming gives the same blocks, ids included.
    same = client.messages.create(model="claude-sonnet-4", max_tokens=512, messages=messages)
    assert [(b.id, b.name, b.input) for b in same.content if b.type == "tool_use"] == [
        (b.id, b.name, b.input) for b in uses
    ]

    # Second turn: tool_result blocks in a user message; the answer quotes them.
    messages.append({"role": "assistant", "content": [b.model_dump() for b in uses]})
    messages.append(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": uses[0].id, "content": "小雨 18°C"},
                {
                    "type": "tool_result",
                    "tool_use_id": uses[1].id,
                    "content": [{"type": "text", "text": "上午十点"}],
                },
            ],
        }
    )
    with client.messages.stream(model="claude-sonnet-4", max_tokens=512, messages=messages) as s:
        answer = s.get_final_message()
    assert answer.stop_reason == "end_turn"
    text = "".join(b.text for b in answer.content if b.type == "text")
    assert "小雨 18°C" in text and "上午十点" in text


def test_thinking_then_text(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(
        Scenario.from_dict(
            {"turns": [{"reasoning": "let me think", "text": "42", "chunk_size": 4}]}
        )
    )
    with _client(server).messages.stream(
        model="claude", max_tokens=64, messages=[{"role": "user", "content": "?"}]
    ) as s:
        message = s.get_final_message()
    thinking, text = message.content
    assert thinking.type == "thinking" and thinking.thinking == "let me think"
    assert thinking.signature
    assert text.type == "text" and text.text == "42"


def test_if_error_turn_corrects_invalid_arguments(toolwire_server: ServerFactory) -> None:
    scenario = Scenario.from_dict(
        {
            "turns": [
                {"tool_calls": [{"name": "get_weather", "arguments": {"town": "杭州"}}]},
                {
                    "text": "天气:{result:get_weather}",
                    "if_error": {
                        "tool_calls": [{"name": "get_weather", "arguments": {"city": "杭州"}}]
                    },
                },
                {"text": "更正后的天气:{result:get_weather}"},
            ]
        }
    )
    server = toolwire_server(scenario)
    client = _client(server)
    messages: list[Any] = [{"role": "user", "content": "天气?"}]

    def step(result: str, *, is_error: bool) -> anthropic.types.Message:
        reply = client.messages.create(model="c", max_tokens=64, messages=messages)
        use = next(b for b in reply.content if b.type == "tool_use")
        messages.append({"role": "assistant", "content": [use.model_dump()]})
        block = {"type": "tool_result", "tool_use_id": use.id, "content": result}
        messages.append({"role": "user", "content": [dict(block, is_error=is_error)]})
        return reply

    first = step("missing 'city'", is_error=True)
    assert first.content[0].type == "tool_use" and first.content[0].input == {"town": "杭州"}
    corrected = step("晴", is_error=False)
    assert corrected.content[0].type == "tool_use"
    assert corrected.content[0].input == {"city": "杭州"}
    final = client.messages.create(model="c", max_tokens=64, messages=messages)
    assert final.content[0].type == "text" and final.content[0].text == "更正后的天气:晴"


def test_raw_arguments_that_no_message_can_carry(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(
        Scenario.from_dict({"turns": [{"tool_calls": [{"name": "f", "arguments": '{"a": '}]}]})
    )
    client = _client(server, max_retries=0)
    with pytest.raises(anthropic.InternalServerError, match="not a JSON object"):
        client.messages.create(model="c", max_tokens=8, messages=[{"role": "user", "content": "x"}])
    # Streamed, the raw text goes out as partial_json fragments, unchanged.
    body = {
        "model": "c",
        "max_tokens": 8,
        "stream": True,
        "messages": [{"role": "user", "content": "x"}],
    }
    response = httpx.post(server.base_url + "/v1/messages", json=body)
    assert response.status_code == 200
    partial = [
        data["delta"]["partial_json"]
        for event, data in sse_json(response.content)
        if event == "content_block_delta"
    ]
    assert partial[0] == "" and "".join(partial) == '{"a": '


def test_exhausted_scenario_is_a_clear_400(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(Scenario(turns=[Turn(text="only")]))
    messages: list[Any] = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "only"},
        {"role": "user", "content": "b"},
    ]
    with pytest.raises(anthropic.BadRequestError, match="has 1 turn") as caught:
        _client(server, max_retries=0).messages.create(model="c", max_tokens=8, messages=messages)
    body = caught.value.body
    assert isinstance(body, dict) and list(body) == ["type", "error"]
    assert body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error"
    assert "asks for turn 2" in body["error"]["message"]
