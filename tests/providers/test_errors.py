"""HTTP error responses of each dialect mapped onto toolwire's error tree."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from email.utils import format_datetime
from typing import Any

import pytest

from toolwire import (
    Anthropic,
    Gemini,
    OpenAIChat,
    OpenAIResponses,
    Overloaded,
    ProviderError,
    RateLimited,
)
from toolwire.http import retry_after_seconds
from toolwire.providers import GeminiInteractions, Provider

KEY = "sk-test-SECRET123"


def gemini_error(code: int, status: str, message: str, *details: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status, "details": list(details)}}


# (provider class, status, headers, body, error class, message part, retry_after, code, type)
ERROR_TABLE: list[tuple[Any, ...]] = [
    (
        OpenAIChat,
        429,
        {"retry-after-ms": "1500"},
        {
            "error": {
                "message": "Rate limit reached for gpt-4.1",
                "type": "requests",
                "code": "rate_limit_exceeded",
            }
        },
        RateLimited,
        "Rate limit reached",
        1.5,
        "rate_limit_exceeded",
        "requests",
    ),
    (
        OpenAIChat,
        500,
        {},
        {"error": {"message": "The server had an error", "type": "server_error"}},
        ProviderError,
        "The server had an error",
        None,
        None,
        "server_error",
    ),
    (
        OpenAIChat,
        503,
        {"Retry-After": "7"},
        {"error": {"message": "Service unavailable"}},
        Overloaded,
        "Service unavailable",
        7.0,
        None,
        None,
    ),
    (
        OpenAIChat,  # Ollama
        404,
        {},
        b'{"error":"model \\"llama9\\" not found, try pulling it first"}',
        ProviderError,
        "not found, try pulling it first",
        None,
        None,
        None,
    ),
    (
        OpenAIChat,  # vLLM
        400,
        {},
        {"object": "error", "message": "max_tokens is too large", "type": "BadRequestError"},
        ProviderError,
        "max_tokens is too large",
        None,
        None,
        "BadRequestError",
    ),
    (
        OpenAIChat,  # a proxy's HTML/text page
        502,
        {},
        b"Bad Gateway",
        ProviderError,
        "Bad Gateway",
        None,
        None,
        None,
    ),
    (
        OpenAIResponses,
        400,
        {},
        {
            "error": {
                "message": "No tool output found for function call call_1.",
                "type": "invalid_request_error",
                "param": "input",
                "code": None,
            }
        },
        ProviderError,
        "No tool output found",
        None,
        None,
        "invalid_request_error",
    ),
    (
        Anthropic,
        529,
        {},
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        Overloaded,
        "Overloaded",
        None,
        None,
        "overloaded_error",
    ),
    (
        Anthropic,
        429,
        {"retry-after": "30"},
        {
            "type": "error",
            "error": {"type": "rate_limit_error", "message": "Number of requests exceeded"},
        },
        RateLimited,
        "Number of requests exceeded",
        30.0,
        None,
        "rate_limit_error",
    ),
    (
        Anthropic,
        400,
        {},
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "tool_use ids were found without tool_result blocks",
            },
        },
        ProviderError,
        "without tool_result blocks",
        None,
        None,
        "invalid_request_error",
    ),
    (
        Gemini,
        429,
        {},
        gemini_error(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota",
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"},
        ),
        RateLimited,
        "exceeded your current quota",
        37.0,
        "RESOURCE_EXHAUSTED",
        None,
    ),
    (
        GeminiInteractions,  # the same error bodies as Gemini's
        429,
        {},
        gemini_error(
            429,
            "RESOURCE_EXHAUSTED",
            "You exceeded your current quota",
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "12s"},
        ),
        RateLimited,
        "exceeded your current quota",
        12.0,
        "RESOURCE_EXHAUSTED",
        None,
    ),
    (
        GeminiInteractions,
        503,
        {},
        {"error": {"code": 503, "message": "The model is overloaded."}},  # no status: the code
        Overloaded,
        "The model is overloaded.",
        None,
        "503",
        None,
    ),
    (
        Gemini,
        503,
        {},
        [gemini_error(503, "UNAVAILABLE", "The model is overloaded.")],  # streaming: in an array
        Overloaded,
        "The model is overloaded.",
        None,
        "UNAVAILABLE",
        None,
    ),
    (
        Gemini,
        400,
        {},
        gemini_error(400, "INVALID_ARGUMENT", "Function call is missing a thought_signature"),
        ProviderError,
        "missing a thought_signature",
        None,
        "INVALID_ARGUMENT",
        None,
    ),
]


@pytest.mark.parametrize(
    "row", ERROR_TABLE, ids=[f"{r[0].__name__}-{r[1]}-{i}" for i, r in enumerate(ERROR_TABLE)]
)
def test_error_table(row: tuple[Any, ...]) -> None:
    cls, status, headers, body, error_cls, text, retry_after, code, error_type = row
    provider: Provider = cls(api_key=KEY)
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    error = provider.parse_error(status, headers, raw)
    assert type(error) is error_cls
    assert text in error.message
    assert error.status_code == status
    assert error.provider == provider.name
    assert error.retry_after == retry_after
    assert error.code == code
    assert error.error_type == error_type
    # the provider's payload is kept as received (parsed when it is JSON)
    assert error.body == (body.decode() if body == b"Bad Gateway" else json.loads(raw))
    # an already-parsed body gives the same answer
    if not isinstance(body, bytes):
        assert provider.parse_error(status, headers, body).message == error.message


def test_empty_body_still_gives_a_useful_message() -> None:
    error = Anthropic(api_key=KEY).parse_error(500, {}, b"")
    assert type(error) is ProviderError
    assert "HTTP 500" in error.message and "no error message" in error.message


def test_echoed_key_is_scrubbed_from_the_error() -> None:
    provider = OpenAIChat(api_key=KEY)
    body = {"error": {"message": f"Incorrect API key provided: {KEY}.", "code": "invalid_api_key"}}
    error = provider.parse_error(401, {}, json.dumps(body).encode())
    assert "SECRET123" not in error.message
    assert "SECRET123" not in json.dumps(error.body)
    assert "SECRET123" not in repr(error) and "SECRET123" not in json.dumps(error.to_dict())
    assert "<redacted>" in error.message
    assert error.code == "invalid_api_key"


def test_retry_after_forms() -> None:
    now = 1_700_000_000.0
    date = format_datetime(datetime.fromtimestamp(now + 12, tz=timezone.utc), usegmt=True)
    assert retry_after_seconds({"Retry-After": date}, now=now) == pytest.approx(12.0)
    past = format_datetime(datetime.fromtimestamp(now - 60, tz=timezone.utc), usegmt=True)
    assert retry_after_seconds({"Retry-After": past}, now=now) == 0.0
    assert retry_after_seconds({"retry-after": " 2.5 "}) == 2.5
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after-ms": "junk", "retry-after": "9"}) == 9.0
    for junk in ("soon", "-3", "nan", "inf", ""):
        assert retry_after_seconds({"retry-after": junk}) is None
    assert retry_after_seconds({}) is None


@pytest.mark.parametrize("key", ["a", "ab", "x1"])
def test_a_placeholder_key_does_not_garble_error_messages(key: str) -> None:
    provider = OpenAIChat(api_key=key, base_url="http://127.0.0.1:8080/v1")
    body = b'{"error": {"message": "a model named llama-a is not loaded", "type": "bad"}}'
    error = provider.parse_error(500, {}, body)
    assert "a model named llama-a is not loaded" in error.message
    assert error.body == {
        "error": {"message": "a model named llama-a is not loaded", "type": "bad"}
    }


def test_a_real_key_echoed_in_an_error_is_redacted_where_it_stands() -> None:
    key = "sk-" + "k3y" * 10
    provider = OpenAIChat(api_key=key)
    error = provider.parse_error(401, {}, f'{{"error": {{"message": "bad key {key}"}}}}'.encode())
    assert error.message.endswith("bad key <redacted>")
    assert error.body == {"error": {"message": "bad key <redacted>"}}
