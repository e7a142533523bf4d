"""The emulation server's Bedrock encoders: ConverseStream and
InvokeModelWithResponseStream, in AWS's binary event stream.

Shapes follow the recordings in ``tests/fixtures/conformance/bedrock``: JSON
keys sorted, a ``"p"`` padding key on every event, text blocks without a
``contentBlockStart``, ``metadata`` (usage) after ``messageStop``; for
InvokeModel, each Anthropic event base64-encoded in a ``chunk`` event's
``bytes``. An in-stream error is an event-stream ``exception`` message.

Requests: a Converse body read for the server (``decode_request``); an
InvokeModel body is Anthropic's, read by the Anthropic reader.
"""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any

from toolwire.stream.codecs._reading import as_object, text_of
from toolwire.stream.codecs.emulation import anthropic
from toolwire.stream.codecs.emulation._base import Encoder, Frame, Reply, fragments, token
from toolwire.stream.codecs.emulation._request import (
    BadRequest,
    History,
    ParsedRequest,
    get_list,
    looks_like_error,
)
from toolwire.stream.framing.eventstream import MEDIA_TYPE, event_message, exception_message

__all__ = [
    "BedrockConverseEncoder",
    "BedrockInvokeEncoder",
    "decode_converse_request",
    "decode_invoke_request",
]

_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_EXCEPTION = "exception:"
"""An event name that starts with it is sent as an ``exception`` message."""


def _padding(index: int) -> str:
    return _PADDING[: 1 + (index * 17) % len(_PADDING)]


def _exception_frame(error: dict[str, Any]) -> Frame:
    kind = str(error.get("type") or "modelStreamErrorException")
    message = str(error.get("message") or "The model stream failed.")
    return Frame({"message": message}, event=_EXCEPTION + kind)


class _EventStreamEncoder(Encoder):
    stream_media_type = MEDIA_TYPE

    def _payload(self, frame: Frame, index: int) -> str:
        return self.dumps(frame.payload)

    def frame(self, frame: Frame, index: int, *, broken: bool = False) -> bytes:
        """One event-stream message; ``broken`` cuts its JSON in half (the
        CRCs still match: the damage is in the payload, not the framing)."""
        event = frame.event or "message"
        if event.startswith(_EXCEPTION):
            return exception_message(event[len(_EXCEPTION) :], self.dumps(frame.payload).encode())
        text = self._payload(frame, index)
        if broken:
            text = text[: len(text) // 2]
        return event_message(event, text.encode())

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """``{"message": ...}``, as AWS's JSON protocol answers."""
        return {"message": message}

    def error_frame(self, error: dict[str, Any], sequence_number: int) -> Frame:
        """An ``exception`` message (``type`` names it: ``throttlingException``...)."""
        return _exception_frame(error)


class BedrockConverseEncoder(_EventStreamEncoder):
    """``POST /model/{id}/converse-stream`` and ``/converse``."""

    dialect = "bedrock-converse"

    @staticmethod
    def call_id(reply: Reply, index: int) -> str:
        """``tooluse_`` + 22 characters."""
        return "tooluse_" + token(f"{reply.seed}:call:{index}", 22)

    def _usage(self, reply: Reply) -> dict[str, Any]:
        output = reply.output_tokens
        return {
            "inputTokens": reply.input_tokens,
            "outputTokens": output,
            "totalTokens": reply.input_tokens + output,
        }

    def _stop(self, reply: Reply) -> str:
        return "tool_use" if reply.calls else "end_turn"

    def _payload(self, frame: Frame, index: int) -> str:
        return self.dumps(dict(sorted({**frame.payload, "p": _padding(index)}.items())))

    def stream(self, reply: Reply) -> list[Frame]:
        """``messageStart``, blocks, ``messageStop``, then ``metadata``."""
        frames = [Frame({"role": "assistant"}, event="messageStart")]
        size = reply.chunk_size
        index = 0

        def block(deltas: list[dict[str, Any]], start: dict[str, Any] | None = None) -> None:
            nonlocal index
            if start is not None:
                frames.append(
                    Frame({"contentBlockIndex": index, "start": start}, event="contentBlockStart")
                )
            for delta in deltas:
                frames.append(
                    Frame({"contentBlockIndex": index, "delta": delta}, event="contentBlockDelta")
                )
            frames.append(Frame({"contentBlockIndex": index}, event="contentBlockStop"))
            index += 1

        if reply.reasoning:
            deltas = [{"reasoningContent": {"text": p}} for p in fragments(reply.reasoning, size)]
            signature = token(reply.seed + ":signature", 88)
            block([*deltas, {"reasoningContent": {"signature": signature}}])
        if reply.text:
            block([{"text": p} for p in fragments(reply.text, size)])
        for call in reply.calls:
            start = {"toolUse": {"name": call.name, "toolUseId": self.call_id(reply, call.index)}}
            pieces = fragments(call.raw_arguments, size)
            block([{"toolUse": {"input": p}} for p in pieces], start)
        frames.append(Frame({"stopReason": self._stop(reply)}, event="messageStop"))
        metadata = {"metrics": {"latencyMs": 100}, "usage": self._usage(reply)}
        frames.append(Frame(metadata, event="metadata"))
        return frames

    def body(self, reply: Reply) -> dict[str, Any]:
        """A ``Converse`` response.

        Raises:
            ValueError: a tool call's raw arguments are not a JSON object.
        """
        content: list[dict[str, Any]] = []
        if reply.reasoning:
            text = {"text": reply.reasoning, "signature": token(reply.seed + ":signature", 88)}
            content.append({"reasoningContent": {"reasoningText": text}})
        if reply.text:
            content.append({"text": reply.text})
        for call in reply.calls:
            if call.arguments is None:
                raise ValueError(
                    f"tool call {call.name!r} has arguments that are not a JSON object; "
                    "a Converse response cannot carry them"
                )
            use = {"input": call.arguments, "name": call.name}
            content.append({"toolUse": {**use, "toolUseId": self.call_id(reply, call.index)}})
        return {
            "metrics": {"latencyMs": 100},
            "output": {"message": {"content": content, "role": "assistant"}},
            "stopReason": self._stop(reply),
            "usage": self._usage(reply),
        }


class BedrockInvokeEncoder(_EventStreamEncoder):
    """``POST /model/{id}/invoke-with-response-stream`` and ``/invoke``: the
    Anthropic encoder's events, each wrapped in a ``chunk``."""

    dialect = "bedrock-invoke"

    def __init__(self, *, sse: bool = True) -> None:
        super().__init__(sse=sse)
        self._anthropic = anthropic.AnthropicEncoder()

    def stream(self, reply: Reply) -> list[Frame]:
        """Anthropic's events without its pings, as ``chunk`` events."""
        return [
            Frame(f.payload, event="chunk")
            for f in self._anthropic.stream(reply)
            if f.raw is None  # the ping is written by hand; Bedrock sends none
        ]

    def _payload(self, frame: Frame, index: int) -> str:
        inner = base64.b64encode(self.dumps(frame.payload).encode()).decode()
        return self.dumps({"bytes": inner, "p": _padding(index)})

    def body(self, reply: Reply) -> dict[str, Any]:
        """An Anthropic ``message`` object."""
        return self._anthropic.body(reply)


# -- requests ---------------------------------------------------------------------


def decode_converse_request(
    data: dict[str, Any], model: str | None = None, stream: bool | None = None
) -> ParsedRequest:
    """What the emulation server reads of a ``Converse`` request (the model
    and whether it streams come from the URL)."""
    messages = get_list(data, "messages")
    history = History(data.get("system"))
    for i, raw in enumerate(messages):
        message = as_object(raw, f"messages[{i}]")
        role = message.get("role")
        content = message.get("content")
        blocks = [b for b in (content if isinstance(content, list) else []) if isinstance(b, dict)]
        if role == "assistant":
            history.assistant()
            for block in blocks:
                use = block.get("toolUse")
                if isinstance(use, dict) and isinstance(use.get("toolUseId"), str):
                    history.names[use["toolUseId"]] = str(use.get("name"))
        elif role == "user":
            for j, block in enumerate(blocks):
                result = block.get("toolResult")
                if not isinstance(result, dict):
                    continue
                call_id = result.get("toolUseId")
                if not isinstance(call_id, str):
                    raise BadRequest(
                        f"messages[{i}].content[{j}].toolResult.toolUseId must be a string"
                    )
                text = text_of(result.get("content"))
                is_error = result.get("status") == "error" or looks_like_error(text)
                history.result(call_id, text, is_error)
        else:
            raise BadRequest(f"messages[{i}].role must be 'user' or 'assistant'")
        history.passed(message)
    config = data.get("toolConfig")
    return history.parsed(
        dialect="bedrock-converse",
        model=model or "bedrock",
        stream=bool(stream),
        tools=list(config.get("tools") or []) if isinstance(config, dict) else [],
    )


def decode_invoke_request(
    data: dict[str, Any], model: str | None = None, stream: bool | None = None
) -> ParsedRequest:
    """An ``InvokeModel`` request for Claude: Anthropic's body, with the model
    and the streaming in the URL."""
    inner = anthropic.decode_request(data, model or "bedrock", bool(stream))
    return replace(inner, dialect="bedrock-invoke")
