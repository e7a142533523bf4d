"""The four wire formats the emulation server speaks.

Theory of operation: a scripted :class:`~toolwire.testing.Turn` is first
rendered into a dialect-neutral :class:`Reply` (templates substituted,
arguments serialized, token counts made up, ids seeded by conversation and
turn). Each encoder turns a ``Reply`` into either a list of :class:`Frame`
(one per streamed event) or a non-streaming JSON body, building every JSON
object with its keys in the order the providers send them (as recorded in
``tests/fixtures/conformance``). Framing comes last, in :meth:`Encoder.frame`,
so that faults (a broken chunk, an error event, a cut) operate on frames and
then on bytes, the way they happen on a real wire.

Key orders and framing follow these recorded traces:

* OpenAI chat: ``openai/chat_parallel_2_mixed_args.sse`` (``usage: null``
  before ``choices`` in delta chunks, after it in the finish chunk; usage chunk
  with ``choices: []``; ``data: [DONE]``).
* OpenAI Responses: ``openai/responses_single_call_numbers.sse`` (``type`` first,
  the other keys sorted; ``sequence_number`` on every event); reasoning text as
  in ``deepseek/responses_api_reasoning_then_call.sse``.
* Anthropic: ``anthropic/text_then_tool_use.sse`` (``ping`` after the first
  ``content_block_start``, written with a space: ``{"type": "ping"}``).
* Gemini: ``gemini/sse_call_with_id.sse`` (``": "`` after keys, ``\\r\\n\\r\\n``
  between events) and ``gemini/json_array_nested_args_with_id.sse`` (a
  pretty-printed array, elements separated by ``\\n,\\r\\n``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from toolwire import _json
from toolwire.testing._parse import ParsedRequest
from toolwire.testing.scenario import hex_token, lower_token, token

__all__ = [
    "ENCODERS",
    "AnthropicEncoder",
    "Encoder",
    "Frame",
    "GeminiEncoder",
    "OpenAIChatEncoder",
    "OpenAIResponsesEncoder",
    "Reply",
    "ReplyCall",
    "fragments",
]


@dataclass(frozen=True, slots=True)
class ReplyCall:
    """A tool call ready to encode."""

    index: int
    name: str
    raw_arguments: str
    """The arguments text as streamed (compact JSON, or the scenario's raw text)."""
    arguments: dict[str, Any] | None
    """The arguments as an object, or ``None`` when the raw text is not a JSON object."""


@dataclass(frozen=True, slots=True)
class Reply:
    """A turn rendered for one request, independent of the dialect."""

    request: ParsedRequest
    turn: int
    reasoning: str
    text: str
    calls: tuple[ReplyCall, ...]
    chunk_size: int
    created: int
    input_tokens: int

    @property
    def seed(self) -> str:
        """Seed of this reply's ids: the same conversation and turn give the same ids."""
        return f"{self.request.api}:{self.request.conversation}:{self.turn}"

    @property
    def output_tokens(self) -> int:
        """A made-up but plausible count: about four characters per token."""
        size = len(self.text) + len(self.reasoning)
        size += sum(len(c.name) + len(c.raw_arguments) for c in self.calls)
        return max(1, size // 4)

    @property
    def reasoning_tokens(self) -> int:
        """The part of :attr:`output_tokens` spent on reasoning."""
        return len(self.reasoning) // 4


@dataclass(frozen=True, slots=True)
class Frame:
    """One streamed event: a JSON payload, an optional SSE event name."""

    payload: Any
    event: str | None = None
    raw: str | None = None
    """Text sent instead of the serialized payload (``[DONE]``, Anthropic's ping)."""


def fragments(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of ``size`` characters (none for empty text)."""
    return [text[i : i + size] for i in range(0, len(text), size)]


class Encoder:
    """Base of the dialect encoders."""

    api: ClassVar[str]
    stream_media_type: str = "text/event-stream; charset=utf-8"
    json_media_type: str = "application/json"

    def stream(self, reply: Reply) -> list[Frame]:
        """The frames of a streamed answer."""
        raise NotImplementedError

    def body(self, reply: Reply) -> dict[str, Any]:
        """The non-streaming answer."""
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The dialect's JSON error body for an HTTP error ``status``."""
        raise NotImplementedError

    def error_frame(self, error: dict[str, Any], sequence_number: int) -> Frame:
        """An in-stream error event, from the fault's ``error_event`` fields."""
        raise NotImplementedError

    def dumps(self, payload: Any) -> str:
        """Serialize one payload as the provider does (compact, raw UTF-8)."""
        return _json.dumps(payload)

    def dumps_body(self, body: Any) -> bytes:
        """Serialize a non-streaming body."""
        return _json.dumps_bytes(body)

    def frame(self, frame: Frame, index: int, *, broken: bool = False) -> bytes:
        """The bytes of frame number ``index``; ``broken`` cuts its JSON in half."""
        text = frame.raw if frame.raw is not None else self.dumps(frame.payload)
        if broken:
            text = text[: len(text) // 2]
        head = f"event: {frame.event}\n" if frame.event is not None else ""
        return f"{head}data: {text}\n\n".encode()

    def trailer(self) -> bytes:
        """Bytes after the last frame (the JSON array's ``]``)."""
        return b""


# ---------------------------------------------------------------------------
# OpenAI Chat Completions


_OPENAI_ERRORS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def _openai_error(status: int, message: str) -> dict[str, Any]:
    kind, code = _OPENAI_ERRORS.get(status, ("server_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _merge_error(defaults: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    merged = dict(defaults)
    merged.update(given)
    return merged


class OpenAIChatEncoder(Encoder):
    """``POST /v1/chat/completions``."""

    api = "openai-chat"

    def _base(self, reply: Reply) -> dict[str, Any]:
        return {
            "id": "chatcmpl-" + token(reply.seed, 29),
            "object": "chat.completion.chunk",
            "created": reply.created,
            "model": reply.request.model,
            "service_tier": "default",
            "system_fingerprint": "fp_" + hex_token(reply.request.model, 10),
        }

    def stream(self, reply: Reply) -> list[Frame]:
        """Role chunk, reasoning, text, tool calls, finish, usage, ``[DONE]``."""
        request = reply.request
        base = self._base(reply)
        frames: list[Frame] = []

        def chunk(delta: dict[str, Any], finish: str | None = None) -> None:
            obj = dict(base)
            # OpenAI puts "usage": null before "choices" in delta chunks and after
            # it in the finish chunk (see the recorded trace).
            if request.include_usage and finish is None:
                obj["usage"] = None
            obj["choices"] = [
                {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            ]
            if request.include_usage and finish is not None:
                obj["usage"] = None
            self._obfuscate(obj, reply, len(frames))
            frames.append(Frame(obj))

        first: dict[str, Any] = {"role": "assistant"}
        if reply.text and not reply.reasoning:
            first.update({"content": "", "refusal": None})
        else:
            first["content"] = None
        if reply.reasoning:
            first["reasoning_content"] = ""
        chunk(first)
        for piece in fragments(reply.reasoning, reply.chunk_size):
            chunk({"content": None, "reasoning_content": piece})
        for piece in fragments(reply.text, reply.chunk_size):
            chunk({"content": piece})
        for call in reply.calls:
            opener = {
                "index": call.index,
                "id": self.call_id(reply, call.index),
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            chunk({"tool_calls": [opener]})
            for piece in fragments(call.raw_arguments, reply.chunk_size):
                chunk({"tool_calls": [{"index": call.index, "function": {"arguments": piece}}]})
        chunk({}, "tool_calls" if reply.calls else "stop")
        if request.include_usage:
            obj = dict(base)
            obj["choices"] = []
            obj["usage"] = self._usage(reply)
            self._obfuscate(obj, reply, len(frames))
            frames.append(Frame(obj))
        frames.append(Frame(None, raw="[DONE]"))
        return frames

    @staticmethod
    def call_id(reply: Reply, index: int) -> str:
        """The id of tool call ``index`` of this reply (``call_`` + 24 characters)."""
        return "call_" + token(f"{reply.seed}:call:{index}", 24)

    @staticmethod
    def _obfuscate(obj: dict[str, Any], reply: Reply, n: int) -> None:
        # OpenAI pads chunks with a random "obfuscation" string unless the client
        # opts out; ours is deterministic.
        if reply.request.include_obfuscation:
            seed = f"{reply.seed}:pad:{n}"
            obj["obfuscation"] = token(seed, int(hex_token(seed, 1), 16))

    @staticmethod
    def _usage(reply: Reply) -> dict[str, Any]:
        return {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": reply.reasoning_tokens,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    def body(self, reply: Reply) -> dict[str, Any]:
        """A ``chat.completion`` object."""
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        if reply.calls:
            message["tool_calls"] = [
                {
                    "id": self.call_id(reply, call.index),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.raw_arguments},
                }
                for call in reply.calls
            ]
        message["refusal"] = None
        message["annotations"] = []
        base = self._base(reply)
        return {
            "id": base["id"],
            "object": "chat.completion",
            "created": reply.created,
            "model": reply.request.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if reply.calls else "stop",
                }
            ],
            "usage": self._usage(reply),
            "service_tier": "default",
            "system_fingerprint": base["system_fingerprint"],
        }

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """``{"error": {"message", "type", "param", "code"}}``."""
        return _openai_error(status, message)

    def error_frame(self, error: dict[str, Any], sequence_number: int) -> Frame:
        """``data: {"error": {...}}`` with no event name, as OpenAI sends it."""
        defaults = _openai_error(500, "The server had an error while processing your request.")
        return Frame({"error": _merge_error(defaults["error"], error)})


# ---------------------------------------------------------------------------
# OpenAI Responses


class OpenAIResponsesEncoder(Encoder):
    """``POST /v1/responses``."""

    api = "openai-responses"

    @staticmethod
    def ids(reply: Reply) -> dict[str, str]:
        """The response, reasoning and message item ids of ``reply``."""
        seed = reply.seed
        return {
            "response": "resp_" + hex_token(seed + ":resp", 50),
            "reasoning": "rs_" + hex_token(seed + ":rs", 50),
            "message": "msg_" + hex_token(seed + ":msg", 50),
        }

    @staticmethod
    def call_ids(reply: Reply, index: int) -> tuple[str, str]:
        """``(item id, call_id)`` of tool call ``index``: ``fc_...`` and ``call_...``."""
        seed = f"{reply.seed}:call:{index}"
        return "fc_" + hex_token(seed, 50), "call_" + token(seed, 24)

    def _response(
        self, reply: Reply, status: str, output: list[Any], *, done: bool
    ) -> dict[str, Any]:
        request = reply.request
        return {
            "id": self.ids(reply)["response"],
            "object": "response",
            "created_at": reply.created,
            "status": status,
            "background": False,
            "completed_at": reply.created if done else None,
            "error": None,
            "frequency_penalty": 0.0,
            "incomplete_details": None,
            "instructions": request.instructions,
            "max_output_tokens": None,
            "max_tool_calls": None,
            "model": request.model,
            "output": output,
            "parallel_tool_calls": True,
            "presence_penalty": 0.0,
            "previous_response_id": None,
            "prompt_cache_key": None,
            "prompt_cache_retention": None,
            "reasoning": {"effort": None, "summary": None},
            "safety_identifier": None,
            "service_tier": "default" if done else "auto",
            "store": True,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": request.tools,
            "top_logprobs": 0,
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": self._usage(reply) if done else None,
            "user": None,
            "metadata": {},
        }

    @staticmethod
    def _usage(reply: Reply) -> dict[str, Any]:
        return {
            "input_tokens": reply.input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": reply.output_tokens,
            "output_tokens_details": {"reasoning_tokens": reply.reasoning_tokens},
            "total_tokens": reply.input_tokens + reply.output_tokens,
        }

    def _items(self, reply: Reply) -> list[dict[str, Any]]:
        """The completed output items, in output order."""
        ids = self.ids(reply)
        items: list[dict[str, Any]] = []
        if reply.reasoning:
            items.append(
                {
                    "id": ids["reasoning"],
                    "type": "reasoning",
                    "status": "completed",
                    "content": [{"type": "reasoning_text", "text": reply.reasoning}],
                    "summary": [],
                }
            )
        if reply.text:
            items.append(
                {
                    "id": ids["message"],
                    "type": "message",
                    "status": "completed",
                    "content": [self._text_part(reply.text)],
                    "role": "assistant",
                }
            )
        for call in reply.calls:
            item_id, call_id = self.call_ids(reply, call.index)
            items.append(
                {
                    "id": item_id,
                    "type": "function_call",
                    "status": "completed",
                    "arguments": call.raw_arguments,
                    "call_id": call_id,
                    "name": call.name,
                }
            )
        return items

    @staticmethod
    def _text_part(text: str) -> dict[str, Any]:
        return {"type": "output_text", "annotations": [], "logprobs": [], "text": text}

    def stream(self, reply: Reply) -> list[Frame]:
        """``response.created`` ... ``response.completed``, one item after another."""
        frames: list[Frame] = []

        def emit(kind: str, **fields: Any) -> None:
            # OpenAI sends "type" first and the other keys sorted.
            payload: dict[str, Any] = {"type": kind}
            fields["sequence_number"] = len(frames)
            for key in sorted(fields):
                payload[key] = fields[key]
            frames.append(Frame(payload, event=kind))

        def pad(n: int) -> str:
            seed = f"{reply.seed}:pad:{n}"
            return token(seed, 6 + int(hex_token(seed, 1), 16) % 10)

        emit("response.created", response=self._response(reply, "in_progress", [], done=False))
        emit("response.in_progress", response=self._response(reply, "in_progress", [], done=False))
        done_items = self._items(reply)
        for output_index, item in enumerate(done_items):
            kind = item["type"]
            if kind == "function_call":
                opened = dict(item, status="in_progress", arguments="")
            else:
                opened = dict(item, status="in_progress", content=[])
            emit("response.output_item.added", item=opened, output_index=output_index)
            item_id = item["id"]
            if kind == "reasoning":
                part = {"type": "reasoning_text", "text": ""}
                emit(
                    "response.content_part.added",
                    content_index=0,
                    item_id=item_id,
                    output_index=output_index,
                    part=part,
                )
                for piece in fragments(reply.reasoning, reply.chunk_size):
                    emit(
                        "response.reasoning_text.delta",
                        content_index=0,
                        delta=piece,
                        item_id=item_id,
                        output_index=output_index,
                    )
                emit(
                    "response.reasoning_text.done",
                    content_index=0,
                    item_id=item_id,
                    output_index=output_index,
                    text=reply.reasoning,
                )
                emit(
                    "response.content_part.done",
                    content_index=0,
                    item_id=item_id,
                    output_index=output_index,
                    part=item["content"][0],
                )
            elif kind == "message":
                emit(
                    "response.content_part.added",
                    content_index=0,
                    item_id=item_id,
                    output_index=output_index,
                    part=self._text_part(""),
                )
                for piece in fragments(reply.text, reply.chunk_size):
                    emit(
                        "response.output_text.delta",
                        content_index=0,
                        delta=piece,
                        item_id=item_id,
                        logprobs=[],
                        obfuscation=pad(len(frames)),
                        output_index=output_index,
                    )
                emit(
                    "response.output_text.done",
                    content_index=0,
                    item_id=item_id,
                    logprobs=[],
                    output_index=output_index,
                    text=reply.text,
                )
                emit(
                    "response.content_part.done",
                    content_index=0,
                    item_id=item_id,
                    output_index=output_index,
                    part=item["content"][0],
                )
            else:
                for piece in fragments(item["arguments"], reply.chunk_size):
                    emit(
                        "response.function_call_arguments.delta",
                        delta=piece,
                        item_id=item_id,
                        obfuscation=pad(len(frames)),
                        output_index=output_index,
                    )
                emit(
                    "response.function_call_arguments.done",
                    arguments=item["arguments"],
                    item_id=item_id,
                    output_index=output_index,
                )
            emit("response.output_item.done", item=item, output_index=output_index)
        emit(
            "response.completed",
            response=self._response(reply, "completed", done_items, done=True),
        )
        return frames

    def body(self, reply: Reply) -> dict[str, Any]:
        """A ``response`` object with status ``completed``."""
        return self._response(reply, "completed", self._items(reply), done=True)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """``{"error": {"message", "type", "param", "code"}}``."""
        return _openai_error(status, message)

    def error_frame(self, error: dict[str, Any], sequence_number: int) -> Frame:
        """``event: error`` with ``{"type": "error", "code", "message", "param", ...}``."""
        payload = _merge_error(
            {
                "type": "error",
                "code": "server_error",
                "message": "The server had an error while processing your request.",
                "param": None,
            },
            {k: v for k, v in error.items() if k != "type"},
        )
        # The event's own "type" is "error"; an error kind given by the fault
        # has no field of its own here, so it stands in for a missing code.
        if error.get("type") and "code" not in error:
            payload["code"] = error["type"]
        payload["sequence_number"] = sequence_number
        return Frame(payload, event="error")


# ---------------------------------------------------------------------------
# Anthropic Messages


_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class AnthropicEncoder(Encoder):
    """``POST /v1/messages``."""

    api = "anthropic-messages"

    @staticmethod
    def message_id(reply: Reply) -> str:
        """``msg_01`` + 22 characters."""
        return "msg_01" + token(reply.seed + ":msg", 22)

    @staticmethod
    def call_id(reply: Reply, index: int) -> str:
        """``toolu_01`` + 22 characters."""
        return "toolu_01" + token(f"{reply.seed}:call:{index}", 22)

    @staticmethod
    def _signature(reply: Reply) -> str:
        return token(reply.seed + ":signature", 88) + "=="

    def _usage(self, reply: Reply, output_tokens: int) -> dict[str, Any]:
        return {
            "input_tokens": reply.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }

    def _message(self, reply: Reply, content: list[Any], *, done: bool) -> dict[str, Any]:
        stop = ("tool_use" if reply.calls else "end_turn") if done else None
        return {
            "id": self.message_id(reply),
            "type": "message",
            "role": "assistant",
            "model": reply.request.model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": self._usage(reply, reply.output_tokens if done else 1),
        }

    def stream(self, reply: Reply) -> list[Frame]:
        """``message_start``, blocks (start, deltas, stop), ``message_delta``, ``message_stop``."""
        frames: list[Frame] = []

        def emit(kind: str, **fields: Any) -> None:
            frames.append(Frame({"type": kind, **fields}, event=kind))

        ping = Frame(None, event="ping", raw='{"type": "ping"}')
        emit("message_start", message=self._message(reply, [], done=False))
        index = 0

        def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
            nonlocal index
            emit("content_block_start", index=index, content_block=start)
            if index == 0:
                frames.append(ping)
            for delta in deltas:
                emit("content_block_delta", index=index, delta=delta)
            emit("content_block_stop", index=index)
            index += 1

        size = reply.chunk_size
        if reply.reasoning:
            deltas = [
                {"type": "thinking_delta", "thinking": p} for p in fragments(reply.reasoning, size)
            ]
            deltas.append({"type": "signature_delta", "signature": self._signature(reply)})
            block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
        if reply.text:
            block(
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": p} for p in fragments(reply.text, size)],
            )
        for call in reply.calls:
            # The first input_json_delta is always empty, as Anthropic sends it.
            pieces = ["", *fragments(call.raw_arguments, size)]
            block(
                {
                    "type": "tool_use",
                    "id": self.call_id(reply, call.index),
                    "name": call.name,
                    "caller": {"type": "direct"},
                    "input": {},
                },
                [{"type": "input_json_delta", "partial_json": p} for p in pieces],
            )
        if index == 0:
            frames.append(ping)
        emit(
            "message_delta",
            delta={"stop_reason": "tool_use" if reply.calls else "end_turn", "stop_sequence": None},
            usage={"output_tokens": reply.output_tokens},
        )
        emit("message_stop")
        return frames

    def body(self, reply: Reply) -> dict[str, Any]:
        """A ``message`` object.

        Raises:
            ValueError: a tool call's raw arguments are not a JSON object, which
                this format cannot carry (the server answers HTTP 500).
        """
        content: list[Any] = []
        if reply.reasoning:
            content.append(
                {
                    "type": "thinking",
                    "thinking": reply.reasoning,
                    "signature": self._signature(reply),
                }
            )
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for call in reply.calls:
            if call.arguments is None:
                raise ValueError(
                    f"tool call {call.name!r} has arguments that are not a JSON object; "
                    "a non-streaming Anthropic message cannot carry them"
                )
            content.append(
                {
                    "type": "tool_use",
                    "id": self.call_id(reply, call.index),
                    "name": call.name,
                    "input": call.arguments,
                }
            )
        return self._message(reply, content, done=True)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """``{"type": "error", "error": {"type", "message"}}``."""
        kind = _ANTHROPIC_ERRORS.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def error_frame(self, error: dict[str, Any], sequence_number: int) -> Frame:
        """``event: error`` with ``{"type": "error", "error": {...}}``."""
        inner = _merge_error({"type": "overloaded_error", "message": "Overloaded"}, error)
        return Frame({"type": "error", "error": inner}, event="error")


# ---------------------------------------------------------------------------
# Gemini


_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


class GeminiEncoder(Encoder):
    """``POST /v1beta/models/{model}:streamGenerateContent`` and ``:generateContent``.

    Args:
        sse: True for ``alt=sse`` (SSE with CRLF separators), False for the
            streamed JSON array.
    """

    api = "gemini"
    json_media_type = "application/json; charset=UTF-8"

    def __init__(self, *, sse: bool = True) -> None:
        self.sse = sse
        self.stream_media_type = "text/event-stream" if sse else self.json_media_type

    @staticmethod
    def call_id(reply: Reply, index: int) -> str:
        """Eight lowercase letters and digits, the shape of Gemini's own ids."""
        return lower_token(f"{reply.seed}:call:{index}", 8)

    def _usage(self, reply: Reply) -> dict[str, Any]:
        usage: dict[str, Any] = {
            "promptTokenCount": reply.input_tokens,
            "candidatesTokenCount": reply.output_tokens - reply.reasoning_tokens,
            "totalTokenCount": reply.input_tokens + reply.output_tokens,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": reply.input_tokens}],
        }
        if reply.reasoning:
            usage["thoughtsTokenCount"] = reply.reasoning_tokens
        return usage

    def _chunk(self, reply: Reply, parts: list[Any] | None, finish: str | None) -> dict[str, Any]:
        candidate: dict[str, Any] = {}
        if parts is not None:
            candidate["content"] = {"parts": parts, "role": "model"}
        if finish is not None:
            candidate["finishReason"] = finish
        candidate["index"] = 0
        return {
            "candidates": [candidate],
            "usageMetadata": self._usage(reply),
            "modelVersion": reply.request.model,
            "responseId": token(reply.seed + ":response", 23),
        }

    def _call_parts(self, reply: Reply) -> list[dict[str, Any]] | str:
        """The functionCall parts, or the raw text of the first malformed call."""
        parts: list[dict[str, Any]] = []
        for call in reply.calls:
            if call.arguments is None:
                return call.raw_arguments
            parts.append(
                {
                    "functionCall": {
                        "name": call.name,
                        "args": call.arguments,
                        "id": self.call_id(reply, call.index),
                    }
                }
            )
        return parts

    def stream(self, reply: Reply) -> list[Frame]:
        """Thought parts, text parts, then each call as one whole ``functionCall`` part."""
        pending: list[list[Any]] = []
        size = reply.chunk_size
        pending.extend([{"text": p, "thought": True}] for p in fragments(reply.reasoning, size))
        pending.extend([{"text": p}] for p in fragments(reply.text, size))
        calls = self._call_parts(reply)
        frames: list[Frame] = []
        if isinstance(calls, str):
            # Gemini refuses to emit a call it cannot parse: the candidate ends
            # with MALFORMED_FUNCTION_CALL and no content.
            frames.extend(Frame(self._chunk(reply, parts, None)) for parts in pending)
            last = self._chunk(reply, None, "MALFORMED_FUNCTION_CALL")
            last["candidates"][0]["finishMessage"] = f"Malformed function call: {calls}"
            frames.append(Frame(last))
            return frames
        pending.extend([part] for part in calls)
        if not pending:
            pending.append([{"text": ""}])
        for n, parts in enumerate(pending):
            finish = "STOP" if n == len(pending) - 1 else None
            frames.append(Frame(self._chunk(reply, parts, finish)))
        return frames

    def body(self, reply: Reply) -> dict[str, Any]:
        """A ``GenerateContentResponse``."""
        parts: list[Any] = []
        if reply.reasoning:
            parts.append({"text": reply.reasoning, "thought": True})
        if reply.text:
            parts.append({"text": reply.text})
        calls = self._call_parts(reply)
        if isinstance(calls, str):
            body = self._chunk(reply, None, "MALFORMED_FUNCTION_CALL")
            body["candidates"][0]["finishMessage"] = f"Malformed function call: {calls}"
            return body
        parts.extend(calls)
        return self._chunk(reply, parts or [{"text": ""}], "STOP")

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """``{"error": {"code", "message", "status"}}``."""
        return {
            "error": {
                "code": status,
                "message": message,
                "status": _GEMINI_STATUS.get(status, "INTERNAL"),
            }
        }

    def error_frame(self, error: dict[str, Any], sequence_number: int) -> Frame:
        """``{"error": {"code", "message", "status"}}`` as one more stream element."""
        defaults = self.error_body(500, "An internal error has occurred.")["error"]
        return Frame({"error": _merge_error(defaults, error)})

    def dumps(self, payload: Any) -> str:
        """Google's style: ``": "`` after keys (SSE) or two-space indentation (array)."""
        if self.sse:
            return json.dumps(payload, ensure_ascii=False, separators=(",", ": "))
        return json.dumps(payload, ensure_ascii=False, indent=2)

    def dumps_body(self, body: Any) -> bytes:
        """Non-streaming bodies are pretty-printed with two spaces."""
        return json.dumps(body, ensure_ascii=False, indent=2).encode()

    def frame(self, frame: Frame, index: int, *, broken: bool = False) -> bytes:
        """``data: ...\\r\\n\\r\\n``, or an element of the JSON array."""
        text = self.dumps(frame.payload)
        if broken:
            text = text[: len(text) // 2]
        if self.sse:
            return f"data: {text}\r\n\r\n".encode()
        return (("[" if index == 0 else "\n,\r\n") + text).encode()

    def trailer(self) -> bytes:
        """The JSON array's closing ``]``."""
        return b"" if self.sse else b"\n]"


ENCODERS: dict[str, type[Encoder]] = {
    "openai-chat": OpenAIChatEncoder,
    "openai-responses": OpenAIResponsesEncoder,
    "anthropic-messages": AnthropicEncoder,
    "gemini": GeminiEncoder,
}
"""Encoder class per API name."""
