"""A provider's token counts are validated where they are decoded.

A count that cannot be one (negative, fractional, non-finite, a bool, a
string, past ``MAX_TOKEN_COUNT``) ends the stream with a
``TokenCountInvalid`` naming the field and the value, in every dialect: a
recorded stream of each dialect is decoded with one of its counts replaced.
Before, ``completion_tokens: -100000`` was taken as it came and let a run
through its output budget.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from tests.conftest import CORPUS
from toolwire import StreamDecoder, TokenCountInvalid
from toolwire.stream.codecs.bedrock_stream import usage_from_bedrock
from toolwire.stream.codecs.gemini_interactions import usage_from_interactions
from toolwire.stream.codecs.openai_chat_stream import usage_from_openai
from toolwire.stream.limits import MAX_TOKEN_COUNT

# One recording of each text dialect, and a count its usage sends.
RECORDED = [
    ("openai-chat", "azure/chat_prompt_filter_first_chunk", "completion_tokens"),
    ("openai-responses", "azure/responses_tool_call", "output_tokens"),
    ("anthropic-messages", "anthropic/anthropicsdk_cut_by_max_tokens_mid_input", "output_tokens"),
    ("gemini", "gemini/chatlas_gemini35flash_mixed_tools_call", "candidatesTokenCount"),
    ("ollama-ndjson", "ollama/ndjson_single_call_docs", "eval_count"),
    ("cohere-v2", "cohere/openllmetry_cohere_v2_plan_two_calls", "output_tokens"),
]

# JSON text of a value, and the words of the error's reason.
BAD = [
    ("-100000", "negative"),
    ("-1", "negative"),
    ("2.5", "not a whole number"),
    ("true", "a bool"),
    ('"12"', "a str"),
    ("[1]", "a list"),
    (str(MAX_TOKEN_COUNT + 1), "larger than"),
    ("1e13", "larger than"),
]


def with_count(body: bytes, key: str, text: str) -> bytes:
    """``body`` with every number of ``key`` replaced by the JSON ``text``."""
    pattern = rb'("' + re.escape(key.encode()) + rb'"\s*:\s*)-?[0-9][0-9.eE+-]*'
    changed, n = re.subn(pattern, lambda m: m.group(1) + text.encode(), body)
    assert n, f"the recording sends no {key}"
    return changed


def decoded(dialect: str, body: bytes) -> Any:
    decoder = StreamDecoder(dialect)
    decoder.feed(body)
    decoder.close()
    return decoder.result()


@pytest.mark.parametrize(("dialect", "name", "key"), RECORDED, ids=[r[0] for r in RECORDED])
@pytest.mark.parametrize(("text", "why"), BAD, ids=[b[0] for b in BAD])
def test_a_count_that_is_not_one_is_a_typed_error(
    dialect: str, name: str, key: str, text: str, why: str
) -> None:
    body = (CORPUS / f"{name}.sse").read_bytes()
    assert decoded(dialect, body).error is None, "the recording itself decodes"
    result = decoded(dialect, with_count(body, key, text))
    error = result.error
    assert isinstance(error, TokenCountInvalid), result
    assert error.field.split(".")[-1] == key
    assert key in error.message and why in error.message
    assert error.to_dict()["type"] == "token_count_invalid"


@pytest.mark.parametrize(("dialect", "name", "key"), RECORDED, ids=[r[0] for r in RECORDED])
@pytest.mark.parametrize("text", ["0", "7.0", str(MAX_TOKEN_COUNT)])
def test_a_count_is_read(dialect: str, name: str, key: str, text: str) -> None:
    body = with_count((CORPUS / f"{name}.sse").read_bytes(), key, text)
    result = decoded(dialect, body)
    assert not isinstance(result.error, TokenCountInvalid), result.error
    assert result.usage is not None
    counts = [v for v in result.usage.to_dict().values() if v is not None]
    assert all(type(v) is int for v in counts)


def test_the_reviewed_negative_completion_count_ends_the_stream() -> None:
    # The review's stream: an answer, then usage with -100000 output tokens.
    chunk = (
        b'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":'
        b'[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'
        b'data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[],'
        b'"usage":{"prompt_tokens":20,"completion_tokens":-100000,"total_tokens":-99980}}\n\n'
        b"data: [DONE]\n\n"
    )
    result = decoded("openai-chat", chunk)
    assert isinstance(result.error, TokenCountInvalid)
    assert result.error.field == "completion_tokens" and result.error.value == -100000
    assert "completion_tokens is -100000, negative" in result.error.message
    assert result.usage is None or result.usage.output_tokens != -100000


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, -0.5, False])
def test_counts_from_sdk_objects_are_checked_too(value: float) -> None:
    # An SDK's object can hold what JSON cannot (NaN, infinity).
    with pytest.raises(TokenCountInvalid, match=r"prompt_tokens_details\.cached_tokens"):
        usage_from_openai({"prompt_tokens": 3, "prompt_tokens_details": {"cached_tokens": value}})
    with pytest.raises(TokenCountInvalid, match="outputTokens"):
        usage_from_bedrock({"inputTokens": 3, "outputTokens": value})
    with pytest.raises(TokenCountInvalid, match=r"usage\.total_thought_tokens"):
        usage_from_interactions({"total_input_tokens": 3, "total_thought_tokens": value})


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        # (prompt, completion, reasoning, total) -> (output, reasoning)
        ((10, 30, 20, 40), (30, 20)),  # OpenAI: reasoning inside completion
        ((10, 30, 20, 60), (50, 20)),  # xAI: reasoning left out of completion
        ((10, 30, 40, None), (70, 40)),  # no total: a part past its whole was left out
        ((10, 30, 20, None), (30, 20)),
        ((43, 10, 11, 53), (10, 10)),  # OpenRouter's MiniMax: the total says 10
        ((10, 30, 20, 99), (30, 20)),  # a total that fits neither: as sent
        ((10, 30, None, 40), (30, None)),
        ((None, 30, 40, 70), (30, 30)),
    ],
)
def test_reasoning_is_counted_in_the_output(
    counts: tuple[int | None, ...], expected: tuple[int | None, int | None]
) -> None:
    prompt, completion, reasoning, total = counts
    raw: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion}
    raw["total_tokens"] = total
    raw["completion_tokens_details"] = {"reasoning_tokens": reasoning}
    usage = usage_from_openai(raw)
    assert (usage.output_tokens, usage.reasoning_tokens) == expected


@pytest.mark.parametrize(
    ("dialect", "name"),
    [
        ("cohere-v2", "cohere/openllmetry_cohere_v2_plan_two_calls"),
        ("ollama-ndjson", "ollama/ndjson_single_call_docs"),
    ],
)
def test_a_total_of_zero_counts_is_zero(dialect: str, name: str) -> None:
    # The dialects that send no total: it is the sum of what came, and zero
    # counts make a total of 0 (Cohere's was unknown, as if none had come).
    body = (CORPUS / f"{name}.sse").read_bytes()
    for key in ("input_tokens", "output_tokens", "prompt_eval_count", "eval_count"):
        if key.encode() in body:
            body = with_count(body, key, "0")
    usage = decoded(dialect, body).usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (0, 0, 0)
