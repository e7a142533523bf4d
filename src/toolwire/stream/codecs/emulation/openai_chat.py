"""The emulation server's OpenAI Chat Completions encoder.

Key orders and framing follow ``openai/chat_parallel_2_mixed_args.sse``: ``usage: null``
before ``choices`` in delta chunks, after it in the finish chunk; a usage chunk
with ``choices: []``; ``data: [DONE]``.
"""

from __future__ import annotations

from typing import Any

from toolwire.stream.codecs._reading import as_object, model_of, text_of
from toolwire.stream.codecs.emulation._base import (
    Encoder,
    Frame,
    Reply,
    ReplyCall,
    fragments,
    hex_token,
    merge_error,
    openai_error,
    token,
)
from toolwire.stream.codecs.emulation._request import (
    BadRequest,
    History,
    ParsedRequest,
    get_bool,
    get_list,
    looks_like_error,
)

__all__ = ["OpenAIChatEncoder"]


class OpenAIChatEncoder(Encoder):
    """``POST /v1/chat/completions``."""

    dialect = "openai-chat"

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
            for entry in self._call_entries(reply, call):
                chunk({"tool_calls": [entry]})
        chunk({}, reply.finish or ("tool_calls" if reply.calls else "stop"))
        if request.include_usage:
            obj = dict(base)
            obj["choices"] = []
            obj["usage"] = self._usage(reply)
            self._obfuscate(obj, reply, len(frames))
            frames.append(Frame(obj))
        frames.append(Frame(None, raw="[DONE]"))
        return frames

    def _call_entries(self, reply: Reply, call: ReplyCall) -> list[dict[str, Any]]:
        """A call's ``tool_calls`` entries, one per chunk: the opener, then
        its argument fragments; with the reply's quirks, as the servers known
        for them send it (vLLM's and SGLang's repeated object and split call
        under speculative decoding, llama.cpp's merged opener, Ollama's
        object arguments, missing ids)."""
        quirks = reply.quirks
        kind, field = ("custom", "input") if call.custom else ("function", "arguments")
        opener: dict[str, Any] = {
            "index": call.index,
            "id": self.call_id(reply, call.index),
            "type": kind,
            kind: {"name": call.name, field: ""},
            **call.fields,
        }
        if "missing_ids" in quirks:
            del opener["id"]
        if "object_arguments" in quirks and not call.custom and call.arguments is not None:
            opener[kind][field] = call.arguments
            return [opener]
        pieces = fragments(call.raw_arguments, reply.chunk_size)
        if "repeated_object" in quirks and pieces:
            pieces[-1] += call.raw_arguments
        if "merged_opener" in quirks and pieces:
            opener[kind][field] = pieces.pop(0)
        entries = [opener]
        half = (len(pieces) + 1) // 2
        for n, piece in enumerate(pieces):
            split = "split_call" in quirks and call.index == 0 and 0 < half <= n
            index = call.index + 1 if split else call.index
            entries.append({"index": index, kind: {field: piece}})
        return entries

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
                    "type": "custom",
                    "custom": {"name": call.name, "input": call.raw_arguments},
                }
                if call.custom
                else {
                    "id": self.call_id(reply, call.index),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.raw_arguments},
                    **call.fields,
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
        return openai_error(status, message)

    def error_frame(self, error: dict[str, Any], sequence_number: int) -> Frame:
        """``data: {"error": {...}}`` with no event name, as OpenAI sends it."""
        defaults = openai_error(500, "The server had an error while processing your request.")
        return Frame({"error": merge_error(defaults["error"], error)})


# -- requests ---------------------------------------------------------------------


def decode_request(
    data: dict[str, Any], model: str | None = None, stream: bool | None = None
) -> ParsedRequest:
    """What the emulation server reads of a ``/chat/completions`` request."""
    messages = get_list(data, "messages")
    history = History()
    for i, raw in enumerate(messages):
        message = as_object(raw, f"messages[{i}]")
        role = message.get("role")
        if not isinstance(role, str):
            raise BadRequest(f"messages[{i}].role must be a string")
        if role == "assistant":
            history.assistant()
            for call in message.get("tool_calls") or []:
                if isinstance(call, dict):
                    function = call.get("function") or call.get("custom")
                    if isinstance(call.get("id"), str) and isinstance(function, dict):
                        history.names[call["id"]] = str(function.get("name"))
        elif role == "tool":
            call_id = message.get("tool_call_id")
            if not isinstance(call_id, str):
                raise BadRequest(f"messages[{i}].tool_call_id must be a string")
            content = text_of(message.get("content"))
            history.result(call_id, content, looks_like_error(content))
        history.passed(message)
    options = data.get("stream_options")
    options = options if isinstance(options, dict) else {}
    return history.parsed(
        dialect="openai-chat",
        model=model_of(data),
        stream=get_bool(data, "stream"),
        include_usage=options.get("include_usage") is True,
        include_obfuscation=options.get("include_obfuscation") is not False,
    )
