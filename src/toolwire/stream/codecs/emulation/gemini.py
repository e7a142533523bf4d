"""The emulation server's Gemini encoder.

Framing follows ``gemini/sse_call_with_id.sse`` (``": "`` after keys,
``\\r\\n\\r\\n`` between events) and ``gemini/json_array_nested_args_with_id.sse``
(a pretty-printed array, elements separated by ``\\n,\\r\\n``).

A turn's own Gemini parts (:class:`~toolwire.testing.ProviderItem`:
``executableCode``, ``toolCall``...) are streamed whole, one per chunk, in
their place; a call's ``provider_fields`` (``thoughtSignature``) go on its part.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire.stream import jsonio
from toolwire.stream.codecs._reading import as_object
from toolwire.stream.codecs.emulation._base import (
    Encoder,
    Frame,
    Reply,
    fragments,
    lower_token,
    merge_error,
    token,
)
from toolwire.stream.codecs.emulation._request import (
    History,
    ParsedRequest,
    get_list,
    looks_like_error,
)

__all__ = ["GeminiEncoder", "google_error"]


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
"""Google's names of the HTTP statuses (``google.rpc.Code``)."""


def google_error(status: int, message: str) -> dict[str, Any]:
    """Google's error object, ``{"code", "message", "status"}``, for an HTTP
    status (the Gemini and Interactions APIs share it)."""
    return {"code": status, "message": message, "status": _GEMINI_STATUS.get(status, "INTERNAL")}


class GeminiEncoder(Encoder):
    """``POST /v1beta/models/{model}:streamGenerateContent`` and ``:generateContent``.

    Args:
        sse: True for ``alt=sse`` (SSE with CRLF separators), False for the
            streamed JSON array.
    """

    dialect = "gemini"
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
            function = {
                "name": call.name,
                "args": call.arguments,
                "id": self.call_id(reply, call.index),
            }
            parts.append({"functionCall": function, **call.provider_fields})
        return parts

    def stream(self, reply: Reply) -> list[Frame]:
        """Thought parts, text parts, then each call as one whole ``functionCall`` part."""
        pending: list[list[Any]] = []
        size = reply.chunk_size
        pending.extend([{"text": p, "thought": True}] for p in fragments(reply.reasoning, size))
        pending.extend([item] for item in reply.items_after("reasoning"))
        pending.extend([{"text": p}] for p in fragments(reply.text, size))
        pending.extend([item] for item in reply.items_after("text"))
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
        pending.extend([item] for item in reply.items_after("calls"))
        if not pending:
            pending.append([{"text": ""}])
        for n, parts in enumerate(pending):
            finish = (reply.finish or "STOP") if n == len(pending) - 1 else None
            frames.append(Frame(self._chunk(reply, parts, finish)))
        return frames

    def body(self, reply: Reply) -> dict[str, Any]:
        """A ``GenerateContentResponse``."""
        parts: list[Any] = []
        if reply.reasoning:
            parts.append({"text": reply.reasoning, "thought": True})
        parts.extend(reply.items_after("reasoning"))
        if reply.text:
            parts.append({"text": reply.text})
        parts.extend(reply.items_after("text"))
        calls = self._call_parts(reply)
        if isinstance(calls, str):
            body = self._chunk(reply, None, "MALFORMED_FUNCTION_CALL")
            body["candidates"][0]["finishMessage"] = f"Malformed function call: {calls}"
            return body
        parts.extend(calls)
        parts.extend(reply.items_after("calls"))
        return self._chunk(reply, parts or [{"text": ""}], reply.finish or "STOP")

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """``{"error": {"code", "message", "status"}}``."""
        return {"error": google_error(status, message)}

    def error_frame(self, error: dict[str, Any], sequence_number: int) -> Frame:
        """``{"error": {"code", "message", "status"}}`` as one more stream element."""
        defaults = google_error(500, "An internal error has occurred.")
        return Frame({"error": merge_error(defaults, error)})

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


# -- requests ---------------------------------------------------------------------


def _gemini_result_text(response: Any) -> str:
    # Gemini wraps a tool's output in an object; most clients use a single
    # "result"/"output"/"content" key holding the text: quote that text alone.
    if isinstance(response, dict) and len(response) == 1:
        ((key, value),) = response.items()
        if key in ("result", "output", "content") and isinstance(value, str):
            return value
    return jsonio.dumps(response)


def decode_request(
    data: dict[str, Any], model: str | None = None, stream: bool | None = None
) -> ParsedRequest:
    """What the emulation server reads of a ``generateContent`` request (the
    model and whether it streams come from the URL)."""
    contents = get_list(data, "contents")
    history = History(data.get("systemInstruction") or data.get("system_instruction"))
    for i, raw in enumerate(contents):
        content = as_object(raw, f"contents[{i}]")
        parts = content.get("parts")
        parts = parts if isinstance(parts, list) else []
        if content.get("role") == "model":
            history.assistant()
        else:
            for j, part in enumerate(parts):
                if not isinstance(part, dict) or "functionResponse" not in part:
                    continue
                response = as_object(part["functionResponse"], f"contents[{i}].parts[{j}]")
                name = response.get("name")
                call_id = response.get("id")
                text = _gemini_result_text(response.get("response"))
                payload = response.get("response")
                is_error = (
                    isinstance(payload, dict) and payload.get("error") not in (None, False, "")
                ) or looks_like_error(text)
                history.result(
                    call_id if isinstance(call_id, str) else None,
                    text,
                    is_error,
                    name=name if isinstance(name, str) else None,
                )
        history.passed(content)
    return history.parsed(dialect="gemini", model=model or "gemini", stream=bool(stream))
