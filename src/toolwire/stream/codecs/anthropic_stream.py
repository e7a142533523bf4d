"""Anthropic Messages streams.

Events (each an SSE ``event:`` line whose name repeats the payload's
``type``): ``message_start``, ``content_block_start`` / ``_delta`` /
``_stop`` per block, ``message_delta`` (stop reason, output usage),
``message_stop``, ``ping``, ``error``; an event of another type is an
``UnknownItem``. Tool arguments arrive as
``input_json_delta.partial_json`` fragments of the block's ``input``; the
``input`` in ``content_block_start`` is ``{}`` for streamed calls, but holds
the whole input when no delta follows (programmatic tool calls), and a
``message_start`` may already carry complete blocks. ``server_tool_use`` and
``mcp_tool_use`` blocks are streamed the same way but are executed by
Anthropic: they are kept apart from the client's calls. A ``tool_use`` of a
toolset (``toolset_name``: ``computer``, ``browser``) is a call named after
its action, marked as asked of the toolset (see ``toolwire.toolset``).

What the API needs to see again is kept as provider state, each block as
it was sent, with where it stood among the text and the calls (see
:func:`~toolwire.stream.codecs.request.interleave`), and sent back in
place: thinking blocks and their signatures, server-tool blocks and their
results (``server_tool_use``, ``web_search_tool_result``...), MCP blocks,
``container_upload``, ``compaction`` (streamed as ``compaction_delta``),
``fallback``. A ``tool_use`` block's ``caller`` (a call made from code
execution) is kept by call id; the message's ``container`` goes back as the
next request's ``container``; the message's other fields
(``context_management``, ``stop_details``...) are ``UnknownItem`` events.
``stop_reason: "pause_turn"`` is toolwire's
``"paused"``: the turn is sent back as it is, to be continued.
References: https://docs.anthropic.com/en/docs/build-with-claude/streaming,
anthropic-sdk-python's ``BetaContentBlock`` and ``BetaRawContentBlockDelta``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from toolwire.errors import RemoteProtocolError
from toolwire.stream._repair import ArgumentsParseError, parse_arguments
from toolwire.stream.codecs._args_event import INDEX, STRING_CONTENT, matched_text_run, string_text
from toolwire.stream.codecs._common import (
    DONE,
    as_int,
    as_obj,
    as_str,
    error_event,
    finish_part,
    is_done_trailer,
    load_payload,
    meta_part,
    token_count,
    unknown_part,
    unread_fields,
)
from toolwire.stream.codecs.anthropic_request import (
    _CALL_FIELDS,
    _CITATIONS,
    _CONTAINER,
    _KEPT_BLOCKS,
    _SERVER_BLOCKS,
    DIALECT_NAME,
)
from toolwire.stream.framing import FramingKind
from toolwire.stream.framing.sse import EventMatcher
from toolwire.stream.jsonio import dumps
from toolwire.stream.jsonio import loads_fast as _loads
from toolwire.stream.parts import (
    POSITION_KEY,
    TEXT_POSITION_KEY,
    ArgsPart,
    CallDone,
    CallPart,
    ErrorPart,
    Part,
    ReasoningPart,
    ServerCallPart,
    StatePart,
    StreamEndPart,
    TextPart,
    TrailerPart,
    UsagePart,
)
from toolwire.types import FinishReason, RefusalDetails, Usage

__all__ = ["ARGS_EVENT", "RAW_FINISH_REASONS", "AnthropicCodec", "usage_from_anthropic"]


RAW_FINISH_REASONS: Final[dict[str, FinishReason]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "refusal",
    "pause_turn": "paused",
}
"""Anthropic's ``stop_reason`` values in toolwire's vocabulary."""

ARGS_EVENT: Final = re.compile(
    r"event: content_block_delta\n"
    r'data: (\{"type":"content_block_delta","index":' + INDEX + r","
    r'"delta":\{"type":"input_json_delta","partial_json":"' + STRING_CONTENT + r'"\}\})\n\n'
)
"""An Anthropic argument delta event; groups: data, block index, raw fragment."""

_MESSAGE_READ = frozenset(
    {"id", "type", "role", "model", "content", "usage", "container", "stop_reason", "stop_details"}
)
"""The message fields the codec reads; any other (``context_management``,
``diagnostics``...) is handed on as an ``UnknownItem``: they report on the
request, the API does not want them back."""
_MESSAGE_DELTA_READ = frozenset({"type", "delta", "usage"})
_DELTA_READ = frozenset({"container", "stop_reason", "stop_details"})
_TYPE_READ = frozenset({"type"})


def usage_from_anthropic(raw: dict[str, Any]) -> Usage:
    """An Anthropic ``usage`` object as a :class:`Usage`.

    ``input_tokens`` is normalized to *all* input tokens (Anthropic reports
    cache reads and writes apart), so it compares with other providers'.
    """
    fresh = token_count(raw, "input_tokens", DIALECT_NAME)
    cache_read = token_count(raw, "cache_read_input_tokens", DIALECT_NAME)
    cache_write = token_count(raw, "cache_creation_input_tokens", DIALECT_NAME)
    creation = raw.get("cache_creation")  # by TTL tier: the 1 h writes cost more
    one_hour = creation if isinstance(creation, dict) else {}
    written_1h = token_count(one_hour, "ephemeral_1h_input_tokens", DIALECT_NAME, "cache_creation")
    counted = [v for v in (fresh, cache_read, cache_write) if v is not None]
    input_tokens = sum(counted) if counted else None
    output_tokens = token_count(raw, "output_tokens", DIALECT_NAME)
    total = None
    if input_tokens is not None or output_tokens is not None:
        total = (input_tokens or 0) + (output_tokens or 0)
    return Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=total,
        cached_tokens=cache_read,
        cache_write_tokens=cache_write,
        cache_write_1h_tokens=written_1h,
        raw=raw,
    )


class _Block:
    __slots__ = (
        "citations",
        "data",
        "fragments",
        "id",
        "input",
        "name",
        "raw",
        "signature",
        "start",
        "text",
        "type",
    )

    signature: list[str]

    def __init__(self, block: dict[str, Any]) -> None:
        self.raw = block
        self.type = str(block.get("type"))
        self.id = as_str(block.get("id"), f"{DIALECT_NAME}: block id") or ""
        self.name = as_str(block.get("name"), f"{DIALECT_NAME}: block name") or ""
        self.input: Any = block.get("input")
        self.fragments: list[str] = []
        self.text: list[str] = []
        self.signature = [as_str(block.get("signature"), f"{DIALECT_NAME}: signature") or ""]
        self.data = block.get("data")
        citations = block.get("citations")
        self.citations: list[Any] = list(citations) if isinstance(citations, list) else []
        self.start = (0, 0)  # (calls, characters of text) before the block


class AnthropicCodec:
    """Decodes Messages stream events into parts."""

    dialect = DIALECT_NAME
    framings: frozenset[FramingKind] = frozenset({"sse"})

    def __init__(self) -> None:
        self._blocks: dict[int, _Block] = {}
        self._usage: dict[str, Any] = {}
        self._calls = 0  # tool_use blocks so far: where kept blocks go back
        self._text = 0  # characters of text so far: the same
        self.quirks: set[str] = set()
        self.args_event: EventMatcher | None = ARGS_EVENT.match
        self._tool_blocks: dict[str, int] = {}  # tool_use blocks by index, as args_event reads it

    def args_delta(self, m: re.Match[str]) -> tuple[int, int, str] | None:
        """See :class:`~toolwire.stream.codecs.ArgsEventCodec`: not for a block other
        than ``tool_use``, nor a bad escape."""
        digits, raw = m.group(2, 3)
        index = self._tool_blocks.get(digits)
        if index is None:
            return None
        if "\\" not in raw:
            return 0, index, raw
        text = string_text(raw)
        return None if text is None else (0, index, text)

    def args_run(self, items: Sequence[Any], i: int) -> tuple[int, int, list[str], int] | None:
        return matched_text_run(self.args_delta(items[i]), items, i, 2, 3)

    @staticmethod
    def args_frame(m: re.Match[str]) -> tuple[str, str]:
        return "content_block_delta", m.group(1)

    @staticmethod
    def text_delta(m: re.Match[str]) -> None:
        """Its matcher takes argument deltas only."""
        return None

    def decode(self, event: str, data: str) -> list[Part]:
        if data.startswith('{"type":"content_block_delta"'):
            # Argument and text deltas: numbers travel inside strings, so the
            # fast parser loses nothing (see toolwire.stream.jsonio).
            try:
                obj = _loads(data)
            except ValueError:
                obj = load_payload(data, DIALECT_NAME)  # raises the descriptive error
        elif is_done_trailer(data):
            self.quirks.add("[DONE] line after the dialect's own end event")
            return [TrailerPart(DONE)]
        else:
            obj = load_payload(data, DIALECT_NAME)
        if type(obj) is not dict:
            obj = as_obj(obj, f"{DIALECT_NAME}: event")
        kind = obj.get("type", event)
        if kind == "content_block_delta":
            # The hot path: one event per few characters of tool input.
            delta = obj.get("delta")
            index = obj.get("index")
            if (
                type(delta) is dict
                and type(index) is int
                and delta.get("type") == "input_json_delta"
            ):
                fragment = delta.get("partial_json")
                target = self._blocks.get(index)
                if type(fragment) is str and target is not None and target.type == "tool_use":
                    return [ArgsPart(0, index, fragment)]
            parts: list[Part] = []
            self._delta(obj, parts)
            return parts
        parts = []
        if kind == "content_block_start":
            index = self._index(obj)
            block = as_obj(obj.get("content_block"), f"{DIALECT_NAME}: content_block")
            self._start(index, block, parts)
        elif kind == "content_block_stop":
            self._stop(self._index(obj), parts)
        elif kind == "message_start":
            self._message_start(as_obj(obj.get("message"), f"{DIALECT_NAME}: message"), parts)
        elif kind == "message_delta":
            delta = obj.get("delta")
            usage = obj.get("usage")
            if usage:
                parts.append(self._merge_usage(as_obj(usage, f"{DIALECT_NAME}: usage")))
            parts += unread_fields(DIALECT_NAME, obj, _MESSAGE_DELTA_READ)
            if delta:
                delta = as_obj(delta, f"{DIALECT_NAME}: message delta")
                self._container(delta.get("container"), parts)
                parts += unread_fields(DIALECT_NAME, delta, _DELTA_READ)
                self._finish(delta, parts)
        elif kind == "message_stop":
            # Bedrock's InvokeModel adds its amazon-bedrock-invocationMetrics.
            parts += unread_fields(DIALECT_NAME, obj, _TYPE_READ)
            parts.append(StreamEndPart())
        elif kind == "error" or event == "error":
            parts.append(ErrorPart(error_event(obj, DIALECT_NAME)))
        elif kind != "ping":  # a keep-alive; any other event is handed on
            parts.append(unknown_part(DIALECT_NAME, str(kind), obj, self.quirks))
        return parts

    @staticmethod
    def _index(obj: dict[str, Any]) -> int:
        index = as_int(obj.get("index"), f"{DIALECT_NAME}: block index")
        if index is None:
            raise RemoteProtocolError(f"{DIALECT_NAME}: a content block event has no index")
        return index

    def decode_response(self, body: dict[str, Any]) -> list[Part]:
        """A whole ``message`` object: what its stream would give."""
        if not isinstance(body.get("content"), list):
            raise RemoteProtocolError("the message has no 'content' array")
        parts: list[Part] = []
        self._message_start(body, parts, whole=True)
        parts.append(StreamEndPart())
        return parts

    def _message_start(
        self, message: dict[str, Any], parts: list[Part], *, whole: bool = False
    ) -> None:
        parts.append(meta_part(message.get("model"), message.get("id")))
        usage = message.get("usage")
        if usage:
            parts.append(self._merge_usage(as_obj(usage, f"{DIALECT_NAME}: usage")))
        content = message.get("content") or []
        if not isinstance(content, list):
            raise RemoteProtocolError(f"{DIALECT_NAME}: message content is not an array")
        # Complete blocks already inside message_start: start and stop each.
        if content and not whole:
            self.quirks.add("complete blocks inside message_start")
        for block in content:
            index = -1 - len(self._blocks)  # never collides with streamed indexes
            self._start(index, as_obj(block, f"{DIALECT_NAME}: content block"), parts, whole=True)
            self._stop(index, parts)
        self._container(message.get("container"), parts)
        parts += unread_fields(DIALECT_NAME, message, _MESSAGE_READ)
        self._finish(message, parts)

    def _finish(self, obj: dict[str, Any], parts: list[Part]) -> None:
        """The ``stop_reason`` of a message or its delta, with its ``stop_details``
        (a refusal's category and explanation; another kind is an ``UnknownItem``)."""
        details = obj.get("stop_details")
        refusal = None
        if details:
            details = as_obj(details, f"{DIALECT_NAME}: stop_details")
            if details.get("type") == "refusal":
                refusal = RefusalDetails(
                    category=as_str(details.get("category"), f"{DIALECT_NAME}: category"),
                    explanation=as_str(details.get("explanation"), f"{DIALECT_NAME}: explanation"),
                    raw=details,
                )
            else:
                parts.append(unknown_part(DIALECT_NAME, "stop_details", details, self.quirks))
        stop = obj.get("stop_reason")
        if stop:
            raw = as_str(stop, f"{DIALECT_NAME}: stop_reason") or ""
            part = finish_part(RAW_FINISH_REASONS, raw)
            part.refusal = refusal
            parts.append(part)

    def _start(
        self, index: int, block: dict[str, Any], parts: list[Part], *, whole: bool = False
    ) -> None:
        if index in self._blocks:  # another block in its place: never a second call there
            raise RemoteProtocolError(f"{DIALECT_NAME}: content block {index} started twice")
        b = self._blocks[index] = _Block(block)
        b.start = (self._calls, self._text)
        if b.type == "tool_use":
            self._tool_blocks[str(index)] = index
        else:
            self._tool_blocks.pop(str(index), None)
        if b.type == "text":
            text = block.get("text")
            if text:
                self._add_text(as_str(text, f"{DIALECT_NAME}: text") or "", parts)
        elif b.type == "thinking":
            thinking = block.get("thinking")
            if thinking:
                b.text.append(as_str(thinking, f"{DIALECT_NAME}: thinking") or "")
                parts.append(ReasoningPart(b.text[-1]))
        elif b.type == "tool_use":
            self._calls += 1
            part = CallPart(id=b.id, index=index, name=b.name, new=True)
            if isinstance(b.input, dict):
                if whole:
                    part.args_value = b.input
                else:
                    part.args_default = b.input
            elif b.input is not None:
                raise RemoteProtocolError(f"{DIALECT_NAME}: tool_use input is not an object")
            parts.append(part)

    def _delta(self, obj: dict[str, Any], parts: list[Part]) -> None:
        index = self._index(obj)
        delta = as_obj(obj.get("delta"), f"{DIALECT_NAME}: delta")
        kind = delta.get("type")
        block = self._blocks.get(index)
        if kind == "input_json_delta":
            fragment = as_str(delta.get("partial_json"), f"{DIALECT_NAME}: partial_json") or ""
            if block is None:
                raise RemoteProtocolError(
                    f"{DIALECT_NAME}: input_json_delta for unknown block {index}"
                )
            if block.type == "tool_use":
                parts.append(CallPart(index=index, args=fragment))
            else:
                block.fragments.append(fragment)
        elif kind == "text_delta":
            text = as_str(delta.get("text"), f"{DIALECT_NAME}: text") or ""
            if text:
                self._add_text(text, parts)
        elif kind == "thinking_delta":
            text = as_str(delta.get("thinking"), f"{DIALECT_NAME}: thinking") or ""
            if text:
                if block is not None:
                    block.text.append(text)
                parts.append(ReasoningPart(text))
        elif kind == "signature_delta":
            if block is not None:
                block.signature.append(
                    as_str(delta.get("signature"), f"{DIALECT_NAME}: signature") or ""
                )
        elif kind == "citations_delta":
            if block is None:
                raise RemoteProtocolError(
                    f"{DIALECT_NAME}: citations_delta for unknown block {index}"
                )
            block.citations.append(as_obj(delta.get("citation"), f"{DIALECT_NAME}: citation"))
        elif kind == "compaction_delta":
            if block is None:
                raise RemoteProtocolError(
                    f"{DIALECT_NAME}: compaction_delta for unknown block {index}"
                )
            content = as_str(delta.get("content"), f"{DIALECT_NAME}: compaction content")
            if content:
                block.text.append(content)
            encrypted = as_str(delta.get("encrypted_content"), f"{DIALECT_NAME}: encrypted_content")
            if encrypted:
                block.data = encrypted
        else:
            parts.append(unknown_part(DIALECT_NAME, str(kind), obj, self.quirks))

    def _add_text(self, text: str, parts: list[Part]) -> None:
        self._text += len(text)
        parts.append(TextPart(text))

    def _stop(self, index: int, parts: list[Part]) -> None:
        block = self._blocks.get(index)
        if block is None:
            raise RemoteProtocolError(
                f"{DIALECT_NAME}: content_block_stop for unknown block {index}"
            )
        kind = block.type
        if kind == "tool_use":
            parts.append(CallDone(index=index))
            fields = {
                k: v
                for k, v in block.raw.items()
                if k not in ("type", "id", "name", "input") and v is not None
            }
            if fields and fields != {"caller": {"type": "direct"}}:
                parts.append(StatePart({"type": _CALL_FIELDS, "id": block.id, "fields": fields}))
            toolset = block.raw.get("toolset_name")
            if isinstance(toolset, str) and toolset:
                # An action of a toolset (computer, browser): the Agent routes it by toolset.
                mark = {"type": "call_item", "call_id": block.id, "asked": "toolset"}
                parts.append(StatePart({**mark, "toolset": toolset}))
        elif kind in _SERVER_BLOCKS:
            value, raw = self._server_input(block)
            parts.append(ServerCallPart(block.id, block.name, kind, value, raw))
            parts.append(StatePart(self._placed({**block.raw, "input": value})))
        elif kind == "thinking":
            thinking = {
                "type": "thinking",
                "thinking": "".join(block.text),
                "signature": "".join(block.signature),
            }
            parts.append(StatePart(self._placed(thinking)))
        elif kind == "redacted_thinking":
            parts.append(StatePart(self._placed({"type": "redacted_thinking", "data": block.data})))
        elif kind == "compaction":
            compaction = dict(block.raw)
            if block.text:
                compaction["content"] = (compaction.get("content") or "") + "".join(block.text)
            if block.data is not None:
                compaction["encrypted_content"] = block.data
            parts.append(StatePart(self._placed(compaction)))
        elif kind in _KEPT_BLOCKS:
            parts.append(StatePart(self._placed(block.raw)))
        elif kind == "text":
            if block.citations:
                calls, start = block.start
                item = {"type": _CITATIONS, "length": self._text - start}
                item["citations"] = block.citations
                if calls or start:
                    item.update({POSITION_KEY: calls, TEXT_POSITION_KEY: start})
                parts.append(StatePart(item))
        else:
            payload = dict(block.raw)
            if block.fragments:  # input streamed for a block of unknown type
                payload["partial_json"] = "".join(block.fragments)
            parts.append(unknown_part(DIALECT_NAME, kind, payload, self.quirks))

    @staticmethod
    def _server_input(block: _Block) -> tuple[dict[str, Any], str]:
        """A server tool's input: its streamed JSON, else the start's ``input``."""
        raw = "".join(block.fragments)
        if raw.strip():
            try:
                value, _ = parse_arguments(raw, at_end=False)
            except ArgumentsParseError as exc:
                raise RemoteProtocolError(
                    f"{DIALECT_NAME}: server tool {block.name} input is not valid JSON: {exc}"
                ) from exc
        else:
            value = block.input if isinstance(block.input, dict) else {}
            raw = dumps(value)
        if not isinstance(value, dict):
            raise RemoteProtocolError(
                f"{DIALECT_NAME}: server tool {block.name} input is not an object"
            )
        return value, raw

    def _placed(self, item: dict[str, Any]) -> dict[str, Any]:
        # Where the block stood among the calls and the text, to go back there.
        if self._calls or self._text:
            return {**item, POSITION_KEY: self._calls, TEXT_POSITION_KEY: self._text}
        return item

    def _container(self, container: Any, parts: list[Part]) -> None:
        if container:
            value = as_obj(container, f"{DIALECT_NAME}: container")
            if not isinstance(value.get("id"), str):
                raise RemoteProtocolError(f"{DIALECT_NAME}: container has no id")
            parts.append(StatePart({**value, "type": _CONTAINER}))

    def _merge_usage(self, usage: dict[str, Any]) -> UsagePart:
        # message_start carries input usage; message_delta the running output
        # count (and sometimes input again): keep the latest of each field.
        self._usage.update({k: v for k, v in usage.items() if v is not None})
        return UsagePart(usage_from_anthropic(dict(self._usage)))
