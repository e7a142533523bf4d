"""System messages inside Anthropic ``messages`` (the SDK's ``SystemMessageParam``),
written by the request codec and read by the emulation server."""

from __future__ import annotations

from typing import Any, get_args, get_type_hints

import anthropic
import httpx
import pytest
from anthropic.types import MessageParam, SystemMessageParam

from toolwire.messages import AssistantMessage, SystemMessage, UserMessage
from toolwire.providers import Anthropic
from toolwire.testing import Scenario
from toolwire.testing.pytest_plugin import ServerFactory


def _answering() -> Scenario:
    return Scenario.from_dict({"turns": [{"text": "ok"}]})


def test_the_sdk_names_a_system_message_param() -> None:
    assert SystemMessageParam in get_args(MessageParam)
    role = get_type_hints(SystemMessageParam)["role"]
    assert get_args(role) == ("system",)


def test_a_later_system_message_stays_in_place() -> None:
    body = (
        Anthropic(api_key="k")
        .build_request(
            model="m",
            messages=[
                SystemMessage("be terse"),
                UserMessage("a"),
                AssistantMessage(text="b"),
                SystemMessage("now be formal"),
                UserMessage("c"),
            ],
        )
        .json
    )
    assert body["system"] == "be terse"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "system", "user"]
    assert body["messages"][2] == {"role": "system", "content": "now be formal"}


def test_the_sdk_sends_a_system_message_in_messages(toolwire_server: ServerFactory) -> None:
    """Claude Code's first request: a user message, then a system one."""
    server = toolwire_server(_answering())
    client = anthropic.Anthropic(base_url=server.url_for("anthropic-messages"), api_key="t")
    messages: list[MessageParam] = [
        {"role": "user", "content": "hi"},
        {"role": "system", "content": [{"type": "text", "text": "the date is 2026-12-02"}]},
    ]
    message = client.messages.create(model="claude", max_tokens=64, messages=messages)
    assert message.stop_reason == "end_turn"
    assert "".join(b.text for b in message.content if b.type == "text") == "ok"


def test_toolwire_writes_one_the_server_reads(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(_answering())
    request = Anthropic(api_key="k").build_request(
        model="m", messages=[UserMessage("a"), SystemMessage("formal now"), UserMessage("b")]
    )
    reply = httpx.post(server.url_for("anthropic-messages") + "/v1/messages", json=request.json)
    assert reply.status_code == 200, reply.text


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (7, "messages[1].content must be a string or a list of text blocks"),
        ([{"type": "image"}], "messages[1].content[0] must be a text block"),
        ([{"type": "text", "text": 1}], "messages[1].content[0].text must be a string"),
    ],
)
def test_a_malformed_system_message_is_a_400(
    toolwire_server: ServerFactory, content: Any, error: str
) -> None:
    server = toolwire_server(_answering())
    body = {
        "model": "m",
        "max_tokens": 8,
        "messages": [{"role": "user", "content": "a"}, {"role": "system", "content": content}],
    }
    reply = httpx.post(server.url_for("anthropic-messages") + "/v1/messages", json=body)
    assert reply.status_code == 400
    assert error in reply.text


def test_another_role_is_still_a_400(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(_answering())
    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "tool", "content": "a"}]}
    reply = httpx.post(server.url_for("anthropic-messages") + "/v1/messages", json=body)
    assert reply.status_code == 400
    assert "messages[0].role must be 'user', 'assistant' or 'system'" in reply.text
