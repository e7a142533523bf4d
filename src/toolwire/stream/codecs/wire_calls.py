"""Tool calls as a stream sent them, before any decoding: what ``toolwire
conform`` compares with the decoded result.

The decoder absorbs a server's departures from its dialect (an id it mints,
a call's rest under another index joined to its call, a repeated object
dropped), so its result alone cannot tell them. :func:`read_wire` reads the
same payloads the decoder read, each call as the wire has it: the chunk that
opened it (with or without an id, with or without argument text), the
argument text of the chunks after it, arguments sent as a JSON value rather
than a string, and argument text under an index no opener named. It never
repairs or joins anything; the verdicts are the checker's
(:mod:`toolwire.testing.conform`).

One reader per dialect that streams calls by index: Chat Completions,
Anthropic Messages and OpenAI Responses.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from toolwire.errors import UsageError
from toolwire.stream.jsonio import dumps

__all__ = ["READERS", "WireCall", "WireReading", "read_wire", "trailing_repeat"]


@dataclass
class WireCall:
    """One call as the wire sent it, under one index (a key of the wire's own)."""

    index: str
    """Where the wire put it: a tool-call index, a content block, an output item."""
    opened: bool = False
    """A chunk opened it (named it with an id or a name); ``False``: argument
    text arrived under an index no chunk opened."""
    id: str | None = None
    name: str | None = None
    opener_args: str = ""
    """Argument text the opening chunk itself carried."""
    pieces: list[str] = field(default_factory=list)
    """Argument text of the chunks after the opener, in order."""
    as_value: bool = False
    """Arguments arrived as a JSON value (an object) rather than as text."""

    @property
    def text(self) -> str:
        """The call's whole argument text, as sent."""
        return self.opener_args + "".join(self.pieces)


@dataclass
class WireReading:
    """The calls of a stream's first choice, in the order the wire opened them."""

    calls: list[WireCall] = field(default_factory=list)
    finish: str | None = None
    """The finish word as sent (``tool_calls``, ``length``, ``max_tokens``...)."""
    payloads: int = 0

    latest: dict[str, WireCall] = field(default_factory=dict, repr=False)
    """The latest call under each index."""
    other_blocks: set[str] = field(default_factory=set, repr=False)
    """Indexes of blocks that are not client calls (Anthropic's server tools)."""

    def call(self, index: str) -> WireCall:
        """The latest call under ``index``, added on its first sight."""
        call = self.latest.get(index)
        return call if call is not None else self.another(index)

    def another(self, index: str) -> WireCall:
        """A new call under ``index`` (a server that reuses an index)."""
        call = self.latest[index] = WireCall(index)
        self.calls.append(call)
        return call


def trailing_repeat(text: str) -> bool:
    """Whether ``text`` is one JSON object and then the same object again
    (whitespace between and around them aside)."""
    decoder = json.JSONDecoder()
    stripped = text.strip()
    try:
        first, end = decoder.raw_decode(stripped)
        rest = stripped[end:].strip()
        if not rest or not isinstance(first, dict):
            return False
        second, stop = decoder.raw_decode(rest)
    except ValueError:
        return False
    return second == first and not rest[stop:].strip()


def _load(data: str) -> dict[str, Any] | None:
    try:
        obj = json.loads(data)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _args(call: WireCall, value: Any, *, opener: bool) -> None:
    if value is None or value == "":
        return
    if not isinstance(value, str):
        call.as_value = True
        value = dumps(value)
    if opener:
        call.opener_args += value
    else:
        call.pieces.append(value)


def _open(call: WireCall, call_id: Any, name: Any) -> bool:
    """Mark ``call`` opened when this chunk names it; whether it did now."""
    if call.opened or not (call_id or name):
        return False
    call.opened = True
    call.id = call_id if isinstance(call_id, str) and call_id else None
    call.name = name if isinstance(name, str) else None
    return True


def _another(call: WireCall, call_id: Any, name: Any) -> bool:
    """Whether a chunk naming ``call_id`` and ``name`` is another call than
    ``call``, at the same index: a new id, or a call opening where text no
    opener named went before."""
    if call.opened:
        return bool(call_id and call.id and call_id != call.id)
    return bool(call.pieces and (call_id or name))


def _openai_chat(reading: WireReading, event: str, obj: dict[str, Any]) -> None:
    choices = obj.get("choices")
    for choice in choices if isinstance(choices, list) else ():
        if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
            continue
        delta = choice.get("delta") or choice.get("message") or {}
        calls = delta.get("tool_calls") if isinstance(delta, dict) else None
        legacy = delta.get("function_call") if isinstance(delta, dict) else None
        if not calls and isinstance(legacy, dict):  # the deprecated single call
            calls = [{"index": "function_call", "function": legacy}]
        for position, tc in enumerate(calls if isinstance(calls, list) else ()):
            if not isinstance(tc, dict):
                continue
            index = str(tc.get("index", position))
            fn = tc.get("function")
            fn = fn if isinstance(fn, dict) else {}
            call = reading.call(index)
            call_id, name = tc.get("id"), fn.get("name")
            if _another(call, call_id, name):
                call = reading.another(index)
            opened = _open(call, call_id, name)
            _args(call, fn.get("arguments"), opener=opened)
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            reading.finish = finish


def _anthropic(reading: WireReading, event: str, obj: dict[str, Any]) -> None:
    kind = obj.get("type", event)
    index = str(obj.get("index"))
    if kind == "message_start":  # complete blocks inside it, as a few servers send
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for position, block in enumerate(content if isinstance(content, list) else ()):
            _block(reading, str(position), block)
    elif kind == "content_block_start":
        _block(reading, index, obj.get("content_block"))
    elif kind == "content_block_delta" and index not in reading.other_blocks:
        delta = obj.get("delta")
        if isinstance(delta, dict) and delta.get("type") == "input_json_delta":
            _args(reading.call(index), delta.get("partial_json"), opener=False)
    elif kind == "message_delta":
        delta = obj.get("delta")
        if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
            reading.finish = delta["stop_reason"]


def _block(reading: WireReading, index: str, block: Any) -> None:
    """A content block's start: a client tool call opens; any other block
    (text, a server tool's call) keeps its deltas to itself."""
    if not isinstance(block, dict) or block.get("type") != "tool_use":
        reading.other_blocks.add(index)
        return
    reading.other_blocks.discard(index)
    call = reading.call(index)
    _open(call, block.get("id"), block.get("name"))
    value = block.get("input")
    if value:  # ``{}`` is the usual opener, before the deltas; an object is the dialect's
        call.opener_args += value if isinstance(value, str) else dumps(value)


def _responses(reading: WireReading, event: str, obj: dict[str, Any]) -> None:
    kind = obj.get("type", event)
    index = str(obj.get("output_index"))
    if kind == "response.output_item.added":
        item = obj.get("item")
        if isinstance(item, dict) and item.get("type") == "function_call":
            call = reading.call(index)
            _open(call, item.get("call_id"), item.get("name"))
            _args(call, item.get("arguments"), opener=True)
    elif kind == "response.function_call_arguments.delta":
        _args(reading.call(index), obj.get("delta"), opener=False)
    elif kind in ("response.completed", "response.incomplete", "response.failed"):
        response = obj.get("response")
        if isinstance(response, dict):
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            reading.finish = str(reason or response.get("status"))


READERS: dict[str, Callable[[WireReading, str, dict[str, Any]], None]] = {
    "openai-chat": _openai_chat,
    "anthropic-messages": _anthropic,
    "openai-responses": _responses,
}
"""The dialects whose calls :func:`read_wire` reads."""


def read_wire(dialect: str, payloads: Iterable[tuple[str, str]]) -> WireReading:
    """The calls of the first choice, as ``payloads`` (each ``(event name,
    data)``, as framed) sent them. A payload that is no JSON object is
    counted and skipped (``[DONE]``, a ping).

    Raises:
        UsageError: the dialect has no reader here (see :data:`READERS`).
    """
    reader = READERS.get(dialect)
    if reader is None:
        known = ", ".join(READERS)
        raise UsageError(f"no wire reader for {dialect!r} (known: {known})")
    reading = WireReading()
    for event, data in payloads:
        reading.payloads += 1
        obj = _load(data)
        if obj is not None:
            reader(reading, event, obj)
    return reading
