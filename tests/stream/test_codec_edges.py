"""Each codec's less travelled paths: payloads of the wrong shape end in a
typed error that says what was wrong, and the rarer valid shapes read right.

One table per dialect: ``(payload, expected)`` where ``expected`` is either a
fragment of the error message or a check of the result.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from toolwire import RemoteProtocolError, StreamDecoder, StreamErrorEvent, StreamResult
from toolwire.stream.decoder import decode_response


def decode(dialect: str, *payloads: Any, end: bytes = b"") -> StreamResult:
    decoder = StreamDecoder(dialect)
    for payload in payloads:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        line = (data + "\n") if dialect == "ollama-ndjson" else f"data: {data}\n\n"
        decoder.feed(line.encode())
    decoder.feed(end)
    decoder.close()
    return decoder.result()


Check = str | Callable[[StreamResult], bool]


def _check(result: StreamResult, expected: Check) -> None:
    if isinstance(expected, str):
        assert isinstance(result.error, RemoteProtocolError), result
        assert expected in result.error.message
    else:
        assert expected(result), result


def _chat(delta: Any, **choice: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, **choice}]}


CHAT: list[tuple[Any, Check]] = [
    ([1, 2], "expected a JSON object, got list"),
    ({"choices": "x"}, "'choices' is not an array"),
    ({"choices": [7]}, "choice: expected a JSON object"),
    ({"choices": [{"index": "0", "delta": {}}]}, "choice index: expected an integer"),
    (_chat("hi"), "delta: expected a JSON object"),
    (
        _chat(
            {"tool_calls": {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}},
            finish_reason="tool_calls",
        ),
        lambda r: r.tool_calls[0].name == "f",
    ),
    (_chat({"tool_calls": [3]}), "tool call: expected a JSON object"),
    (_chat({"tool_calls": [{"index": 0, "id": 5}]}), "tool call id: expected a string"),
    (
        _chat({"tool_calls": [{"index": 0, "id": "a", "function": {"name": 5}}]}),
        "tool name: expected a string",
    ),
    (
        _chat({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": 4}}]}),
        "arguments are int",
    ),
    (_chat({"function_call": {"name": "f", "arguments": {"a": 1}}}), "not a string"),
    (
        _chat({"refusal": "I can't."}, finish_reason="content_filter"),
        lambda r: (r.text, r.choices[0].finish_reason) == ("I can't.", "content_filter"),
    ),
    (
        _chat({}, finish_reason="something_new"),
        lambda r: (
            (r.choices[0].finish_reason, r.choices[0].raw_finish_reason)
            == ("other", "something_new")
        ),
    ),
    (_chat({}, finish_reason="eos"), lambda r: r.choices[0].finish_reason == "stop"),
    (
        '{"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "function": '
        '{"name": "f", "arguments": {"n": 1' + "0" * 5000 + "}}}]}}]}",
        "more than 4300 digits",
    ),
]

GEMINI: list[tuple[Any, Check]] = [
    (
        {"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}},
        lambda r: isinstance(r.error, StreamErrorEvent) and r.error.status_code == 429,
    ),
    ({"candidates": [{"content": {"parts": [{"text": 3}]}}]}, "text part is not a string"),
    (
        {"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": [1]}}]}}]},
        "args is not an object",
    ),
    (
        {
            "candidates": [
                {"content": {"parts": [{"functionCall": {"partialArgs": [{"jsonPath": "$.a"}]}}]}}
            ]
        },
        "with no function call open",
    ),
    (
        {"promptFeedback": {"blockReason": "SAFETY"}},
        lambda r: r.choices[0].finish_reason == "content_filter",
    ),
]


def _vertex(*items: dict[str, Any]) -> list[dict[str, Any]]:
    opened = {"functionCall": {"name": "f", "willContinue": True}}
    pieces = {"functionCall": {"partialArgs": list(items), "willContinue": True}}
    return [
        {"candidates": [{"content": {"parts": [opened]}}]},
        {"candidates": [{"content": {"parts": [pieces]}}]},
    ]


VERTEX: list[tuple[list[dict[str, Any]], Check]] = [
    (_vertex({"numberValue": 1}), "has no jsonPath"),
    (_vertex({"jsonPath": "a", "numberValue": 1}), "does not start with '$'"),
    (_vertex({"jsonPath": "$.a", "numberValue": "1"}), "numberValue is not a number"),
    (_vertex({"jsonPath": "$.a", "boolValue": 1}), "boolValue is not a boolean"),
    (_vertex({"jsonPath": "$.a"}), "carries no value"),
    (_vertex({"jsonPath": "$.a!", "nullValue": None}), "cannot read jsonPath"),
    (_vertex({"jsonPath": "$", "nullValue": None}), "cannot replace the whole"),
    (
        _vertex({"jsonPath": "$.a", "numberValue": 1}, {"jsonPath": "$.a[0]", "nullValue": None}),
        "indexes a non-array",
    ),
    (_vertex({"jsonPath": "$[0]", "nullValue": None}), "indexes a non-array"),
    (
        _vertex(
            {"jsonPath": "$.a[0]", "nullValue": None}, {"jsonPath": "$.a.b", "nullValue": None}
        ),
        "names a key of a non-object",
    ),
    (
        [
            *_vertex(
                {"jsonPath": "$['a b'].c", "stringValue": "x"},
                {"jsonPath": "$['a b'].c", "stringValue": "y"},
                {"jsonPath": "$.n", "boolValue": True},
            ),
            {
                "candidates": [
                    {"content": {"parts": [{"functionCall": {}}]}, "finishReason": "STOP"}
                ]
            },
        ],
        lambda r: r.tool_calls[0].arguments == {"a b": {"c": "xy"}, "n": True},
    ),
]

OLLAMA: list[tuple[Any, Check]] = [
    ({"error": "model not found"}, lambda r: isinstance(r.error, StreamErrorEvent)),
    (
        {
            "message": {"role": "assistant", "thinking": "hm", "content": "ok"},
            "done": True,
            "done_reason": "stop",
        },
        lambda r: (r.text, r.choices[0].reasoning) == ("ok", "hm"),
    ),
    (
        {
            "message": {"tool_calls": [{"function": {"name": "f", "arguments": '{"a": 1}'}}]},
            "done": True,
        },
        lambda r: r.tool_calls[0].arguments == {"a": 1},
    ),
    (
        {"message": {"tool_calls": [{"function": {"name": "f", "arguments": 2}}]}, "done": True},
        "arguments are not an object",
    ),
]

COHERE: list[tuple[Any, Check]] = [
    (
        {"type": "content-delta", "delta": {"message": {"content": {"text": "hi"}}}},
        lambda r: r.text == "hi",
    ),
    ({"type": "content-delta", "delta": {}}, lambda r: r.text == ""),
    (
        {"type": "content-delta", "delta": {"message": {"content": {"text": 1}}}},
        "text: expected a string",
    ),
    ({"type": "error", "message": "overloaded"}, lambda r: isinstance(r.error, StreamErrorEvent)),
    (
        {
            "type": "message-end",
            "delta": {
                "finish_reason": "MAX_TOKENS",
                "usage": {"tokens": {"input_tokens": 2.0, "output_tokens": None}},
            },
        },
        lambda r: (
            r.choices[0].finish_reason == "length"
            and r.usage is not None
            and r.usage.input_tokens == 2
            and r.usage.output_tokens is None
        ),
    ),
    (
        {
            "type": "message-end",
            "delta": {"usage": {"tokens": {"input_tokens": 2, "output_tokens": True}}},
        },
        "usage.tokens.output_tokens is True, a bool, not a number",
    ),
]


@pytest.mark.parametrize(("payload", "expected"), CHAT)
def test_openai_chat_edges(payload: Any, expected: Check) -> None:
    _check(decode("openai-chat", payload, end=b"data: [DONE]\n\n"), expected)


@pytest.mark.parametrize(("payload", "expected"), GEMINI)
def test_gemini_edges(payload: Any, expected: Check) -> None:
    _check(decode("gemini", payload), expected)


@pytest.mark.parametrize(("payloads", "expected"), VERTEX)
def test_vertex_partial_args_edges(payloads: list[dict[str, Any]], expected: Check) -> None:
    _check(decode("gemini", *payloads), expected)


@pytest.mark.parametrize(("payload", "expected"), OLLAMA)
def test_ollama_edges(payload: Any, expected: Check) -> None:
    _check(decode("ollama-ndjson", payload), expected)


@pytest.mark.parametrize(("payload", "expected"), COHERE)
def test_cohere_edges(payload: Any, expected: Check) -> None:
    _check(decode("cohere-v2", payload), expected)


def test_error_events_of_every_shape_are_typed() -> None:
    for payload in ({"error": "plain text"}, {"error": 42}, {"error": {"message": ""}}):
        result = decode("openai-chat", {**payload})
        assert isinstance(result.error, StreamErrorEvent)
        assert result.error.message


@pytest.mark.parametrize(
    ("dialect", "body", "fragment"),
    [
        (
            "openai-chat",
            {
                "choices": [
                    {
                        "message": {"function_call": {"name": "f", "arguments": "{}"}},
                        "finish_reason": "function_call",
                    }
                ]
            },
            None,
        ),
        (
            "openai-chat",
            {
                "choices": [
                    {"message": {"tool_calls": [{"function": {"name": "f", "arguments": [1]}}]}}
                ]
            },
            "tool call arguments are list",
        ),
        (
            "openai-responses",
            {
                "output": [{"type": "message", "content": [{"type": "refusal", "refusal": "No."}]}],
                "status": "completed",
            },
            None,
        ),
        ("anthropic-messages", {"content": "text"}, "no 'content' array"),
        ("gemini", {"candidates": []}, "no candidates"),
        ("openai-chat", [1], "expected a JSON object"),
    ],
)
def test_whole_responses_read_or_refuse(dialect: str, body: Any, fragment: str | None) -> None:
    result = decode_response(dialect, body)
    if fragment is None:
        assert result.error is None and result.complete
        return
    assert isinstance(result.error, RemoteProtocolError) and fragment in result.error.message
    assert result.choices == () and not result.complete
