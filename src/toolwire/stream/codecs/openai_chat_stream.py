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

import re
from collections.abc import Sequence
from typing import Any, Final

from toolwire.errors import RemoteProtocolError
from toolwire.stream.codecs._args_event import matched_run, string_text
from toolwire.stream.codecs._common import (
    UnreadFields,
    as_int,
    as_list,
    as_obj,
    as_str,
    bad_json,
    error_event,
    finish_part,
    int_or_none,
    meta_part,
    output_with_reasoning,
    token_count,
    unknown_part,
)
from toolwire.stream.codecs.openai_chat_args import learn_openai_head, openai_args_event
from toolwire.stream.codecs.openai_chat_items import CustomCalls, ReasoningDetails
from toolwire.stream.codecs.openai_chat_request import DIALECT_NAME
from toolwire.stream.framing import FramingKind
from toolwire.stream.framing.sse import EventMatcher
from toolwire.stream.jsonio import loads as _exact_loads
from toolwire.stream.jsonio import loads_fast as _loads
from toolwire.stream.parts import (
    ArgsPart,
    CallPart,
    ErrorPart,
    FinishPart,
    Part,
    ReasoningPart,
    StatePart,
    StreamEndPart,
    TextPart,
    UsagePart,
)
from toolwire.types import FinishReason, Usage

__all__ = ["ECHOED_FIELDS", "RAW_FINISH_REASONS", "OpenAIChatCodec", "usage_from_openai"]


RAW_FINISH_REASONS: Final[dict[str, FinishReason]] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
    "eos": "stop",  # vLLM
    "tool_use": "tool_calls",  # Claude behind compatible gateways
    "max_tokens": "length",
    "error": "error",
}
"""Chat Completions ``finish_reason`` values, with the variants compatible
servers send, in toolwire's vocabulary."""

# Reasoning fields some compatible servers return on the assistant message and
# expect to see again (DeepSeek: reasoning_content; OpenRouter: reasoning_details).
ECHOED_FIELDS: Final = ("reasoning_content", "reasoning_details")

_CALL_KEYS = frozenset({"index", "id", "type", "function", "custom"})

# The fields of a message or delta that are read. Groq's "channel" names the
# channel (analysis, final) that reasoning and content already tell apart.
_MESSAGE_KEYS = frozenset(
    {
        "role",
        "content",
        "refusal",
        "reasoning",
        "reasoning_content",
        "reasoning_details",
        "tool_calls",
        "function_call",
        "channel",
        "name",
    }
)

# The members of a chunk (or a whole response) and of a choice that are read,
# or that say nothing (padding: "obfuscation", Mistral's "p"). Any other member
# is handed on as an unknown item (Azure's prompt_filter_results, Groq's x_groq,
# llama.cpp's timings, logprobs...).
_CHUNK_KEYS = frozenset(
    {
        "id",
        "object",
        "created",
        "model",
        "system_fingerprint",
        "service_tier",
        "usage",
        "choices",
        "error",
        "obfuscation",
        "p",
    }
)
_CHOICE_KEYS = frozenset({"index", "delta", "message", "finish_reason"})
_CHOICE_KEYS_AND_LOGPROBS = _CHOICE_KEYS | {"logprobs"}  # most chunks: "logprobs": null

# The deprecated single ``function_call`` delta is tracked under this index.
_LEGACY_INDEX = -1

_LEARNING = 8  # argument chunks read by decode() that may teach args_event


def usage_from_openai(raw: dict[str, Any]) -> Usage:
    """Chat Completions usage (``prompt_tokens``...) as a :class:`Usage`.

    ``output_tokens`` includes reasoning, whatever the server's convention
    (:func:`output_with_reasoning`).
    """
    details = raw.get("completion_tokens_details")
    details = details if isinstance(details, dict) else {}
    prompt_details = raw.get("prompt_tokens_details")
    prompt_details = prompt_details if isinstance(prompt_details, dict) else {}
    cached = token_count(prompt_details, "cached_tokens", DIALECT_NAME, "prompt_tokens_details")
    if cached is None:  # DeepSeek reports its context cache on its own
        cached = token_count(raw, "prompt_cache_hit_tokens", DIALECT_NAME)
    prompt = token_count(raw, "prompt_tokens", DIALECT_NAME)
    completion = token_count(raw, "completion_tokens", DIALECT_NAME)
    reasoning = token_count(details, "reasoning_tokens", DIALECT_NAME, "completion_tokens_details")
    total = token_count(raw, "total_tokens", DIALECT_NAME)
    output, reasoning = output_with_reasoning(prompt, completion, reasoning, total)
    return Usage(
        input_tokens=prompt,
        output_tokens=output,
        total_tokens=total,
        reasoning_tokens=reasoning,
        cached_tokens=cached,
        raw=raw,
    )


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # some servers return content parts
        return "".join(
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


class OpenAIChatCodec:
    """Decodes Chat Completions chunks into parts.

    This is the hot path for the most common dialect (one chunk per token):
    type checks are inlined and fall back to the descriptive helpers only to
    raise their error.
    """

    dialect = DIALECT_NAME
    framings: frozenset[FramingKind] = frozenset({"sse"})

    def __init__(self) -> None:
        self._meta_seen = False
        self.quirks: set[str] = set()
        # Argument chunks are matched once decode() has read one: their members
        # before "choices" (id, model...) are the stream's own.
        self.args_event: EventMatcher | None = None
        self._head = ""
        self._learning = _LEARNING
        self._custom = CustomCalls()
        self._details = ReasoningDetails()
        self._unread = UnreadFields(DIALECT_NAME)

    def args_delta(self, m: re.Match[str]) -> tuple[int, int, str] | None:
        """See :class:`~toolwire.stream.codecs.ArgsEventCodec`: not for a bad escape."""
        choice, index, raw = m.group(2, 3, 4)
        text = raw if "\\" not in raw else string_text(raw)
        return None if text is None else (int(choice), int(index), text)

    def args_run(self, items: Sequence[Any], i: int) -> tuple[int, int, list[str], int] | None:
        return matched_run(self.args_delta(items[i]), items, i, (2, 3), 4)

    def args_frame(self, m: re.Match[str]) -> tuple[str, str]:
        return "message", self._head + m.group(1)

    @staticmethod
    def text_delta(m: re.Match[str]) -> None:
        """Its matcher takes argument deltas only."""
        return None

    def _learn(self, data: str) -> None:
        self._learning -= 1
        head = learn_openai_head(data)
        if head is not None:
            self._learning = 0
            self._head = head
            self.args_event = openai_args_event(head)

    def decode(self, event: str, data: str) -> list[Part]:
        """One SSE event's data (its ``event:`` name in ``event``) to parts."""
        if data[:1] != "{" and data.strip() == "[DONE]":
            parts: list[Part] = []
            self._details.flush(None, parts)
            return [*parts, StreamEndPart()]
        try:
            obj = _loads(data)
        except ValueError as exc:
            raise bad_json(DIALECT_NAME, exc, data) from exc
        if type(obj) is not dict:
            obj = as_obj(obj, f"{DIALECT_NAME}: stream chunk")
        if event == "error" or ("error" in obj and "choices" not in obj):
            return [ErrorPart(error_event(obj, DIALECT_NAME))]
        if obj.get("error"):
            return self._inband_error(obj, data)
        try:
            parts = self._parts(obj, data, exact=False)
        except _ExactNeeded:
            # Arguments sent as an object: parse again, keeping big integers.
            try:
                exact = _exact_loads(data)
            except ValueError as exc:
                raise bad_json(DIALECT_NAME, exc, data) from exc
            return self._parts(exact, data, exact=True)
        if self._learning and len(parts) == 1 and type(parts[0]) is ArgsPart:
            self._learn(data)
        return parts

    def _inband_error(self, obj: dict[str, Any], data: str) -> list[Part]:
        """A chunk with a top-level ``error`` beside its ``choices`` (OpenRouter,
        HTTP 200): the stream failed. Its text and usage are kept; the error
        comes before any call or finish of the chunk, so no call is made ready
        by the chunk that reports the failure."""
        self.quirks.add("in-band error object on a chunk")
        kept = [
            part
            for part in self._parts(obj, data, exact=True)
            if not isinstance(part, CallPart | ArgsPart | FinishPart)
        ]
        return [*kept, ErrorPart(error_event(obj, DIALECT_NAME))]

    def decode_response(self, body: dict[str, Any]) -> list[Part]:
        """A whole ``chat.completion`` object: what its stream would give."""
        choices = body.get("choices")
        if not isinstance(choices, list):
            raise RemoteProtocolError("the response has no 'choices' array")
        parts: list[Part] = [meta_part(body.get("model"), body.get("id"))]
        self._meta_seen = True
        parts += self._unread.parts(body, _CHUNK_KEYS)
        for position, choice in enumerate(choices):
            self._message(as_obj(choice, f"{DIALECT_NAME}: choice"), position, parts)
        usage = body.get("usage")
        if isinstance(usage, dict):
            parts.append(UsagePart(usage_from_openai(usage)))
        parts.append(StreamEndPart())
        return parts

    def _message(self, choice: dict[str, Any], position: int, parts: list[Part]) -> None:
        c = int_or_none(choice.get("index"))
        c = position if c is None else c
        parts += self._unread.parts(choice, _CHOICE_KEYS, c)
        message = choice.get("message")
        message = message if isinstance(message, dict) else {}
        if not _MESSAGE_KEYS.issuperset(message):
            parts += self._unread.parts(message, _MESSAGE_KEYS, c)
        text = _text_of(message.get("content"))
        if text:
            parts.append(TextPart(text, c))
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal:  # as a stream gives it: text
            parts.append(TextPart(refusal, c))
        for key in ("reasoning_content", "reasoning"):
            if isinstance(message.get(key), str) and message[key]:
                parts.append(ReasoningPart(message[key], c))
                break
        fields = {k: message[k] for k in ECHOED_FIELDS if message.get(k) not in (None, "", [])}
        if fields:
            parts.append(StatePart({"type": "message_fields", "fields": fields}, c))
        calls = as_list(message.get("tool_calls"), f"{DIALECT_NAME}: tool_calls")
        if not calls and isinstance(message.get("function_call"), dict):
            calls = [{"function": message["function_call"]}]
        for index, call in enumerate(calls):
            call = as_obj(call, f"{DIALECT_NAME}: tool call")
            if call.get("type") == "custom":
                self._custom.delta({**call, "index": index}, c, parts)
            else:
                parts.append(_whole_call(call, c, index))
            self._call_fields(call, c, parts)
        self._custom.finish(c, parts)
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            parts.append(finish_part(RAW_FINISH_REASONS, finish, c))

    def _parts(self, obj: dict[str, Any], data: str, *, exact: bool) -> list[Part]:
        parts: list[Part] = []
        if not self._meta_seen:
            self._meta_seen = True
            parts.append(meta_part(obj.get("model"), obj.get("id")))
        if not _CHUNK_KEYS.issuperset(obj):
            parts += self._unread.parts(obj, _CHUNK_KEYS)
        choices = obj.get("choices")
        if choices:
            if type(choices) is not list:
                raise RemoteProtocolError(f"{DIALECT_NAME}: 'choices' is not an array", raw=data)
            for choice in choices:
                if type(choice) is not dict:
                    choice = as_obj(choice, f"{DIALECT_NAME}: choice")
                self._choice(choice, parts, exact)
        usage = obj.get("usage")
        if usage:
            parts.append(UsagePart(usage_from_openai(as_obj(usage, f"{DIALECT_NAME}: usage"))))
        return parts

    def _choice(self, choice: dict[str, Any], parts: list[Part], exact: bool) -> None:
        c = choice.get("index", 0)
        if type(c) is not int:
            c = as_int(c, f"{DIALECT_NAME}: choice index") or 0
        if not _CHOICE_KEYS_AND_LOGPROBS.issuperset(choice) or choice.get("logprobs") is not None:
            parts += self._unread.parts(choice, _CHOICE_KEYS, c)
        delta = choice.get("delta")
        if delta is None:
            delta = choice.get("message")  # a few servers send a whole message last
        if delta:
            if type(delta) is not dict:
                delta = as_obj(delta, f"{DIALECT_NAME}: delta")
            tool_calls = delta.get("tool_calls")
            if tool_calls is None or len(delta) > 1:
                self._content(delta, c, parts, tool_calls is not None)
            if tool_calls:
                if type(tool_calls) is not list:
                    tool_calls = [tool_calls]
                for tc in tool_calls:
                    if type(tc) is not dict:
                        tc = as_obj(tc, f"{DIALECT_NAME}: tool call")
                    if "custom" in tc and not tc.get("function"):
                        self._custom.delta(tc, c, parts)
                    else:
                        parts.append(_tool_call(tc, c, exact, self.quirks))
                    if len(tc) > 3:
                        self._call_fields(tc, c, parts)
        finish = choice.get("finish_reason")
        if finish:
            raw = as_str(finish, f"{DIALECT_NAME}: finish_reason") or ""
            self._custom.finish(c, parts)
            self._details.flush(c, parts)
            parts.append(finish_part(RAW_FINISH_REASONS, raw, c))

    def _call_fields(self, tc: dict[str, Any], c: int, parts: list[Part]) -> None:
        """Fields a server sends beside a call (Gemini's ``extra_content`` with
        its thought signature): kept, and sent back with the call."""
        fields = {k: v for k, v in tc.items() if k not in _CALL_KEYS and v is not None}
        if not fields:
            return
        call_id = tc.get("id")
        if not isinstance(call_id, str) or not call_id:
            parts.append(unknown_part(DIALECT_NAME, "tool call fields", fields, self.quirks, c))
            return
        self.quirks.add(f"tool call fields {sorted(fields)}")
        state = {"type": "call_item", "call_id": call_id, "item_type": "function_call"}
        parts.append(StatePart({**state, "chat_fields": fields}, c))

    def _content(
        self, delta: dict[str, Any], c: int, parts: list[Part], with_tool_calls: bool
    ) -> None:
        if not _MESSAGE_KEYS.issuperset(delta):
            parts += self._unread.parts(delta, _MESSAGE_KEYS, c)
        content = delta.get("content")
        if content:
            parts.append(TextPart(as_str(content, f"{DIALECT_NAME}: content") or "", c))
        refusal = delta.get("refusal")
        if refusal:
            parts.append(TextPart(as_str(refusal, f"{DIALECT_NAME}: refusal") or "", c))
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            parts.append(ReasoningPart(as_str(reasoning, f"{DIALECT_NAME}: reasoning") or "", c))
        details = delta.get("reasoning_details")
        if details:
            if isinstance(details, list):
                self._details.add(c, details)
            else:
                kind = "reasoning_details (not an array)"
                parts.append(
                    unknown_part(DIALECT_NAME, kind, {"reasoning_details": details}, self.quirks, c)
                )
        function_call = delta.get("function_call")
        if function_call and with_tool_calls and delta.get("tool_calls"):
            # llama-cpp-python repeats each tool_calls piece as the deprecated
            # function_call in the same delta: the same call, not another one.
            self.quirks.add("legacy function_call beside tool_calls")
        elif function_call:
            # The deprecated single call, from servers that predate tool_calls.
            fn = as_obj(function_call, f"{DIALECT_NAME}: function_call")
            name = as_str(fn.get("name"), f"{DIALECT_NAME}: tool name")
            args = fn.get("arguments")
            if args is None or type(args) is str:
                parts.append(CallPart(c, None, _LEGACY_INDEX, name, args))
            else:
                raise RemoteProtocolError(
                    f"{DIALECT_NAME}: function_call arguments are not a string"
                )


def _whole_call(call: dict[str, Any], c: int, index: int) -> CallPart:
    """A call of a whole message: a new call at its position, complete."""
    fn = as_obj(call.get("function") or {}, f"{DIALECT_NAME}: tool call function")
    part = CallPart(
        c,
        as_str(call.get("id"), f"{DIALECT_NAME}: tool call id"),
        index,
        as_str(fn.get("name"), f"{DIALECT_NAME}: tool name"),
        new=True,
    )
    args = fn.get("arguments")
    if args is None or isinstance(args, str):
        part.args = args
    elif isinstance(args, dict):
        part.args_value = args
    else:
        raise RemoteProtocolError(f"{DIALECT_NAME}: tool call arguments are {type(args).__name__}")
    return part


class _ExactNeeded(Exception):
    """Internal: this chunk must be parsed again with the exact parser."""


def _tool_call(tc: dict[str, Any], c: int, exact: bool, quirks: set[str]) -> CallPart | ArgsPart:
    call_id = tc.get("id")
    if call_id is not None and type(call_id) is not str:
        call_id = as_str(call_id, f"{DIALECT_NAME}: tool call id")
    index = tc.get("index")
    if index is not None and type(index) is not int:
        index = as_int(index, f"{DIALECT_NAME}: tool call index")
    fn = tc.get("function")
    if not fn:
        return CallPart(c, call_id, index)
    if type(fn) is not dict:
        fn = as_obj(fn, f"{DIALECT_NAME}: tool call function")
    name = fn.get("name")
    if name is not None and type(name) is not str:
        name = as_str(name, f"{DIALECT_NAME}: tool name")
    args = fn.get("arguments")
    if type(args) is str and call_id is None and name is None:
        return ArgsPart(c, index, args)
    # Past the common continuation: note what this server does differently.
    if call_id == "":
        quirks.add("empty-string id on continuations")
    if index is None:
        quirks.add("tool call without an index")
    if args is None or type(args) is str:
        return CallPart(c, call_id, index, name, args)
    part = CallPart(c, call_id, index, name)
    if type(args) is dict:
        # Ollama's /v1 and a few others send an object; its numbers must be
        # exact, which the fast parser does not promise for big integers.
        if not exact:
            raise _ExactNeeded
        quirks.add("arguments as a JSON object")
        part.args_value = args
        return part
    raise RemoteProtocolError(
        f"{DIALECT_NAME}: tool call arguments are {type(args).__name__}, expected a string"
    )
