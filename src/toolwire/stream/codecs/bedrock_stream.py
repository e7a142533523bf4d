"""Amazon Bedrock's ``ConverseStream`` events (and whole ``Converse``
responses) as parts.

The stream is AWS event-stream framed (``framing/eventstream.py``); each
event's name is its ``:event-type`` header and its payload a JSON object:

* ``messageStart`` (``role``);
* ``contentBlockStart`` (``contentBlockIndex``, ``start.toolUse{toolUseId,
  name}``): a tool call opens. Text blocks usually have no start event: their
  first ``contentBlockDelta`` opens them;
* ``contentBlockDelta`` (``delta.text``, ``delta.toolUse.input``: a fragment
  of the arguments' JSON text, ``delta.reasoningContent{text | signature |
  redactedContent}``);
* ``contentBlockStop``; ``messageStop`` (``stopReason``);
* ``metadata`` (``usage``, ``metrics``), which comes *after* ``messageStop``
  and is the stream's last event.

Any other event, a block or delta of another kind (``citation``,
``toolResult``, ``image``) and the members of ``messageStop`` and
``metadata`` that are not read (``metrics``, ``trace``,
``additionalModelResponseFields``) are handed on as ``UnknownItem`` events.

Every payload carries a ``"p"`` key of random padding (it hides the lengths
of the tokens); it is ignored. Errors arrive as event-stream ``exception``
messages, which the framing turns into typed errors.

A call whose arguments never arrive (a tool without parameters) gets ``{}``.
Reasoning blocks (Claude's thinking through Converse) are kept as provider
state, to be sent back before the calls they led to
(:mod:`~toolwire.stream.codecs.bedrock_request`).
Reference: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final

from toolwire.errors import RemoteProtocolError
from toolwire.stream.codecs._args_event import (
    INDEX,
    STRING_CONTENT,
    UTF8_CONTENT,
    matched_run,
    string_text,
)
from toolwire.stream.codecs._common import (
    as_int,
    as_list,
    as_obj,
    as_str,
    finish_part,
    load_payload,
    token_count,
    unknown_part,
    unread_fields,
)
from toolwire.stream.codecs.bedrock_request import DIALECT_NAME, REASONING
from toolwire.stream.framing import FramingKind
from toolwire.stream.framing.eventstream import BytesMatcher
from toolwire.stream.framing.sse import EventMatcher
from toolwire.stream.jsonio import loads_fast as _loads
from toolwire.stream.parts import (
    POSITION_KEY,
    ArgsPart,
    CallDone,
    CallPart,
    Part,
    ReasoningPart,
    StatePart,
    StreamEndPart,
    TextPart,
    UsagePart,
)
from toolwire.types import FinishReason, Usage

__all__ = ["RAW_FINISH_REASONS", "BedrockConverseCodec", "usage_from_bedrock"]

RAW_FINISH_REASONS: Final[dict[str, FinishReason]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "malformed_model_output": "error",
    "malformed_tool_use": "error",
}
"""Bedrock's ``stopReason`` values in toolwire's vocabulary."""


def usage_from_bedrock(raw: dict[str, Any]) -> Usage:
    """A Converse ``usage`` object as a :class:`Usage`.

    ``inputTokens`` leaves out the tokens read from and written to the prompt
    cache; ``input_tokens`` counts all of them, so it compares with other
    providers'.
    """
    fresh = token_count(raw, "inputTokens", DIALECT_NAME)
    cache_read = token_count(raw, "cacheReadInputTokens", DIALECT_NAME)
    cache_write = token_count(raw, "cacheWriteInputTokens", DIALECT_NAME)
    counted = [v for v in (fresh, cache_read, cache_write) if v is not None]
    output = token_count(raw, "outputTokens", DIALECT_NAME)
    total = token_count(raw, "totalTokens", DIALECT_NAME)
    if total is None and (counted or output is not None):
        total = sum(counted) + (output or 0)
    return Usage(
        input_tokens=sum(counted) if counted else None,
        output_tokens=output,
        total_tokens=total,
        cached_tokens=cache_read,
        raw=raw,
    )


# The members of a messageStop, a metadata event and a whole response that
# are read ("p" is padding); the others are handed on as unknown items.
_STOP_READ: Final = frozenset({"stopReason", "p"})
_METADATA_READ: Final = frozenset({"usage", "p"})
_RESPONSE_READ: Final = frozenset({"output", "stopReason", "usage"})


class _Reasoning:
    __slots__ = ("redacted", "signature", "text")

    def __init__(self) -> None:
        self.text: list[str] = []
        self.signature: list[str] = []
        self.redacted: list[str] = []

    def block(self) -> dict[str, Any]:
        if self.redacted:
            return {"redactedContent": "".join(self.redacted)}
        text: dict[str, Any] = {"text": "".join(self.text)}
        if self.signature:
            text["signature"] = "".join(self.signature)
        return {"reasoningText": text}


_ARGS_HEAD: Final = r'\{"contentBlockIndex":' + INDEX + r',"delta":\{"toolUse":\{"input":"'
_ARGS_TAIL: Final = r'"\}\}(?:,"p":"[0-9A-Za-z]*")?\}'
_ARGS_PAYLOAD: Final = re.compile(_ARGS_HEAD + STRING_CONTENT + _ARGS_TAIL)
"""An argument delta's payload as Bedrock writes it (keys sorted, the padding
last); groups: block index, raw fragment."""
_TEXT_HEAD: Final = r'\{"contentBlockIndex":' + INDEX + r',"delta":\{"text":"'
_TEXT_TAIL: Final = r'"\}(?:,"p":"[0-9A-Za-z]*")?\}'
_ARGS_BYTES: Final = re.compile(
    (_ARGS_HEAD + UTF8_CONTENT + _ARGS_TAIL + "|" + _TEXT_HEAD + UTF8_CONTENT + _TEXT_TAIL).encode()
)
"""The same payload, or a text delta's (groups 3 and 4: block index, raw
text), matched in its bytes, in place: well-formed UTF-8 only, so that the
match decodes without fail. A text match is no argument delta (its group 1
is ``None``): :meth:`BedrockConverseCodec.text_delta` reads it."""


class BedrockConverseCodec:
    """Decodes ConverseStream events into parts.

    Argument deltas of the exact form Bedrock sends are read by their text
    (``args_event``, see :mod:`toolwire.stream.codecs._args_event`): the
    event-stream reader matches the payloads of ``contentBlockDelta`` events,
    in place (``args_event_bytes``).
    """

    dialect = DIALECT_NAME
    framings: frozenset[FramingKind] = frozenset({"eventstream"})
    args_event_type = "contentBlockDelta"

    def __init__(self) -> None:
        self._tools: set[int] = set()  # open toolUse blocks
        self._started: set[int] = set()  # every toolUse block started, open or not
        self._tool_digits: dict[str | bytes, int] = {}  # the same, by their index's digits
        self._reasoning: dict[int, _Reasoning] = {}
        self._calls = 0  # toolUse blocks so far: where reasoning goes back
        self.quirks: set[str] = set()
        self.args_event: EventMatcher | None = _ARGS_PAYLOAD.fullmatch
        self.args_event_bytes: BytesMatcher = _ARGS_BYTES.fullmatch

    def args_delta(self, m: re.Match[str] | re.Match[bytes]) -> tuple[int, int, str] | None:
        """See :class:`~toolwire.stream.codecs.ArgsEventCodec`: not for a
        block that is not an open ``toolUse``, nor a bad escape."""
        digits, found = m.group(1, 2)
        index = self._tool_digits.get(digits)
        if index is None:
            return None
        # Bytes are well-formed UTF-8 by the pattern.
        raw: str = found.decode() if type(found) is bytes else found  # type: ignore[assignment]
        if "\\" not in raw:
            return 0, index, raw
        text = string_text(raw)
        return None if text is None else (0, index, text)

    def args_run(self, items: Sequence[Any], i: int) -> tuple[int, int, list[str], int] | None:
        return matched_run(self.args_delta(items[i]), items, i, (1,), 2)

    @staticmethod
    def text_delta(m: re.Match[Any]) -> str | None:
        """The text of a matched text delta, as :meth:`decode` reads it (its
        block index does not matter); ``None`` when ``m`` is no text delta
        or holds a bad escape (then :meth:`decode` says why)."""
        if m.re is not _ARGS_BYTES:
            return None
        found = m.group(4)
        if found is None:
            return None
        raw: str = found.decode()  # well-formed UTF-8 by the pattern
        return raw if "\\" not in raw else string_text(raw)

    @staticmethod
    def args_frame(m: re.Match[str] | re.Match[bytes]) -> tuple[str, str]:
        payload = m.group(0)
        return "contentBlockDelta", payload.decode() if isinstance(payload, bytes) else payload

    def decode(self, event: str, data: str) -> list[Part]:
        if event == "contentBlockDelta":
            # Arguments travel as strings: the fast parser loses nothing
            # (see toolwire.stream.jsonio).
            try:
                obj = _loads(data)
            except ValueError:
                obj = load_payload(data, DIALECT_NAME)  # raises the descriptive error
            if type(obj) is not dict:
                obj = as_obj(obj, f"{DIALECT_NAME}: event")
            index = obj.get("contentBlockIndex")
            delta = obj.get("delta")
            # The hot path: one event per few characters of arguments.
            if type(delta) is dict and type(index) is int and index in self._tools:
                tool = delta.get("toolUse")
                if type(tool) is dict:
                    fragment = tool.get("input")
                    if type(fragment) is str:
                        return [ArgsPart(0, index, fragment)]
            return self._delta(self._index(obj), as_obj(delta, f"{DIALECT_NAME}: delta"))
        obj = load_payload(data, DIALECT_NAME)
        if event == "contentBlockStart":
            return self._start(self._index(obj), as_obj(obj.get("start"), f"{DIALECT_NAME}: start"))
        if event == "contentBlockStop":
            return self._stop(self._index(obj))
        if event == "messageStop":
            stop = as_str(obj.get("stopReason"), f"{DIALECT_NAME}: stopReason")
            if stop is None:
                raise RemoteProtocolError(
                    f"{DIALECT_NAME}: messageStop has no stopReason", raw=data
                )
            return [
                finish_part(RAW_FINISH_REASONS, stop),
                *unread_fields(DIALECT_NAME, obj, _STOP_READ),
            ]
        if event == "metadata":
            parts: list[Part] = [
                *unread_fields(DIALECT_NAME, obj, _METADATA_READ)
            ]  # metrics, trace...
            usage = obj.get("usage")
            if usage is not None:
                parts.append(UsagePart(usage_from_bedrock(as_obj(usage, f"{DIALECT_NAME}: usage"))))
            parts.append(StreamEndPart())
            return parts
        if event == "messageStart":  # the role: always the assistant's
            return []
        return [unknown_part(DIALECT_NAME, event, obj, self.quirks)]

    @staticmethod
    def _index(obj: dict[str, Any]) -> int:
        index = as_int(obj.get("contentBlockIndex"), f"{DIALECT_NAME}: contentBlockIndex")
        if index is None:
            raise RemoteProtocolError(
                f"{DIALECT_NAME}: a content block event has no contentBlockIndex"
            )
        return index

    def _start(self, index: int, start: dict[str, Any]) -> list[Part]:
        tool = start.get("toolUse")
        if tool is None:  # a toolResult or image block: nothing the client runs
            return self._unknown_blocks(start)
        tool = as_obj(tool, f"{DIALECT_NAME}: toolUse")
        if index in self._started:  # another call in its place: never a second call there
            raise RemoteProtocolError(f"{DIALECT_NAME}: tool use block {index} started twice")
        self._started.add(index)
        self._tools.add(index)
        self._tool_digits[str(index)] = self._tool_digits[str(index).encode()] = index
        self._calls += 1
        return [
            CallPart(
                id=as_str(tool.get("toolUseId"), f"{DIALECT_NAME}: toolUseId"),
                index=index,
                name=as_str(tool.get("name"), f"{DIALECT_NAME}: tool name"),
                args_default={},
                new=True,
            )
        ]

    def _delta(self, index: int, delta: dict[str, Any]) -> list[Part]:
        if "text" in delta:
            text = as_str(delta["text"], f"{DIALECT_NAME}: text") or ""
            return [TextPart(text)] if text else []
        if "toolUse" in delta:
            if index not in self._tools:
                raise RemoteProtocolError(
                    f"{DIALECT_NAME}: toolUse delta for block {index}, never started"
                )
            tool = as_obj(delta["toolUse"], f"{DIALECT_NAME}: toolUse delta")
            return [
                ArgsPart(
                    0, index, as_str(tool.get("input"), f"{DIALECT_NAME}: toolUse input") or ""
                )
            ]
        if REASONING in delta:
            reasoning = as_obj(delta[REASONING], f"{DIALECT_NAME}: reasoningContent")
            block = self._reasoning.setdefault(index, _Reasoning())
            for key, into in (("signature", block.signature), ("redactedContent", block.redacted)):
                if key in reasoning:
                    into.append(as_str(reasoning[key], f"{DIALECT_NAME}: {key}") or "")
            text = as_str(reasoning.get("text"), f"{DIALECT_NAME}: reasoning text") or ""
            if text:
                block.text.append(text)
                return [ReasoningPart(text)]
            return []
        # Citation, image and toolResult deltas carry nothing a client runs.
        return self._unknown_blocks(delta)

    def _unknown_blocks(self, blocks: dict[str, Any]) -> list[Part]:
        """A block start, delta or whole block of a kind toolwire does not read:
        an unknown item per kind (``citation``, ``toolResult``, ``image``...)."""
        return [
            unknown_part(DIALECT_NAME, kind, {kind: value}, self.quirks)
            for kind, value in blocks.items()
            if value is not None
        ]

    def _stop(self, index: int) -> list[Part]:
        if index in self._tools:
            self._tools.discard(index)
            self._tool_digits.pop(str(index), None)
            self._tool_digits.pop(str(index).encode(), None)
            return [CallDone(index=index)]
        reasoning = self._reasoning.pop(index, None)
        if reasoning is not None:
            return [StatePart(self._state(reasoning.block()))]
        return []

    def _state(self, block: dict[str, Any]) -> dict[str, Any]:
        item: dict[str, Any] = {"type": REASONING, REASONING: block}
        # Reasoning after some calls (interleaved) goes back after them.
        return {**item, POSITION_KEY: self._calls} if self._calls else item

    def decode_response(self, body: dict[str, Any]) -> list[Part]:
        """A whole ``Converse`` response: what its stream would give."""
        output = as_obj(body.get("output"), f"{DIALECT_NAME}: output")
        message = as_obj(output.get("message"), f"{DIALECT_NAME}: output.message")
        parts: list[Part] = []
        for index, raw in enumerate(as_list(message.get("content"), f"{DIALECT_NAME}: content")):
            block = as_obj(raw, f"{DIALECT_NAME}: content block")
            if "text" in block:
                parts.append(TextPart(as_str(block["text"], f"{DIALECT_NAME}: text") or ""))
            elif "toolUse" in block:
                tool = as_obj(block["toolUse"], f"{DIALECT_NAME}: toolUse")
                start = {"toolUse": tool}
                (call,) = self._start(index, start)
                assert isinstance(call, CallPart)
                call.args_value = as_obj(tool.get("input", {}), f"{DIALECT_NAME}: toolUse input")
                parts += [call, *self._stop(index)]
            elif REASONING in block:
                reasoning = as_obj(block[REASONING], f"{DIALECT_NAME}: reasoningContent")
                text = as_obj(reasoning.get("reasoningText", {}), f"{DIALECT_NAME}: reasoningText")
                if text.get("text"):
                    parts.append(
                        ReasoningPart(as_str(text["text"], f"{DIALECT_NAME}: reasoning") or "")
                    )
                parts.append(StatePart(self._state(reasoning)))
            else:
                parts += self._unknown_blocks(block)
        parts += unread_fields(DIALECT_NAME, body, _RESPONSE_READ)  # metrics, trace...
        stop = as_str(body.get("stopReason"), f"{DIALECT_NAME}: stopReason")
        if stop is not None:
            parts.append(finish_part(RAW_FINISH_REASONS, stop))
        usage = body.get("usage")
        if usage is not None:
            parts.append(UsagePart(usage_from_bedrock(as_obj(usage, f"{DIALECT_NAME}: usage"))))
        parts.append(StreamEndPart())
        return parts
