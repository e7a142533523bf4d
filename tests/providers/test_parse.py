"""Non-streaming responses: parsed into the same StreamResult the stream decoder gives,
and provider state carried into the next request."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire import (
    Anthropic,
    AssistantMessage,
    Gemini,
    OpenAIChat,
    OpenAIResponses,
    ProviderError,
    RemoteProtocolError,
    StreamResult,
    ToolResultMessage,
    UserMessage,
)
from toolwire.messages import Message

KEY = "sk-test-key"


def next_request_body(provider: Any, result: StreamResult, **kwargs: Any) -> dict[str, Any]:
    """Build the request that follows ``result``: its turn, then one result per call."""
    choice = result.choices[0]
    assistant = AssistantMessage.from_choice(choice)
    history: list[Message] = [UserMessage("Weather in Paris, and the time?"), assistant]
    history += [ToolResultMessage(c.id, c.name, f"result {c.name}") for c in assistant.tool_calls]
    body: dict[str, Any] = provider.build_request(model="m", messages=history, **kwargs).json
    return body


# -- OpenAI chat completions ---------------------------------------------------

CHAT_PARALLEL = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-4.1-2025-04-14",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "get_time", "arguments": ""},
                    },
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {
        "prompt_tokens": 50,
        "completion_tokens": 20,
        "total_tokens": 70,
        "prompt_tokens_details": {"cached_tokens": 10},
        "completion_tokens_details": {"reasoning_tokens": 0},
    },
}


def test_openai_chat_parallel_calls() -> None:
    result = OpenAIChat(api_key=KEY).parse_response(CHAT_PARALLEL)
    assert result.dialect == "openai-chat"
    assert result.error is None and result.complete
    assert (result.model, result.response_id) == ("gpt-4.1-2025-04-14", "chatcmpl-1")
    choice = result.choices[0]
    assert [(c.id, c.name, c.arguments, c.index) for c in result.tool_calls] == [
        ("call_1", "get_weather", {"city": "Paris"}, 0),
        ("call_2", "get_time", {}, 1),
    ]
    assert result.tool_calls[0].raw_arguments == '{"city":"Paris"}'
    assert not any(c.minted_id for c in result.tool_calls)
    assert choice.text == ""
    assert choice.finish_reason == "tool_calls"
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.total_tokens) == (
        50,
        20,
        70,
    )
    assert (result.usage.cached_tokens, result.usage.reasoning_tokens) == (10, 0)


def test_openai_chat_text_answer_and_finish_reasons() -> None:
    provider = OpenAIChat(api_key=KEY)

    def body(finish: str | None, **message: Any) -> dict[str, Any]:
        msg = {"role": "assistant", "content": "Hi."} | message
        return {"choices": [{"index": 0, "message": msg, "finish_reason": finish}]}

    assert provider.parse_response(body("stop")).choices[0].finish_reason == "stop"
    assert provider.parse_response(body("length")).choices[0].finish_reason == "length"
    filtered = provider.parse_response(body("content_filter")).choices[0]
    assert filtered.finish_reason == "content_filter"
    assert provider.parse_response(body("stop")).text == "Hi."
    # servers that say "stop" after calls (Ollama, some vLLM builds)
    with_call = body("stop", tool_calls=[{"id": "c", "function": {"name": "f", "arguments": "{}"}}])
    choice = provider.parse_response(with_call).choices[0]
    assert (choice.finish_reason, choice.raw_finish_reason) == ("tool_calls", "stop")
    parts = body("stop", content=[{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])
    assert provider.parse_response(parts).text == "ab"


def test_openai_chat_bad_calls_are_kept_not_dropped() -> None:
    body = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {"id": "c1", "function": {"name": "f", "arguments": '{"x": '}},
                        {"id": "c2", "function": {"name": "f", "arguments": "[1, 2]"}},
                        {"id": "c3", "function": {"arguments": "{}"}},
                        {"function": {"name": "g", "arguments": {"already": "object"}}},
                        {"id": "c5", "function": {"name": "h", "arguments": "null"}},
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    choice = OpenAIChat(api_key=KEY).parse_response(body).choices[0]
    invalid = {c.id: c for c in choice.invalid_tool_calls}
    assert set(invalid) == {"c1", "c2", "c3"}
    assert "not valid JSON" in invalid["c1"].error and invalid["c1"].raw_arguments == '{"x": '
    assert "must be a JSON object" in invalid["c2"].error
    assert invalid["c3"].error == "the tool call has no name"
    good = {c.name: c for c in choice.tool_calls}
    assert good["g"].arguments == {"already": "object"} and good["g"].minted_id
    assert good["g"].id.startswith("call_") and len(good["g"].id) > 10
    assert good["h"].arguments == {}
    assert [c.index for c in choice.tool_calls] == [3, 4]


def test_openai_chat_deepseek_reasoning_round_trip() -> None:
    body = {
        "id": "d1",
        "model": "deepseek-v4-pro",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "",
                    "reasoning_content": "I should call the weather tool.",
                    "tool_calls": [
                        {
                            "id": "call_0",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 9, "prompt_cache_hit_tokens": 3},
    }
    provider = OpenAIChat(api_key=KEY, base_url="https://api.deepseek.com/v1", name="deepseek")
    result = provider.parse_response(body)
    assert result.choices[0].reasoning == "I should call the weather tool."
    assert result.usage is not None and result.usage.cached_tokens == 3
    sent = next_request_body(provider, result)["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
            }
        ],
        "reasoning_content": "I should call the weather tool.",
    }
    assert sent[2] == {"role": "tool", "tool_call_id": "call_0", "content": "result get_weather"}


@pytest.mark.parametrize(
    "body",
    [
        [],
        "text",
        {"choices": "nope"},
        {"object": "chat.completion"},
        {"choices": [42]},
    ],
)
def test_openai_chat_malformed_bodies_give_a_typed_error(body: Any) -> None:
    result = OpenAIChat(api_key=KEY).parse_response(body)
    assert isinstance(result.error, RemoteProtocolError)
    assert result.choices == () and not result.complete
    with pytest.raises(RemoteProtocolError):
        result.raise_for_error()


def test_openai_chat_error_object_with_status_200() -> None:
    body = {"error": {"message": "Provider returned error", "code": 502}}
    result = OpenAIChat(api_key=KEY, base_url="https://openrouter.ai/api/v1").parse_response(body)
    assert isinstance(result.error, ProviderError)
    assert "Provider returned error" in result.error.message


# -- OpenAI Responses ------------------------------------------------------------

RESPONSES_INTERLEAVED = {
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "model": "gpt-5",
    "output": [
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Need the weather."}],
            "encrypted_content": "enc-1",
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": '{"city":"Paris"}',
            "status": "completed",
        },
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "enc-2"},
        {
            "type": "function_call",
            "id": "fc_2",
            "call_id": "call_2",
            "name": "get_time",
            "arguments": "{}",
            "status": "completed",
        },
    ],
    "usage": {
        "input_tokens": 30,
        "input_tokens_details": {"cached_tokens": 4},
        "output_tokens": 40,
        "output_tokens_details": {"reasoning_tokens": 25},
        "total_tokens": 70,
    },
}


def test_openai_responses_parallel_calls_and_reasoning() -> None:
    result = OpenAIResponses(api_key=KEY).parse_response(RESPONSES_INTERLEAVED)
    choice = result.choices[0]
    assert [(c.id, c.name, c.arguments, c.index) for c in choice.tool_calls] == [
        ("call_1", "get_weather", {"city": "Paris"}, 0),
        ("call_2", "get_time", {}, 1),
    ]
    assert choice.reasoning == "Need the weather."
    assert choice.finish_reason == "tool_calls"
    assert result.usage is not None
    assert (result.usage.reasoning_tokens, result.usage.cached_tokens) == (25, 4)
    assert result.response_id == "resp_1"


def test_openai_responses_reasoning_items_go_back_in_place() -> None:
    provider = OpenAIResponses(api_key=KEY)
    result = provider.parse_response(RESPONSES_INTERLEAVED)
    items = next_request_body(provider, result)["input"]
    kinds = [(i.get("type"), i.get("id") or i.get("call_id")) for i in items[1:]]
    assert kinds == [
        ("reasoning", "rs_1"),
        ("function_call", "call_1"),
        ("reasoning", "rs_2"),
        ("function_call", "call_2"),
        ("function_call_output", "call_1"),
        ("function_call_output", "call_2"),
    ]
    assert items[1]["encrypted_content"] == "enc-1"


def test_openai_responses_text_incomplete_failed_and_hosted_tools() -> None:
    provider = OpenAIResponses(api_key=KEY)
    text = {
        "status": "completed",
        "output": [
            {
                "type": "web_search_call",
                "id": "ws_1",
                "status": "completed",
                "action": {"type": "search", "query": "paris weather"},
            },
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}],
            },
        ],
    }
    choice = provider.parse_response(text).choices[0]
    assert (choice.text, choice.finish_reason) == ("Sunny.", "stop")
    assert [(s.id, s.type) for s in choice.server_tool_calls] == [("ws_1", "web_search_call")]
    assert choice.server_tool_calls[0].arguments["query"] == "paris weather"
    cut = {
        "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [],
    }
    assert provider.parse_response(cut).choices[0].finish_reason == "length"
    failed = {
        "status": "failed",
        "error": {"code": "server_error", "message": "The model failed."},
        "output": [],
    }
    result = provider.parse_response(failed)
    assert isinstance(result.error, ProviderError)
    assert result.error.code == "server_error"
    assert result.choices[0].finish_reason == "error"
    refusal = {
        "status": "completed",
        "output": [{"type": "message", "content": [{"type": "refusal", "refusal": "No."}]}],
    }
    assert provider.parse_response(refusal).choices[0].finish_reason == "refusal"
    broken = provider.parse_response({"status": "completed"})
    assert isinstance(broken.error, RemoteProtocolError)


# -- Anthropic -------------------------------------------------------------------

ANTHROPIC_THINKING = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [
        {"type": "thinking", "thinking": "Two lookups.", "signature": "sig-1"},
        {"type": "text", "text": "Checking both."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}},
    ],
    "stop_reason": "tool_use",
    "usage": {
        "input_tokens": 100,
        "cache_read_input_tokens": 20,
        "cache_creation_input_tokens": 5,
        "output_tokens": 30,
    },
}


def test_anthropic_parallel_calls_thinking_and_usage() -> None:
    result = Anthropic(api_key=KEY).parse_response(ANTHROPIC_THINKING)
    choice = result.choices[0]
    assert [(c.id, c.name, c.arguments, c.index) for c in choice.tool_calls] == [
        ("toolu_1", "get_weather", {"city": "Paris"}, 0),
        ("toolu_2", "get_time", {}, 1),
    ]
    assert (choice.text, choice.reasoning) == ("Checking both.", "Two lookups.")
    assert (choice.finish_reason, choice.raw_finish_reason) == ("tool_calls", "tool_use")
    assert result.usage is not None
    assert result.usage.input_tokens == 125  # fresh + cache reads + cache writes
    assert (result.usage.cached_tokens, result.usage.total_tokens) == (20, 155)


def test_anthropic_thinking_blocks_go_back_before_their_tool_use() -> None:
    provider = Anthropic(api_key=KEY)
    result = provider.parse_response(ANTHROPIC_THINKING)
    wire = next_request_body(provider, result)["messages"]
    assert wire[1]["content"] == ANTHROPIC_THINKING["content"]  # byte for byte, in order
    assert [b["tool_use_id"] for b in wire[2]["content"]] == ["toolu_1", "toolu_2"]
    # Anthropic state means nothing to another provider: it is not sent there.
    gemini_body = next_request_body(Gemini(api_key=KEY), result)
    assert "signature" not in str(gemini_body) and "opaque" not in str(gemini_body)


def test_anthropic_stop_reasons_server_tools_and_errors() -> None:
    provider = Anthropic(api_key=KEY)

    def message(stop: str, *blocks: dict[str, Any]) -> dict[str, Any]:
        return {"type": "message", "content": list(blocks), "stop_reason": stop}

    text = {"type": "text", "text": "Done."}
    assert provider.parse_response(message("end_turn", text)).choices[0].finish_reason == "stop"
    assert provider.parse_response(message("max_tokens", text)).choices[0].finish_reason == "length"
    refusal = provider.parse_response(message("refusal", text)).choices[0]
    assert refusal.finish_reason == "refusal"
    pause = provider.parse_response(message("pause_turn", text)).choices[0]
    assert (pause.finish_reason, pause.raw_finish_reason) == ("paused", "pause_turn")
    search = message(
        "end_turn",
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "q"},
        },
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        text,
    )
    choice = provider.parse_response(search).choices[0]
    assert [(s.id, s.name, s.arguments) for s in choice.server_tool_calls] == [
        ("srvtoolu_1", "web_search", {"query": "q"})
    ]
    assert choice.tool_calls == ()
    # The server tool and its result go back before the text, as they came.
    assert [item["type"] for item in choice.provider_state] == [
        "server_tool_use",
        "web_search_tool_result",
    ]
    assert "after_text" not in choice.provider_state[1]
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert isinstance(provider.parse_response(error).error, ProviderError)
    broken = provider.parse_response({"type": "message", "content": "x"})
    assert isinstance(broken.error, RemoteProtocolError)


# -- Gemini --------------------------------------------------------------------

GEMINI_PARALLEL = {
    "candidates": [
        {
            "content": {
                "role": "model",
                "parts": [
                    {"text": "Planning the calls.", "thought": True, "thoughtSignature": "sig-t"},
                    {
                        "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                        "thoughtSignature": "sig-a",
                    },
                    {"functionCall": {"name": "get_time", "args": {}}},
                ],
            },
            "finishReason": "STOP",
            "index": 0,
        }
    ],
    "usageMetadata": {
        "promptTokenCount": 40,
        "candidatesTokenCount": 12,
        "thoughtsTokenCount": 30,
        "totalTokenCount": 82,
    },
    "modelVersion": "gemini-2.5-flash",
    "responseId": "r-1",
}


def test_gemini_parallel_calls_get_minted_ids() -> None:
    result = Gemini(api_key=KEY).parse_response(GEMINI_PARALLEL)
    choice = result.choices[0]
    assert [(c.name, c.arguments, c.index, c.minted_id) for c in choice.tool_calls] == [
        ("get_weather", {"city": "Paris"}, 0, True),
        ("get_time", {}, 1, True),
    ]
    assert len({c.id for c in choice.tool_calls}) == 2
    assert (choice.finish_reason, choice.raw_finish_reason) == ("tool_calls", "STOP")
    assert choice.reasoning == "Planning the calls."
    assert result.usage is not None
    assert (result.usage.output_tokens, result.usage.reasoning_tokens) == (42, 30)
    assert (result.model, result.response_id) == ("gemini-2.5-flash", "r-1")


def test_gemini_thought_signatures_go_back_on_their_parts() -> None:
    provider = Gemini(api_key=KEY)
    result = provider.parse_response(GEMINI_PARALLEL)
    contents = next_request_body(provider, result)["contents"]
    # The same state as the stream decoder keeps: a call's signature by call
    # position, a thought's without one (the thought text itself is not
    # needed back, its signature is).
    assert result.choices[0].provider_state == (
        {"type": "thought_signature", "signature": "sig-t", "from_dialect": "gemini"},
        {"type": "thought_signature", "call": 0, "signature": "sig-a", "from_dialect": "gemini"},
    )
    assert contents[1] == {
        "role": "model",
        "parts": [
            {"text": "", "thoughtSignature": "sig-t"},
            {
                "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                "thoughtSignature": "sig-a",
            },
            {"functionCall": {"name": "get_time", "args": {}}},
        ],
    }
    # minted ids never reach Gemini; results are matched by name and order
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "get_weather", "response": {"output": "result get_weather"}}},
        {"functionResponse": {"name": "get_time", "response": {"output": "result get_time"}}},
    ]


def test_gemini_text_signature_and_finish_reasons() -> None:
    provider = Gemini(api_key=KEY)

    def body(finish: str, *parts: dict[str, Any]) -> dict[str, Any]:
        return {"candidates": [{"content": {"parts": list(parts)}, "finishReason": finish}]}

    signed = provider.parse_response(body("STOP", {"text": "Hi.", "thoughtSignature": "sig-x"}))
    assert signed.text == "Hi."
    message = AssistantMessage.from_choice(signed.choices[0])
    wire = provider.build_request(model="m", messages=[UserMessage("a"), message]).json
    assert wire["contents"][1]["parts"] == [{"text": "Hi.", "thoughtSignature": "sig-x"}]
    assert provider.parse_response(body("MAX_TOKENS", {"text": "a"})).choices[0].finish_reason == (
        "length"
    )
    assert provider.parse_response(body("SAFETY")).choices[0].finish_reason == "content_filter"
    odd = provider.parse_response(body("MALFORMED_FUNCTION_CALL")).choices[0]
    assert (odd.finish_reason, odd.raw_finish_reason) == ("error", "MALFORMED_FUNCTION_CALL")
    blocked = provider.parse_response({"promptFeedback": {"blockReason": "SAFETY"}})
    assert blocked.choices[0].finish_reason == "content_filter"
    assert isinstance(provider.parse_response({"candidates": []}).error, RemoteProtocolError)
    assert isinstance(provider.parse_response({"candidates": [1]}).error, RemoteProtocolError)
