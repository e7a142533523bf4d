"""OpenAI Chat Completions streams, and every server that copies them.

OpenAI, Azure, DashScope/Qwen, DeepSeek, vLLM, Ollama's ``/v1``, Groq,
Mistral, xAI, OpenRouter and LM Studio all send ``chat.completion.chunk``
objects as SSE ``data:`` lines ending in ``data: [DONE]``. Their differences
(missing ``index``, 1-based indexes, ``"id": ""`` on continuations, ids and
names repeated whole, arguments as an object, usage-only chunks with
``choices: []``, reasoning as ``reasoning_content`` or ``reasoning``, an
``event: error`` after HTTP 200) are absorbed here and in the accumulator.
Reference: https://platform.openai.com/docs/api-reference/chat-streaming
"""

from __future__ import annotations

from typing import Any

from toolwire.codecs._common import error_event, load_payload
from toolwire.codecs._parts import (
    CallPart,
    ErrorPart,
    FinishPart,
    MetaPart,
    Part,
    ReasoningPart,
    StreamEndPart,
    TextPart,
    UsagePart,
    as_int,
    as_obj,
    as_str,
)
from toolwire.errors import RemoteProtocolError
from toolwire.types import Usage

__all__ = ["OpenAIChatCodec", "normalize_finish_reason", "usage_from_openai"]

API = "openai-chat"

_FINISH = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
    "eos": "stop",
    "tool_use": "tool_calls",
}

# The deprecated single ``function_call`` delta is tracked under this index.
_LEGACY_INDEX = -1


def normalize_finish_reason(raw: str) -> str:
    """OpenAI's finish reasons, with the variants compatible servers send."""
    return _FINISH.get(raw, raw)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usage_from_openai(raw: dict[str, Any]) -> Usage:
    """Chat Completions usage (``prompt_tokens``...) as a :class:`Usage`."""
    details = raw.get("completion_tokens_details")
    prompt_details = raw.get("prompt_tokens_details")
    return Usage(
        input_tokens=_int_or_none(raw.get("prompt_tokens")),
        output_tokens=_int_or_none(raw.get("completion_tokens")),
        total_tokens=_int_or_none(raw.get("total_tokens")),
        reasoning_tokens=_int_or_none(details.get("reasoning_tokens"))
        if isinstance(details, dict)
        else None,
        cached_tokens=_int_or_none(prompt_details.get("cached_tokens"))
        if isinstance(prompt_details, dict)
        else None,
        raw=raw,
    )


class OpenAIChatCodec:
    """Decodes Chat Completions chunks into parts."""

    api = API

    def __init__(self) -> None:
        self._meta_seen = False

    def decode(self, event: str, data: str) -> list[Part]:
        """One SSE event's data (its ``event:`` name in ``event``) to parts."""
        if data == "[DONE]" or data.strip() == "[DONE]":
            return [StreamEndPart()]
        obj = load_payload(data, API)
        if event == "error" or ("error" in obj and "choices" not in obj):
            return [ErrorPart(error_event(obj, API))]
        parts: list[Part] = []
        if not self._meta_seen:
            self._meta_seen = True
            model = obj.get("model")
            rid = obj.get("id")
            parts.append(
                MetaPart(
                    model=model if isinstance(model, str) else None,
                    response_id=rid if isinstance(rid, str) else None,
                )
            )
        choices = obj.get("choices")
        if choices:
            if not isinstance(choices, list):
                raise RemoteProtocolError(f"{API}: 'choices' is not an array", raw=data)
            for choice in choices:
                self._choice(as_obj(choice, f"{API}: choice"), parts)
        usage = obj.get("usage")
        if usage:
            parts.append(UsagePart(usage_from_openai(as_obj(usage, f"{API}: usage"))))
        return parts

    def _choice(self, choice: dict[str, Any], parts: list[Part]) -> None:
        c = as_int(choice.get("index"), f"{API}: choice index") or 0
        delta = choice.get("delta")
        if delta is None:
            delta = choice.get("message")  # a few servers send a whole message last
        if delta:
            delta = as_obj(delta, f"{API}: delta")
            content = delta.get("content")
            if content:
                parts.append(TextPart(as_str(content, f"{API}: content") or "", c))
            refusal = delta.get("refusal")
            if refusal:
                parts.append(TextPart(as_str(refusal, f"{API}: refusal") or "", c))
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning:
                parts.append(ReasoningPart(as_str(reasoning, f"{API}: reasoning") or "", c))
            tool_calls = delta.get("tool_calls")
            if tool_calls:
                if not isinstance(tool_calls, list):
                    tool_calls = [tool_calls]
                for tc in tool_calls:
                    parts.append(self._tool_call(as_obj(tc, f"{API}: tool call"), c))
            function_call = delta.get("function_call")
            if function_call:
                fn = as_obj(function_call, f"{API}: function_call")
                part = _call_part(fn, c)
                part.index = _LEGACY_INDEX
                parts.append(part)
        finish = choice.get("finish_reason")
        if finish:
            raw = as_str(finish, f"{API}: finish_reason") or ""
            parts.append(FinishPart(normalize_finish_reason(raw), raw, c))

    def _tool_call(self, tc: dict[str, Any], c: int) -> CallPart:
        fn = tc.get("function")
        part = _call_part(as_obj(fn, f"{API}: tool call function") if fn else {}, c)
        part.id = as_str(tc.get("id"), f"{API}: tool call id")
        part.index = as_int(tc.get("index"), f"{API}: tool call index")
        return part


def _call_part(fn: dict[str, Any], c: int) -> CallPart:
    part = CallPart(choice=c, name=as_str(fn.get("name"), f"{API}: tool name"))
    args = fn.get("arguments")
    if isinstance(args, str):
        part.args = args
    elif isinstance(args, dict):
        part.args_value = args  # Ollama's /v1 and a few others send an object
    elif args is not None:
        raise RemoteProtocolError(
            f"{API}: tool call arguments are {type(args).__name__}, expected a string"
        )
    return part
