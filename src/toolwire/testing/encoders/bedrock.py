"""The emulation server's Bedrock encoders: ConverseStream and
InvokeModelWithResponseStream, in AWS's binary event stream.

Shapes follow the recordings in ``tests/fixtures/conformance/bedrock``: JSON
keys sorted, a ``"p"`` padding key on every event, text blocks without a
``contentBlockStart``, ``metadata`` (usage) after ``messageStop``; for
InvokeModel, each Anthropic event base64-encoded in a ``chunk`` event's
``bytes``. An in-stream error is an event-stream ``exception`` message.
"""

from __future__ import annotations

import base64
from typing import Any

from toolwire.stream.framing.eventstream import event_message, exception_message
from toolwire.testing.encoders._base import Encoder, Frame, Reply, fragments
from toolwire.testing.encoders.anthropic import AnthropicEncoder
from toolwire.testing.scenario import token

__all__ = ["BedrockConverseEncoder", "BedrockInvokeEncoder"]

_PADDING = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_EXCEPTION = "exception:"
"""An event name that starts with it is sent as an ``exception`` message."""
_MEDIA_TYPE = "application/vnd.amazon.eventstream"


def _padding(index: int) -> str:
    return _PADDING[: 1 + (index * 17) % len(_PADDING)]


def _exception_frame(error: dict[str, Any]) -> Frame:
    kind = str(error.get("type") or "modelStreamErrorException")
    message = str(error.get("message") or "The model stream failed.")
    return Frame({"message": message}, event=_EXCEPTION + kind)


class _EventStreamEncoder(Encoder):
    stream_media_type = _MEDIA_TYPE

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

    def __init__(self) -> None:
        self._anthropic = AnthropicEncoder()

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
