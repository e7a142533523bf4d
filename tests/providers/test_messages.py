"""Normalized messages: immutable, tagged, and lossless through the journal shape."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from toolwire import (
    AssistantMessage,
    ChoiceResult,
    InvalidToolCall,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UsageError,
    UserMessage,
    message_from_dict,
)
from toolwire.messages import Message

CALL = ToolCall(
    id="call_1",
    name="get_weather",
    arguments={"city": "杭州"},
    raw_arguments='{"city": "杭州"}',
    index=0,
)
BAD_CALL = InvalidToolCall(
    id="call_2", name="get_time", raw_arguments='{"tz": ', error="unexpected end", index=1
)
MESSAGES: list[Message] = [
    SystemMessage("be brief"),
    UserMessage("杭州天气怎么样?"),
    AssistantMessage(
        text="Let me check.",
        reasoning="The user wants weather.",
        tool_calls=(CALL, BAD_CALL),
        provider_state=({"api": "anthropic-messages", "type": "block", "block": {"x": 1}},),
    ),
    ToolResultMessage("call_1", "get_weather", '{"temp": 28}'),
    ToolResultMessage("call_2", "get_time", "invalid arguments", is_error=True),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: m.kind)
def test_round_trip_through_json(message: Message) -> None:
    data = json.loads(json.dumps(message.to_dict()))
    again = message_from_dict(data)
    assert again == message
    assert type(again) is type(message)
    assert type(message).from_dict(data) == message


def test_kinds_are_fixed_literals() -> None:
    assert [m.kind for m in MESSAGES] == [
        "system",
        "user",
        "assistant",
        "tool_result",
        "tool_result",
    ]
    with pytest.raises(TypeError):
        SystemMessage("x", kind="user")  # type: ignore[call-arg]


def test_messages_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        MESSAGES[1].text = "changed"  # type: ignore[misc, union-attr]


def test_assistant_defaults() -> None:
    message = AssistantMessage()
    assert (message.text, message.reasoning, message.tool_calls, message.provider_state) == (
        "",
        "",
        (),
        (),
    )


def test_invalid_call_survives_round_trip_with_its_raw_text() -> None:
    data = MESSAGES[2].to_dict()
    assert data["tool_calls"][1] == {
        "type": "invalid",
        "id": "call_2",
        "name": "get_time",
        "raw_arguments": '{"tz": ',
        "error": "unexpected end",
        "index": 1,
        "minted_id": False,
    }
    restored = AssistantMessage.from_dict(data)
    assert isinstance(restored.tool_calls[1], InvalidToolCall)


def test_from_choice_merges_calls_in_stream_order() -> None:
    other = ToolCall(id="call_3", name="x", arguments={}, index=2)
    choice = ChoiceResult(
        text="t",
        reasoning="r",
        tool_calls=(CALL, other),
        invalid_tool_calls=(BAD_CALL,),
        provider_state=({"api": "gemini", "type": "thought_signature", "signature": "s"},),
    )
    message = AssistantMessage.from_choice(choice)
    assert [c.id for c in message.tool_calls] == ["call_1", "call_2", "call_3"]
    assert message.provider_state == choice.provider_state
    assert (message.text, message.reasoning) == ("t", "r")


@pytest.mark.parametrize(
    "bad",
    [
        {"kind": "robot", "text": "x"},
        {"text": "no kind"},
        {"kind": "user"},
        {"kind": "user", "text": 3},
        {"kind": "tool_result", "call_id": "c", "name": "n", "content": "x", "is_error": "no"},
        {"kind": "assistant", "tool_calls": "nope"},
        {"kind": "assistant", "tool_calls": [{"id": "c", "name": "n", "arguments": []}]},
        {"kind": "assistant", "tool_calls": [{"id": "c"}]},
        {"kind": "assistant", "tool_calls": [7]},
        {"kind": "assistant", "provider_state": ["not an object"]},
        ["not", "a", "dict"],
    ],
)
def test_malformed_records_raise_usage_error(bad: Any) -> None:
    with pytest.raises(UsageError):
        message_from_dict(bad)


def test_from_dict_checks_the_kind() -> None:
    with pytest.raises(UsageError, match="expected a 'system' message"):
        SystemMessage.from_dict(UserMessage("x").to_dict())
