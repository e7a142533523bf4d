"""The bridge's request readers, one served dialect at a time: the
conversation (text, reasoning, calls, their results by id), the tool choice,
the limits and the reasoning effort, read into toolwire's values; a body not
of the dialect's shape a :class:`BadRequest` naming where."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.errors import BadRequest
from toolwire.messages import AssistantMessage, SystemMessage, ToolResultMessage, UserMessage
from toolwire.stream.codecs.bridge import Asked, read_request
from toolwire.stream.jsonio import dumps_bytes
from toolwire.types import InvalidToolCall, ToolCall


def _asked(dialect: str, body: dict[str, Any], model: str | None = None) -> Asked:
    return read_request(dialect, dumps_bytes(body), model, None)


def _call(call_id: str, name: str, raw: str, index: int = 0) -> ToolCall:
    from toolwire.stream.jsonio import loads

    return ToolCall(id=call_id, name=name, arguments=loads(raw), raw_arguments=raw, index=index)


def test_anthropic_history_choice_and_thinking_budget() -> None:
    asked = _asked(
        "anthropic-messages",
        {
            "model": "claude",
            "system": [{"type": "text", "text": "Be brief."}],
            "messages": [
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "Paris, then.", "signature": "s"},
                        {"type": "text", "text": "Looking."},
                        {"type": "tool_use", "id": "t1", "name": "weather", "input": {"c": "P"}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "t1",
                            "content": "rain",
                            "is_error": True,
                        }
                    ],
                },
            ],
            "tool_choice": {"type": "tool", "name": "weather"},
            "thinking": {"type": "enabled", "budget_tokens": 8000},
            "max_tokens": 100,
            "temperature": 0.5,
        },
    )
    assert asked.messages == (
        SystemMessage("Be brief."),
        UserMessage("Weather?"),
        AssistantMessage(
            text="Looking.",
            reasoning="Paris, then.",
            tool_calls=(_call("t1", "weather", '{"c":"P"}'),),
        ),
        ToolResultMessage("t1", "weather", "rain", is_error=True),
    )
    assert (asked.tool_choice, asked.reasoning, asked.max_tokens, asked.temperature) == (
        {"name": "weather"},
        "medium",
        100,
        0.5,
    )


@pytest.mark.parametrize(
    ("choice", "budget", "read"),
    [
        ({"type": "any"}, 1000, ("required", "low")),
        ({"type": "none"}, 20000, ("none", "high")),
        ("auto", None, (None, None)),
        ({"type": "tool"}, True, (None, None)),
    ],
)
def test_anthropic_choices_and_budgets(choice: Any, budget: Any, read: tuple[Any, Any]) -> None:
    body: dict[str, Any] = {"model": "c", "messages": [], "tool_choice": choice}
    if budget is not None:
        body["thinking"] = {"type": "enabled", "budget_tokens": budget}
    asked = _asked("anthropic-messages", body)
    assert (asked.tool_choice, asked.reasoning) == read


@pytest.mark.parametrize(
    ("thinking", "config", "read"),
    [
        # Claude Code's adaptive thinking: the effort is output_config's.
        ({"type": "adaptive"}, {"effort": "medium"}, "medium"),
        ({"type": "adaptive", "display": "omitted"}, {"effort": "max"}, "high"),
        ({"type": "adaptive"}, {"effort": "xhigh"}, "high"),
        ({"type": "adaptive"}, None, None),  # the upstream's default
        ({"type": "adaptive"}, {"format": {"type": "json_schema"}}, None),
        # An effort is the request's word over a budget's reading.
        ({"type": "enabled", "budget_tokens": 20000}, {"effort": "low"}, "low"),
        ({"type": "disabled"}, {"effort": None}, None),
    ],
)
def test_anthropic_adaptive_thinking_reads_its_effort(
    thinking: dict[str, Any], config: dict[str, Any] | None, read: str | None
) -> None:
    body: dict[str, Any] = {"model": "c", "messages": [], "thinking": thinking}
    if config is not None:
        body["output_config"] = config
    assert _asked("anthropic-messages", body).reasoning == read


@pytest.mark.parametrize("effort", ["extreme", "", 3, {"level": "high"}, ["high"]])
def test_anthropic_unknown_effort_is_a_bad_request(effort: Any) -> None:
    body = {"model": "c", "messages": [], "output_config": {"effort": effort}}
    with pytest.raises(BadRequest, match=r"output_config\.effort must be one of"):
        _asked("anthropic-messages", body)


def test_chat_history_with_custom_calls_reasoning_and_developer_messages() -> None:
    asked = _asked(
        "openai-chat",
        {
            "model": "gpt",
            "messages": [
                {"role": "developer", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "Patch it."}]},
                {
                    "role": "assistant",
                    "content": None,
                    "reasoning_content": "A patch.",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "custom",
                            "custom": {"name": "patch", "input": "*** B"},
                        },
                        {
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "ls", "arguments": "{"},
                        },
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "done"},
            ],
            "tool_choice": {"type": "custom", "custom": {"name": "patch"}},
            "max_completion_tokens": 50,
            "reasoning_effort": "high",
            "stream": True,
        },
    )
    system, user, assistant, result = asked.messages
    assert (system, user, result) == (
        SystemMessage("Be brief."),
        UserMessage("Patch it."),
        ToolResultMessage("c1", "patch", "done"),
    )
    assert isinstance(assistant, AssistantMessage) and assistant.reasoning == "A patch."
    first, second = assistant.tool_calls
    assert isinstance(first, ToolCall) and first.arguments == {"input": "*** B"}
    assert isinstance(second, InvalidToolCall) and second.raw_arguments == "{"
    assert (asked.tool_choice, asked.max_tokens, asked.reasoning, asked.stream) == (
        {"name": "patch"},
        50,
        "high",
        True,
    )


@pytest.mark.parametrize(
    ("choice", "read"),
    [("required", "required"), ("weird", None), ({"type": "function", "function": {}}, None)],
)
def test_chat_choices(choice: Any, read: Any) -> None:
    assert (
        _asked("openai-chat", {"model": "m", "messages": [], "tool_choice": choice}).tool_choice
        == read
    )


def test_responses_history_with_reasoning_custom_calls_and_outputs() -> None:
    asked = _asked(
        "openai-responses",
        {
            "model": "gpt",
            "instructions": "Be brief.",
            "input": [
                {"role": "developer", "content": "No chatter."},
                {"role": "user", "content": "Patch it."},
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "A patch."}]},
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Ok."}],
                },
                {"type": "custom_tool_call", "call_id": "c1", "name": "patch", "input": "*** B"},
                {"type": "custom_tool_call_output", "call_id": "c1", "output": "done"},
            ],
            "reasoning": {"effort": "low"},
            "max_output_tokens": 40,
        },
    )
    assert asked.messages == (
        SystemMessage("Be brief."),
        SystemMessage("No chatter."),
        UserMessage("Patch it."),
        AssistantMessage(
            text="Ok.",
            reasoning="A patch.",
            tool_calls=(_call("c1", "patch", '{"input":"*** B"}'),),
        ),
        ToolResultMessage("c1", "patch", "done"),
    )
    assert (asked.reasoning, asked.max_tokens) == ("low", 40)


def test_responses_text_input_and_no_kept_responses() -> None:
    assert _asked("openai-responses", {"model": "m", "input": "Hi"}).messages == (
        UserMessage("Hi"),
    )
    with pytest.raises(BadRequest, match="keeps no responses"):
        _asked("openai-responses", {"model": "m", "input": [], "previous_response_id": "r1"})


def test_gemini_history_minted_ids_thoughts_and_choice() -> None:
    asked = _asked(
        "gemini",
        {
            "systemInstruction": {"parts": [{"text": "Be brief."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "Weather?"}]},
                {
                    "role": "model",
                    "parts": [
                        {"text": "Paris.", "thought": True},
                        {"text": "Looking."},
                        {"functionCall": {"name": "weather", "args": {"c": "P"}}},
                        {"functionCall": {"name": "weather", "args": {"c": "L"}}},
                    ],
                },
                {
                    "role": "user",
                    "parts": [
                        {"functionResponse": {"name": "weather", "response": {"r": 1}}},
                        {"functionResponse": {"name": "weather", "response": {"r": 2}}},
                        {"functionResponse": {"name": "weather", "response": {"r": 3}}},
                    ],
                },
            ],
            "toolConfig": {
                "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["weather"]}
            },
            "generationConfig": {"maxOutputTokens": 30, "thinkingConfig": {"thinkingBudget": 100}},
        },
        model="gemini-3",
    )
    results = [m for m in asked.messages if isinstance(m, ToolResultMessage)]
    assert [r.call_id for r in results] == ["call_weather_0", "call_weather_1", "call_weather"]
    (assistant,) = [m for m in asked.messages if isinstance(m, AssistantMessage)]
    assert (assistant.text, assistant.reasoning) == ("Looking.", "Paris.")
    assert (asked.model, asked.tool_choice, asked.max_tokens, asked.reasoning) == (
        "gemini-3",
        {"name": "weather"},
        30,
        "low",
    )


@pytest.mark.parametrize(
    ("mode", "read"), [("AUTO", "auto"), ("NONE", "none"), ("ANY", "required")]
)
def test_gemini_choices(mode: str, read: str) -> None:
    body = {"contents": [], "toolConfig": {"functionCallingConfig": {"mode": mode}}}
    assert _asked("gemini", body, model="g").tool_choice == read


@pytest.mark.parametrize(
    ("dialect", "body", "said"),
    [
        ("openai-chat", b"{", "not valid JSON"),
        ("openai-chat", b"[]", "must be a JSON object"),
        ("openai-chat", b'{"messages": []}', "'model' must be a non-empty string"),
        ("openai-chat", b'{"model": "m", "messages": {}}', "messages must be an array"),
        ("openai-chat", b'{"model": "m", "messages": [7]}', "messages[0] must be an object"),
        ("openai-chat", b'{"model": "m", "messages": [{"role": "robot"}]}', "role 'robot'"),
        (
            "openai-chat",
            b'{"model": "m", "messages": [{"role": "assistant", "tool_calls": [7]}]}',
            "not a openai-chat request",
        ),
        (
            "anthropic-messages",
            b'{"model": "m", "messages": [{"role": "tool"}]}',
            "messages[0].role",
        ),
        ("openai-responses", b'{"model": "m", "input": [7]}', "input[0] must be an object"),
        (
            "gemini",
            b'{"model": "m", "contents": [{"parts": 7}]}',
            "contents[0].parts must be an array",
        ),
    ],
)
def test_a_body_not_of_the_dialect_s_shape_is_a_bad_request(
    dialect: str, body: bytes, said: str
) -> None:
    with pytest.raises(BadRequest) as raised:
        read_request(dialect, body, None, None)
    assert said in str(raised.value)
