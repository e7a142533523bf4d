"""Gemini ``streamGenerateContent`` (Google AI and Vertex AI).

Each chunk is a ``GenerateContentResponse``: ``candidates[i].content.parts``
holding text (``thought: true`` for reasoning) and ``functionCall`` parts,
whole, with ``args`` as an object and usually no id (toolwire mints one).
Several calls, even to the same function, may share one chunk: each part is
its own call.

Vertex AI can also stream arguments (``streamFunctionCallArguments``): a part
``{name, willContinue: true}`` opens a call, then parts with ``partialArgs``
set values by JSONPath (``$.a.b[0].c``): ``stringValue`` pieces are
concatenated (an empty one ends the string), ``numberValue``/``boolValue``/
``nullValue`` are assigned. The call ends with an empty ``functionCall: {}``,
with a ``partialArgs`` part lacking ``willContinue``, with the next
name-bearing part, or with the candidate's ``finishReason``.
``thoughtSignature`` on a part must be sent back with that part: it is kept as
provider state. References:
https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent
https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling
"""

from __future__ import annotations

import copy
import itertools
import re
from typing import Any

from toolwire.codecs._common import error_event, is_done_trailer, load_payload
from toolwire.codecs._parts import (
    CallPart,
    ErrorPart,
    FinishPart,
    Part,
    ReasoningPart,
    StatePart,
    TextPart,
    TrailerPart,
    UsagePart,
    as_int,
    as_list,
    as_obj,
    as_str,
    int_or_none,
    meta_part,
)
from toolwire.errors import RemoteProtocolError
from toolwire.types import Usage

__all__ = ["GeminiCodec", "set_json_path"]

API = "gemini"

_FINISH = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error",
}

_PATH_TOKEN = re.compile(r"""\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[(?:'([^']*)'|"([^"]*)")\]""")


def _parse_path(path: str) -> list[str | int]:
    if not path.startswith("$"):
        raise RemoteProtocolError(f"{API}: partialArgs jsonPath {path!r} does not start with '$'")
    keys: list[str | int] = []
    pos = 1
    while pos < len(path):
        m = _PATH_TOKEN.match(path, pos)
        if m is None:
            raise RemoteProtocolError(f"{API}: cannot read jsonPath {path!r} at {pos}")
        name, number, quoted1, quoted2 = m.groups()
        if number is not None:
            keys.append(int(number))
        else:
            keys.append(name if name is not None else (quoted1 if quoted1 is not None else quoted2))
        pos = m.end()
    return keys


def set_json_path(root: dict[str, Any], path: str, value: Any, *, append: bool) -> None:
    """Set (or, for strings with ``append``, extend) the value at a JSONPath,
    creating objects and arrays on the way."""
    keys = _parse_path(path)
    if not keys:
        raise RemoteProtocolError(f"{API}: partialArgs cannot replace the whole arguments object")
    node: Any = root
    for key, nxt in itertools.pairwise(keys):
        child_default: Any = [] if isinstance(nxt, int) else {}
        node = _child(node, key, child_default, path)
    last = keys[-1]
    if isinstance(last, int):
        if not isinstance(node, list):
            raise RemoteProtocolError(f"{API}: jsonPath {path!r} indexes a non-array")
        while len(node) <= last:
            node.append(None)
        if append and isinstance(node[last], str):
            node[last] += value
        else:
            node[last] = value
    else:
        if not isinstance(node, dict):
            raise RemoteProtocolError(f"{API}: jsonPath {path!r} names a key of a non-object")
        if append and isinstance(node.get(last), str):
            node[last] += value
        else:
            node[last] = value


def _child(node: Any, key: str | int, default: Any, path: str) -> Any:
    if isinstance(key, int):
        if not isinstance(node, list):
            raise RemoteProtocolError(f"{API}: jsonPath {path!r} indexes a non-array")
        while len(node) <= key:
            node.append(None)
        if node[key] is None:
            node[key] = default
        return node[key]
    if not isinstance(node, dict):
        raise RemoteProtocolError(f"{API}: jsonPath {path!r} names a key of a non-object")
    child = node.get(key)
    if child is None:
        child = node[key] = default
    return child


class _Streamed:
    """A Vertex call whose arguments arrive as partialArgs."""

    __slots__ = ("args", "choice")

    def __init__(self, choice: int) -> None:
        self.choice = choice
        self.args: dict[str, Any] = {}


class GeminiCodec:
    """Decodes GenerateContentResponse chunks into parts."""

    api = API

    def __init__(self) -> None:
        self._open: dict[int, _Streamed] = {}
        self._calls: dict[int, int] = {}
        self._meta_seen = False
        self.quirks: set[str] = set()

    def decode(self, event: str, data: str) -> list[Part]:
        if is_done_trailer(data):
            self.quirks.add("[DONE] line after the dialect's own end event")
            return [TrailerPart()]
        obj = load_payload(data, API)
        if "error" in obj and "candidates" not in obj:
            return [ErrorPart(error_event(obj, API))]
        parts: list[Part] = []
        if not self._meta_seen:
            self._meta_seen = True
            parts.append(meta_part(obj.get("modelVersion"), obj.get("responseId")))
        for candidate in as_list(obj.get("candidates"), f"{API}: candidates"):
            self._candidate(as_obj(candidate, f"{API}: candidate"), parts)
        usage = obj.get("usageMetadata")
        if isinstance(usage, dict) and any(k.endswith("TokenCount") for k in usage):
            parts.append(
                UsagePart(
                    Usage(
                        input_tokens=int_or_none(usage.get("promptTokenCount")),
                        output_tokens=int_or_none(usage.get("candidatesTokenCount")),
                        total_tokens=int_or_none(usage.get("totalTokenCount")),
                        reasoning_tokens=int_or_none(usage.get("thoughtsTokenCount")),
                        cached_tokens=int_or_none(usage.get("cachedContentTokenCount")),
                        raw=usage,
                    )
                )
            )
        return parts

    def _candidate(self, candidate: dict[str, Any], parts: list[Part]) -> None:
        c = as_int(candidate.get("index"), f"{API}: candidate index") or 0
        content = candidate.get("content")
        if content:
            for part in as_list(as_obj(content, f"{API}: content").get("parts"), f"{API}: parts"):
                self._part(as_obj(part, f"{API}: part"), c, parts)
        finish = candidate.get("finishReason")
        if finish:
            raw = as_str(finish, f"{API}: finishReason") or ""
            self._close_streamed(c, parts)
            reason = _FINISH.get(raw, raw.lower())
            if reason == "stop" and self._calls.get(c):
                reason = "tool_calls"
            parts.append(FinishPart(reason, raw, c))

    def _part(self, part: dict[str, Any], c: int, parts: list[Part]) -> None:
        signature = part.get("thoughtSignature")
        if "functionCall" in part:
            fc = as_obj(part["functionCall"], f"{API}: functionCall")
            name = as_str(fc.get("name"), f"{API}: functionCall name")
            if name:
                self._close_streamed(c, parts)
                call_id = as_str(fc.get("id"), f"{API}: functionCall id")
                position = self._calls.get(c, 0)
                self._calls[c] = position + 1
                if signature:
                    parts.append(
                        StatePart(
                            {"type": "thought_signature", "call": position, "signature": signature},
                            c,
                        )
                    )
                if fc.get("willContinue"):
                    self.quirks.add("arguments as Vertex partialArgs")
                    self._open[c] = _Streamed(c)
                    parts.append(CallPart(choice=c, id=call_id, name=name, new=True))
                    self._partial_args(fc, c, parts)
                    return
                args = fc.get("args")
                if args is not None and not isinstance(args, dict):
                    raise RemoteProtocolError(f"{API}: functionCall args is not an object")
                parts.append(
                    CallPart(
                        choice=c, id=call_id, name=name, args_value=args or {}, new=True, done=True
                    )
                )
                return
            self._partial_args(fc, c, parts)
            return
        text = part.get("text")
        if isinstance(text, str):
            if text:
                parts.append(ReasoningPart(text, c) if part.get("thought") else TextPart(text, c))
            if signature:
                parts.append(StatePart({"type": "thought_signature", "signature": signature}, c))
        elif text is not None:
            raise RemoteProtocolError(f"{API}: text part is not a string")

    def _partial_args(self, fc: dict[str, Any], c: int, parts: list[Part]) -> None:
        streamed = self._open.get(c)
        pieces = fc.get("partialArgs")
        if pieces:
            if streamed is None:
                raise RemoteProtocolError(f"{API}: partialArgs with no function call open")
            for piece in as_list(pieces, f"{API}: partialArgs"):
                self._apply(streamed, as_obj(piece, f"{API}: partialArgs item"))
            parts.append(CallPart(choice=c, partial=copy.deepcopy(streamed.args)))
        if streamed is not None and not fc.get("willContinue"):
            # An empty functionCall, or a partialArgs part without
            # willContinue, ends the call.
            self._close_streamed(c, parts)

    @staticmethod
    def _apply(streamed: _Streamed, piece: dict[str, Any]) -> None:
        path = as_str(piece.get("jsonPath"), f"{API}: jsonPath")
        if not path:
            raise RemoteProtocolError(f"{API}: partialArgs item has no jsonPath")
        if "stringValue" in piece:
            value = as_str(piece["stringValue"], f"{API}: stringValue") or ""
            set_json_path(streamed.args, path, value, append=True)
        elif "numberValue" in piece:
            number = piece["numberValue"]
            if not isinstance(number, (int, float)) or isinstance(number, bool):
                raise RemoteProtocolError(f"{API}: numberValue is not a number")
            set_json_path(streamed.args, path, number, append=False)
        elif "boolValue" in piece:
            flag = piece["boolValue"]
            if not isinstance(flag, bool):
                raise RemoteProtocolError(f"{API}: boolValue is not a boolean")
            set_json_path(streamed.args, path, flag, append=False)
        elif "nullValue" in piece:
            set_json_path(streamed.args, path, None, append=False)
        else:
            raise RemoteProtocolError(f"{API}: partialArgs item at {path} carries no value")

    def _close_streamed(self, c: int, parts: list[Part]) -> None:
        streamed = self._open.pop(c, None)
        if streamed is not None:
            parts.append(CallPart(choice=c, args_value=streamed.args, done=True))
