"""The emulation server's Anthropic Messages encoder.

Key orders follow ``anthropic/text_then_tool_use.sse`` (``ping`` after the first
``content_block_start``, written with a space: ``{"type": "ping"}``).

A turn's own Anthropic blocks (:class:`~toolwire.testing.ProviderItem`) are
streamed as the API streams them: ``server_tool_use`` and ``mcp_tool_use``
with their input in ``input_json_delta`` fragments, a ``text`` block's
``citations`` in ``citations_delta`` before its text, ``compaction`` with its
content in one ``compaction_delta``, the others (tool results, ``fallback``...)
whole in their ``content_block_start``.
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
    merge_error,
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
from toolwire.stream.jsonio import dumps

__all__ = ["AnthropicEncoder"]


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

    dialect = "anthropic-messages"

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

    @staticmethod
    def _stop_reason(reply: Reply) -> str:
        return reply.finish or ("tool_use" if reply.calls else "end_turn")

    def _message(self, reply: Reply, content: list[Any], *, done: bool) -> dict[str, Any]:
        message = {
            "id": self.message_id(reply),
            "type": "message",
            "role": "assistant",
            "model": reply.request.model,
            "content": content,
            "stop_reason": self._stop_reason(reply) if done else None,
            "stop_sequence": None,
            "usage": self._usage(reply, reply.output_tokens if done else 1),
        }
        return {**message, **reply.provider_fields} if done else message

    def _tool_use(self, reply: Reply, call: ReplyCall, arguments: dict[str, Any]) -> dict[str, Any]:
        block = {
            "type": "tool_use",
            "id": self.call_id(reply, call.index),
            "name": call.name,
            "caller": {"type": "direct"},
            "input": arguments,
        }
        return {**block, **call.provider_fields}

    @staticmethod
    def _streamed(item: dict[str, Any], size: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """A whole block as its ``content_block_start`` and deltas."""
        kind = item.get("type")
        if kind in ("server_tool_use", "mcp_tool_use"):
            raw = dumps(item.get("input") or {})
            pieces = ["", *fragments(raw, size)]
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
            return {**item, "input": {}}, deltas
        if kind == "text":
            citations = item.get("citations") or []
            deltas = [{"type": "citations_delta", "citation": c} for c in citations]
            text = str(item.get("text") or "")
            deltas += [{"type": "text_delta", "text": p} for p in fragments(text, size)]
            start = {"type": "text", "text": ""}
            return ({"citations": [], **start} if "citations" in item else start), deltas
        if kind == "compaction":
            delta = {"type": "compaction_delta", "content": item.get("content")}
            if item.get("encrypted_content") is not None:
                delta["encrypted_content"] = item["encrypted_content"]
            return {"type": "compaction", "content": None}, [delta]
        return item, []

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
        for item in reply.items_after("reasoning"):
            block(*self._streamed(item, size))
        if reply.text:
            block(
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": p} for p in fragments(reply.text, size)],
            )
        for item in reply.items_after("text"):
            block(*self._streamed(item, size))
        for call in reply.calls:
            # The first input_json_delta is always empty, as Anthropic sends it.
            pieces = ["", *fragments(call.raw_arguments, size)]
            start = self._tool_use(reply, call, {})
            if "repeated_object" in reply.quirks:  # as the compatible servers known for it
                pieces[-1] += call.raw_arguments
            if "missing_ids" in reply.quirks:
                del start["id"]
            block(start, [{"type": "input_json_delta", "partial_json": p} for p in pieces])
        for item in reply.items_after("calls"):
            block(*self._streamed(item, size))
        if index == 0:
            frames.append(ping)
        delta = {
            "stop_reason": self._stop_reason(reply),
            "stop_sequence": None,
            **reply.provider_fields,
        }
        emit("message_delta", delta=delta, usage={"output_tokens": reply.output_tokens})
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
        content.extend(reply.items_after("reasoning"))
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        content.extend(reply.items_after("text"))
        for call in reply.calls:
            if call.arguments is None:
                raise ValueError(
                    f"tool call {call.name!r} has arguments that are not a JSON object; "
                    "a non-streaming Anthropic message cannot carry them"
                )
            block = self._tool_use(reply, call, call.arguments)
            if not call.provider_fields:
                del block["caller"]  # as recorded: whole messages leave the default out
            content.append(block)
        content.extend(reply.items_after("calls"))
        return self._message(reply, content, done=True)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """``{"type": "error", "error": {"type", "message"}}``."""
        kind = _ANTHROPIC_ERRORS.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def error_frame(self, error: dict[str, Any], sequence_number: int) -> Frame:
        """``event: error`` with ``{"type": "error", "error": {...}}``."""
        inner = merge_error({"type": "overloaded_error", "message": "Overloaded"}, error)
        return Frame({"type": "error", "error": inner}, event="error")


# -- requests ---------------------------------------------------------------------


def decode_request(
    data: dict[str, Any], model: str | None = None, stream: bool | None = None
) -> ParsedRequest:
    """What the emulation server reads of a ``/v1/messages`` request (the
    model and whether it streams, when the URL says: Vertex AI, Bedrock)."""
    messages = get_list(data, "messages")
    history = History(data.get("system"))
    for i, raw in enumerate(messages):
        message = as_object(raw, f"messages[{i}]")
        role = message.get("role")
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if role == "assistant":
            history.assistant()
            for block in blocks:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    if isinstance(block.get("id"), str):
                        history.names[block["id"]] = str(block.get("name"))
        elif role == "user":
            for j, block in enumerate(blocks):
                if not isinstance(block, dict) or block.get("type") != "tool_result":
                    continue
                call_id = block.get("tool_use_id")
                if not isinstance(call_id, str):
                    raise BadRequest(f"messages[{i}].content[{j}].tool_use_id must be a string")
                text = text_of(block.get("content"))
                is_error = block.get("is_error") is True or looks_like_error(text)
                history.result(call_id, text, is_error)
        elif role == "system":  # the SDK's SystemMessageParam: instructions in place
            _check_system(content, i)
        else:
            raise BadRequest(f"messages[{i}].role must be 'user', 'assistant' or 'system'")
        history.passed(message)
    return history.parsed(
        dialect="anthropic-messages",
        model=model if model is not None else model_of(data),
        stream=stream if stream is not None else get_bool(data, "stream"),
    )


def _check_system(content: Any, i: int) -> None:
    """A system message's content: a string, or a list of text blocks."""
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise BadRequest(f"messages[{i}].content must be a string or a list of text blocks")
    for j, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise BadRequest(f"messages[{i}].content[{j}] must be a text block")
        if not isinstance(block.get("text"), str):
            raise BadRequest(f"messages[{i}].content[{j}].text must be a string")
