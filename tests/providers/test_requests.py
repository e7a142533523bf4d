"""Request building: golden wire shapes per dialect, written from each provider's docs.

References checked for these shapes: OpenAI "Function calling" guide and Chat
Completions reference (``tool_calls``, ``role: tool``, ``tool_choice``,
``stream_options.include_usage``); OpenAI Responses reference
(``function_call`` / ``function_call_output`` input items, flat function
tools, ``instructions``); Anthropic "Tool use" guide (``tool_use`` /
``tool_result`` blocks, results first in one user message, ``tool_choice``
``auto``/``any``/``tool``/``none``); Gemini "Function calling" guide
(``functionDeclarations``, ``functionCall``/``functionResponse`` parts,
``toolConfig.functionCallingConfig``, ``streamGenerateContent?alt=sse``).
"""

from __future__ import annotations

from typing import Any

import pytest

from toolwire import (
    Anthropic,
    AssistantMessage,
    Gemini,
    InvalidToolCall,
    OpenAIChat,
    OpenAIResponses,
    Provider,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UsageError,
    UserMessage,
)
from toolwire.messages import Message

KEY = "sk-test-key"
WEATHER_PARAMS = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
TIME_PARAMS: dict[str, Any] = {"type": "object", "properties": {}}

CHAT_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather now",
            "parameters": WEATHER_PARAMS,
        },
    },
    {
        "type": "function",
        "function": {"name": "get_time", "description": "Time now", "parameters": TIME_PARAMS},
    },
]
RESPONSES_TOOLS = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Weather now",
        "parameters": WEATHER_PARAMS,
    },
    {"type": "function", "name": "get_time", "description": "Time now", "parameters": TIME_PARAMS},
]
ANTHROPIC_TOOLS = [
    {"name": "get_weather", "description": "Weather now", "input_schema": WEATHER_PARAMS},
    {"name": "get_time", "description": "Time now", "input_schema": TIME_PARAMS},
]
GEMINI_DECLARATIONS = [
    {"name": "get_weather", "description": "Weather now", "parameters": WEATHER_PARAMS},
    {"name": "get_time", "description": "Time now", "parameters": TIME_PARAMS},
]
GEMINI_TOOLS = [{"functionDeclarations": GEMINI_DECLARATIONS}]


def conversation(*, minted: bool = False) -> list[Message]:
    """A full tool-calling turn: two parallel calls, one result an error."""
    return [
        SystemMessage("You are terse."),
        UserMessage("Weather in Paris, and the time?"),
        AssistantMessage(
            text="Checking.",
            tool_calls=(
                ToolCall(
                    id="call_a",
                    name="get_weather",
                    arguments={"city": "Paris"},
                    raw_arguments='{"city": "Paris"}',
                    index=0,
                    minted_id=minted,
                ),
                ToolCall(
                    id="call_b",
                    name="get_time",
                    arguments={},
                    raw_arguments="",
                    index=1,
                    minted_id=minted,
                ),
            ),
        ),
        ToolResultMessage("call_a", "get_weather", '{"temp_c": 21}'),
        ToolResultMessage("call_b", "get_time", "clock unavailable", is_error=True),
    ]


# -- OpenAI chat completions ------------------------------------------------


def test_openai_chat_golden_request() -> None:
    provider = OpenAIChat(api_key=KEY)
    request = provider.build_request(
        model="gpt-4.1",
        messages=conversation(),
        tools=CHAT_TOOLS,
        tool_choice="auto",
        stream=True,
        max_tokens=256,
        temperature=0.2,
    )
    assert request.method == "POST"
    assert request.url == "https://api.openai.com/v1/chat/completions"
    assert request.stream is True
    assert request.dialect == "openai-chat"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"] == "application/json"
    assert request.json == {
        "model": "gpt-4.1",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Weather in Paris, and the time?"},
            {
                "role": "assistant",
                "content": "Checking.",
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    },
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "get_time", "arguments": "{}"},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_a", "content": '{"temp_c": 21}'},
            {"role": "tool", "tool_call_id": "call_b", "content": "clock unavailable"},
        ],
        "tools": CHAT_TOOLS,
        "tool_choice": "auto",
        "max_completion_tokens": 256,
        "temperature": 0.2,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_openai_chat_compatible_server_and_non_streaming() -> None:
    provider = OpenAIChat(
        base_url="http://127.0.0.1:8000/v1/", name="vllm", openai_organization="org-1"
    )
    request = provider.build_request(
        model="qwen", messages=[UserMessage("hi")], stream=False, max_tokens=10
    )
    assert request.url == "http://127.0.0.1:8000/v1/chat/completions"
    assert "authorization" not in request.headers  # keyless local server
    assert request.headers["openai-organization"] == "org-1"
    assert request.json == {
        "model": "qwen",
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 10,
    }
    assert request.stream is False


def test_openai_chat_assistant_with_only_calls_has_empty_content() -> None:
    # Not null: llama-cpp-python's server answers HTTP 500 to "content": null.
    provider = OpenAIChat(api_key=KEY)
    message = AssistantMessage(tool_calls=(ToolCall(id="c", name="f", arguments={"x": 1}),))
    wire = provider.build_request(model="m", messages=[message]).json["messages"][0]
    assert wire["content"] == ""
    assert wire["tool_calls"][0]["function"]["arguments"] == '{"x":1}'


def test_openai_chat_sends_back_arguments_as_the_model_wrote_them() -> None:
    provider = OpenAIChat(api_key=KEY)
    calls = (
        ToolCall(id="a", name="f", arguments={"x": 1}, raw_arguments='{ "x" : 1 }'),
        ToolCall(id="b", name="f", arguments={"x": 2}, raw_arguments='{"x": 2,}', repaired=True),
        InvalidToolCall(id="c", name="f", raw_arguments='{"x": ', error="truncated"),
    )
    wire = provider.build_request(model="m", messages=[AssistantMessage(tool_calls=calls)])
    sent = [c["function"]["arguments"] for c in wire.json["messages"][0]["tool_calls"]]
    assert sent == ['{ "x" : 1 }', '{"x":2}', '{"x": ']


def test_openai_chat_stream_usage_can_be_turned_off() -> None:
    provider = OpenAIChat(base_url="http://127.0.0.1:1/v1", openai_stream_usage=False)
    body = provider.build_request(model="m", messages=[UserMessage("x")], stream=True).json
    assert body["stream"] is True
    assert "stream_options" not in body


# -- OpenAI Responses -------------------------------------------------------


def test_openai_responses_golden_request() -> None:
    provider = OpenAIResponses(api_key=KEY, openai_store=False)
    request = provider.build_request(
        model="gpt-5",
        messages=conversation(),
        tools=RESPONSES_TOOLS,
        tool_choice="required",
        stream=True,
        max_tokens=512,
    )
    assert request.url == "https://api.openai.com/v1/responses"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.json == {
        "model": "gpt-5",
        "instructions": "You are terse.",
        "input": [
            {"role": "user", "content": "Weather in Paris, and the time?"},
            {"role": "assistant", "content": "Checking."},
            {
                "type": "function_call",
                "call_id": "call_a",
                "name": "get_weather",
                "arguments": '{"city": "Paris"}',
            },
            {"type": "function_call", "call_id": "call_b", "name": "get_time", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_a", "output": '{"temp_c": 21}'},
            {"type": "function_call_output", "call_id": "call_b", "output": "clock unavailable"},
        ],
        "tools": RESPONSES_TOOLS,
        "tool_choice": "required",
        "max_output_tokens": 512,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "stream": True,
    }


def test_openai_responses_later_system_message_stays_in_place() -> None:
    provider = OpenAIResponses(api_key=KEY)
    body = provider.build_request(
        model="m",
        messages=[UserMessage("a"), SystemMessage("now be formal"), UserMessage("b")],
        stream=False,
    ).json
    assert "instructions" not in body
    assert body["input"] == [
        {"role": "user", "content": "a"},
        {"role": "system", "content": "now be formal"},
        {"role": "user", "content": "b"},
    ]
    assert "stream" not in body


# -- Anthropic ---------------------------------------------------------------


def test_anthropic_golden_request() -> None:
    provider = Anthropic(api_key=KEY)
    request = provider.build_request(
        model="claude-sonnet-4-5",
        messages=conversation(),
        tools=ANTHROPIC_TOOLS,
        tool_choice={"name": "get_weather"},
        stream=True,
        temperature=0.0,
    )
    assert request.url == "https://api.anthropic.com/v1/messages"
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers
    assert request.json == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "system": "You are terse.",
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "Weather in Paris, and the time?"}],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking."},
                    {
                        "type": "tool_use",
                        "id": "call_a",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    },
                    {"type": "tool_use", "id": "call_b", "name": "get_time", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_a",
                        "content": '{"temp_c": 21}',
                        "is_error": False,
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_b",
                        "content": "clock unavailable",
                        "is_error": True,
                    },
                ],
            },
        ],
        "tools": ANTHROPIC_TOOLS,
        "tool_choice": {"type": "tool", "name": "get_weather"},
        "temperature": 0.0,
        "stream": True,
    }


def test_anthropic_all_results_of_a_turn_share_one_user_message() -> None:
    provider = Anthropic(api_key=KEY)
    calls = tuple(ToolCall(id=f"toolu_{i}", name="f", arguments={}, index=i) for i in range(3))
    messages: list[Message] = [
        UserMessage("go"),
        AssistantMessage(tool_calls=calls),
        *[ToolResultMessage(f"toolu_{i}", "f", f"r{i}") for i in range(3)],
        UserMessage("and now?"),
    ]
    wire = provider.build_request(model="m", messages=messages).json["messages"]
    assert [m["role"] for m in wire] == ["user", "assistant", "user"]
    last = wire[-1]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "tool_result", "text"]
    assert [b.get("tool_use_id") for b in last[:3]] == ["toolu_0", "toolu_1", "toolu_2"]


def test_anthropic_thinking_budget_and_forced_tool_conflict() -> None:
    provider = Anthropic(api_key=KEY, anthropic_thinking=8000, anthropic_beta=["b1", "b2"])
    request = provider.build_request(
        model="m", messages=[UserMessage("x")], tools=ANTHROPIC_TOOLS, tool_choice="auto"
    )
    assert request.json["thinking"] == {"type": "enabled", "budget_tokens": 8000}
    assert request.json["max_tokens"] > 8000  # the API requires max_tokens > budget
    assert request.headers["anthropic-beta"] == "b1,b2"
    with pytest.raises(UsageError, match="thinking"):
        provider.build_request(
            model="m", messages=[UserMessage("x")], tools=ANTHROPIC_TOOLS, tool_choice="required"
        )


def test_anthropic_skips_empty_assistant_turns() -> None:
    provider = Anthropic(api_key=KEY)
    wire = provider.build_request(
        model="m", messages=[UserMessage("a"), AssistantMessage(), UserMessage("b")]
    ).json["messages"]
    assert wire == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ]


# -- Gemini ------------------------------------------------------------------


def test_gemini_golden_request() -> None:
    provider = Gemini(api_key=KEY)
    request = provider.build_request(
        model="gemini-2.5-flash",
        messages=conversation(minted=True),
        tools=GEMINI_TOOLS,
        tool_choice="required",
        stream=True,
        max_tokens=300,
        temperature=0.5,
    )
    assert request.url == (
        "https://generativelanguage.googleapis.com/v1beta/models/"
        "gemini-2.5-flash:streamGenerateContent?alt=sse"
    )
    assert request.headers["x-goog-api-key"] == KEY
    assert KEY not in request.url
    assert request.json == {
        "systemInstruction": {"parts": [{"text": "You are terse."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Paris, and the time?"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "Checking."},
                    {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
                    {"functionCall": {"name": "get_time", "args": {}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "get_weather",
                            "response": {"output": '{"temp_c": 21}'},
                        }
                    },
                    {
                        "functionResponse": {
                            "name": "get_time",
                            "response": {"error": "clock unavailable"},
                        }
                    },
                ],
            },
        ],
        "tools": GEMINI_TOOLS,
        "toolConfig": {"functionCallingConfig": {"mode": "ANY"}},
        "generationConfig": {"maxOutputTokens": 300, "temperature": 0.5},
    }


def test_gemini_non_streaming_url_bare_declarations_and_provider_ids() -> None:
    provider = Gemini(api_key=KEY, gemini_thinking_budget=0)
    request = provider.build_request(
        model="models/gemini-2.5-pro",
        messages=conversation(minted=False),
        tools=GEMINI_DECLARATIONS,
        stream=False,
        extra={"generationConfig": {"topK": 3}},
    )
    assert request.url.endswith("/models/gemini-2.5-pro:generateContent")
    assert request.json["tools"] == [{"functionDeclarations": GEMINI_DECLARATIONS}]
    # ids Gemini itself sent go back on the call and on its response
    model_parts = request.json["contents"][1]["parts"]
    assert model_parts[1]["functionCall"]["id"] == "call_a"
    responses = request.json["contents"][2]["parts"]
    assert [p["functionResponse"]["id"] for p in responses] == ["call_a", "call_b"]
    assert request.json["generationConfig"] == {"thinkingConfig": {"thinkingBudget": 0}, "topK": 3}


# -- tool_choice, per dialect -------------------------------------------------

TOOL_CHOICE_TABLE: list[tuple[type[Provider], Any, str, Any]] = [
    (OpenAIChat, "auto", "tool_choice", "auto"),
    (OpenAIChat, "required", "tool_choice", "required"),
    (OpenAIChat, "none", "tool_choice", "none"),
    (
        OpenAIChat,
        {"name": "get_time"},
        "tool_choice",
        {"type": "function", "function": {"name": "get_time"}},
    ),
    (OpenAIResponses, "auto", "tool_choice", "auto"),
    (OpenAIResponses, "required", "tool_choice", "required"),
    (OpenAIResponses, "none", "tool_choice", "none"),
    (
        OpenAIResponses,
        {"name": "get_time"},
        "tool_choice",
        {"type": "function", "name": "get_time"},
    ),
    (Anthropic, "auto", "tool_choice", {"type": "auto"}),
    (Anthropic, "required", "tool_choice", {"type": "any"}),
    (Anthropic, "none", "tool_choice", {"type": "none"}),
    (Anthropic, {"name": "get_time"}, "tool_choice", {"type": "tool", "name": "get_time"}),
    (Gemini, "auto", "toolConfig", {"functionCallingConfig": {"mode": "AUTO"}}),
    (Gemini, "required", "toolConfig", {"functionCallingConfig": {"mode": "ANY"}}),
    (Gemini, "none", "toolConfig", {"functionCallingConfig": {"mode": "NONE"}}),
    (
        Gemini,
        {"name": "get_time"},
        "toolConfig",
        {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_time"]}},
    ),
]
TOOLS_FOR: dict[type[Provider], list[dict[str, Any]]] = {
    OpenAIChat: CHAT_TOOLS,
    OpenAIResponses: RESPONSES_TOOLS,
    Anthropic: ANTHROPIC_TOOLS,
    Gemini: GEMINI_TOOLS,
}


@pytest.mark.parametrize(
    ("cls", "choice", "key", "expected"),
    TOOL_CHOICE_TABLE,
    ids=[f"{c.__name__}-{ch}" for c, ch, _, _ in TOOL_CHOICE_TABLE],
)
def test_tool_choice_table(cls: type[Provider], choice: Any, key: str, expected: Any) -> None:
    provider = cls(api_key=KEY)  # type: ignore[call-arg]
    body = provider.build_request(
        model="m", messages=[UserMessage("x")], tools=TOOLS_FOR[cls], tool_choice=choice
    ).json
    assert body[key] == expected


@pytest.mark.parametrize("cls", [OpenAIChat, OpenAIResponses, Anthropic, Gemini])
def test_tool_choice_mistakes_are_usage_errors(cls: type[Provider]) -> None:
    provider = cls(api_key=KEY)  # type: ignore[call-arg]
    tools = TOOLS_FOR[cls]
    with pytest.raises(UsageError, match="not among the tools"):
        provider.build_request(
            model="m", messages=[UserMessage("x")], tools=tools, tool_choice={"name": "nope"}
        )
    with pytest.raises(UsageError, match="tool_choice must be"):
        provider.build_request(
            model="m",
            messages=[UserMessage("x")],
            tools=tools,
            tool_choice="any",  # type: ignore[arg-type]
        )
    with pytest.raises(UsageError, match="needs at least one tool"):
        provider.build_request(model="m", messages=[UserMessage("x")], tool_choice="required")
    with pytest.raises(UsageError, match="not a toolwire message"):
        provider.build_request(model="m", messages=[{"role": "user"}])  # type: ignore[list-item]
    # no tools: no tool fields at all (OpenAI rejects tool_choice without tools)
    body = provider.build_request(model="m", messages=[UserMessage("x")], tool_choice="auto").json
    assert not {"tools", "tool_choice", "toolConfig"} & set(body)


# -- keys and configuration ----------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "var", "header", "value"),
    [
        (OpenAIChat, "OPENAI_API_KEY", "authorization", "Bearer env-key"),
        (OpenAIResponses, "OPENAI_API_KEY", "authorization", "Bearer env-key"),
        (Anthropic, "ANTHROPIC_API_KEY", "x-api-key", "env-key"),
        (Gemini, "GEMINI_API_KEY", "x-goog-api-key", "env-key"),
        (Gemini, "GOOGLE_API_KEY", "x-goog-api-key", "env-key"),
    ],
)
def test_key_from_environment(
    monkeypatch: pytest.MonkeyPatch, cls: type[Provider], var: str, header: str, value: str
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(var, "env-key")
    request = cls().build_request(model="m", messages=[UserMessage("x")])
    assert request.headers[header] == value


@pytest.mark.parametrize("cls", [OpenAIChat, OpenAIResponses, Anthropic, Gemini])
def test_official_endpoint_without_key_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, cls: type[Provider]
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UsageError, match="no API key"):
        cls()
    # a self-hosted server may need no key at all
    assert cls(base_url="http://127.0.0.1:9/v1").base_url == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("cls", "var", "value", "expected"),
    [
        (OpenAIChat, "OPENAI_BASE_URL", "http://127.0.0.1:9/v1/", "http://127.0.0.1:9/v1"),
        (OpenAIResponses, "OPENAI_BASE_URL", "http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"),
        (Anthropic, "ANTHROPIC_BASE_URL", "http://127.0.0.1:9", "http://127.0.0.1:9"),
        (Gemini, "GEMINI_BASE_URL", "http://127.0.0.1:9/v1beta", "http://127.0.0.1:9/v1beta"),
        # google-genai's variable names the host; the SDK adds the version
        (Gemini, "GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9", "http://127.0.0.1:9/v1beta"),
        (Gemini, "GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"),
    ],
)
def test_base_url_from_environment(
    monkeypatch: pytest.MonkeyPatch, cls: type[Provider], var: str, value: str, expected: str
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(var, value)
    # a server of one's own needs no key, as with base_url=
    assert cls().base_url == expected
    # an explicit base_url wins over the environment
    assert cls(base_url="http://127.0.0.1:7/x").base_url == "http://127.0.0.1:7/x"


def test_blank_base_url_variable_means_the_official_endpoint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "  ")
    assert OpenAIChat(api_key=KEY).base_url == "https://api.openai.com/v1"


def test_extra_fields_are_merged_last() -> None:
    provider = OpenAIChat(api_key=KEY)
    body = provider.build_request(
        model="m",
        messages=[UserMessage("x")],
        stream=True,
        extra={"seed": 7, "stream_options": {"continuous_usage_stats": True}},
    ).json
    assert body["seed"] == 7
    assert body["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}


def test_extra_headers_are_sent() -> None:
    provider = Anthropic(api_key=KEY, headers={"x-trace": "1"})
    assert provider.build_request(model="m", messages=[UserMessage("x")]).headers["x-trace"] == "1"
