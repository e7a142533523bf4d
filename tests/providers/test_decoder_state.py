"""Provider state as the stream decoder keeps it goes back to the provider, and a
non-streaming response reads the same as its stream.

The streams are real recorded traces from the conformance corpus.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolwire import (
    Anthropic,
    AssistantMessage,
    Gemini,
    OpenAIChat,
    OpenAIResponses,
    StreamDecoder,
    StreamResult,
    ToolResultMessage,
    UserMessage,
)
from toolwire.messages import Message

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "conformance"
KEY = "sk-test-key"


def decode(name: str) -> StreamResult:
    meta = json.loads((CORPUS / f"{name}.json").read_text())
    decoder = StreamDecoder(meta["api"])
    decoder.feed((CORPUS / f"{name}.sse").read_bytes())
    decoder.close()
    return decoder.result()


def decode_bytes(dialect: str, body: bytes) -> StreamResult:
    decoder = StreamDecoder(dialect)
    decoder.feed(body)
    decoder.close()
    return decoder.result()


def follow_up(provider: Any, result: StreamResult) -> dict[str, Any]:
    assistant = AssistantMessage.from_choice(result.choices[0])
    history: list[Message] = [UserMessage("question"), assistant]
    history += [ToolResultMessage(c.id, c.name, "done") for c in assistant.tool_calls]
    body: dict[str, Any] = provider.build_request(model="m", messages=history).json
    return body


def test_anthropic_streamed_thinking_goes_back_before_the_tool_use() -> None:
    result = decode("anthropic/thinking_then_tool_use")
    state = result.choices[0].provider_state
    assert [item["type"] for item in state] == ["thinking"]
    blocks = follow_up(Anthropic(api_key=KEY), result)["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["thinking", "tool_use"]
    assert blocks[0]["signature"] == state[0]["signature"] != ""
    assert blocks[1]["id"] == result.tool_calls[0].id


@pytest.mark.parametrize(
    "name",
    ["gemini/sse_call_thought_signature_then_empty_text", "gemini/json_array_thought_then_call"],
)
def test_gemini_streamed_signature_goes_back_on_its_call(name: str) -> None:
    result = decode(name)
    signature = result.choices[0].provider_state[0]["signature"]
    contents = follow_up(Gemini(api_key=KEY), result)["contents"]
    calls = [p for p in contents[1]["parts"] if "functionCall" in p]
    assert calls[0]["thoughtSignature"] == signature
    assert calls[0]["functionCall"]["name"] == result.tool_calls[0].name
    responses = contents[2]["parts"]
    assert responses[0]["functionResponse"]["name"] == result.tool_calls[0].name


@pytest.mark.parametrize(
    "name",
    ["openai/responses_reasoning_text_then_call", "deepseek/responses_api_reasoning_then_call"],
)
def test_responses_streamed_reasoning_items_go_back_before_the_call(name: str) -> None:
    result = decode(name)
    reasoning = [i for i in result.choices[0].provider_state if i.get("type") == "reasoning"]
    assert reasoning, "the trace has a reasoning item"
    items = follow_up(OpenAIResponses(api_key=KEY), result)["input"]
    kinds = [i.get("type", i.get("role")) for i in items]
    first_call = kinds.index("function_call")
    assert kinds.index("reasoning") < first_call
    assert items[kinds.index("reasoning")] == {
        k: v for k, v in reasoning[0].items() if k != "from_dialect"
    }, "sent back as it came, without toolwire's dialect tag"


def test_deepseek_streamed_reasoning_goes_back_as_reasoning_content() -> None:
    # A streamed turn keeps its reasoning as text only; DeepSeek needs it back.
    assistant = AssistantMessage(
        reasoning="think", tool_calls=tuple(decode("openai/chat_single_call_usage").tool_calls)
    )
    messages: list[Message] = [UserMessage("q"), assistant]
    deepseek = OpenAIChat(api_key=KEY, base_url="https://api.deepseek.com")
    sent = deepseek.build_request(model="m", messages=messages).json["messages"][1]
    assert sent["reasoning_content"] == "think"
    openai = OpenAIChat(api_key=KEY).build_request(model="m", messages=messages).json
    assert "reasoning_content" not in openai["messages"][1]
    forced = OpenAIChat(
        base_url="http://127.0.0.1:1/v1", openai_reasoning_field="reasoning_content"
    ).build_request(model="m", messages=[UserMessage("q"), AssistantMessage(reasoning="r")])
    assert "reasoning_content" not in forced.json["messages"][1]  # no calls: not needed


def _sse(*payloads: dict[str, Any], events: bool = False, done: bool = False) -> bytes:
    out = []
    for payload in payloads:
        head = f"event: {payload['type']}\n" if events else ""
        out.append(f"{head}data: {json.dumps(payload)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def _same_reading(streamed: StreamResult, parsed: StreamResult, *, ids: bool = True) -> None:
    a, b = streamed.choices[0], parsed.choices[0]
    assert (a.text, a.reasoning, a.finish_reason) == (b.text, b.reasoning, b.finish_reason)
    assert a.provider_state == b.provider_state

    def calls(result: StreamResult) -> list[tuple[Any, ...]]:
        return [
            (c.id if ids else None, c.name, c.arguments, c.index, c.minted_id)
            for c in result.tool_calls
        ]

    assert calls(streamed) == calls(parsed)


def test_openai_chat_parse_matches_the_stream() -> None:
    args = '{"city":"Paris"}'
    stream = _sse(
        {
            "id": "c1",
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_1",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": args[:7]},
                            }
                        ],
                    },
                    "finish_reason": None,
                }
            ],
        },
        {
            "id": "c1",
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": args[7:]}}]},
                    "finish_reason": "tool_calls",
                }
            ],
        },
        done=True,
    )
    body = {
        "id": "c1",
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
                            "function": {"name": "get_weather", "arguments": args},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    _same_reading(decode_bytes("openai-chat", stream), OpenAIChat(api_key=KEY).parse_response(body))


def test_anthropic_parse_matches_the_stream() -> None:
    blocks = [
        {"type": "thinking", "thinking": "Plan.", "signature": "sig-1"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
    ]
    stream = _sse(
        {
            "type": "message_start",
            "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
        },
        {"type": "content_block_start", "index": 0, "content_block": {**blocks[0], "thinking": ""}},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Plan."},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": "Checking."},
        },
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {**blocks[2], "input": {}}},
        {
            "type": "content_block_delta",
            "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'},
        },
        {"type": "content_block_stop", "index": 2},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
        events=True,
    )
    body = {"type": "message", "content": blocks, "stop_reason": "tool_use"}
    streamed = decode_bytes("anthropic-messages", stream)
    parsed = Anthropic(api_key=KEY).parse_response(body)
    assert streamed.choices[0].tool_calls[0].arguments == {"city": "Paris"}
    a, b = streamed.choices[0], parsed.choices[0]
    assert (a.text, a.reasoning, a.finish_reason, a.provider_state) == (
        b.text,
        b.reasoning,
        b.finish_reason,
        b.provider_state,
    )
    assert [(c.id, c.name, c.arguments) for c in a.tool_calls] == [
        (c.id, c.name, c.arguments) for c in b.tool_calls
    ]


def test_gemini_parse_matches_the_stream() -> None:
    first = {
        "functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
        "thoughtSignature": "s",
    }
    second = {"functionCall": {"name": "get_time", "args": {}}}
    stream = _sse(
        {"candidates": [{"content": {"role": "model", "parts": [first]}, "index": 0}]},
        {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [second]},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ]
        },
    )
    body = {
        "candidates": [
            {
                "content": {"role": "model", "parts": [first, second]},
                "finishReason": "STOP",
                "index": 0,
            }
        ]
    }
    _same_reading(
        decode_bytes("gemini", stream), Gemini(api_key=KEY).parse_response(body), ids=False
    )
