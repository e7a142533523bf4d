"""Gemini ``generateContent`` / ``streamGenerateContent`` (Google AI and Vertex AI).

Each chunk is a ``GenerateContentResponse``: ``candidates[i].content.parts``
holding text (``thought: true`` for reasoning) and ``functionCall`` parts,
whole, with ``args`` as an object and usually no id (toolwire mints one).
Several calls, even to the same function, may share one chunk: each part is
its own call. A whole (non-streamed) response is one such object, read by
the same code: streamed and whole give the same result.

Vertex AI can also stream arguments (``streamFunctionCallArguments``): a part
``{name, willContinue: true}`` opens a call, then parts with ``partialArgs``
set values by JSONPath (``$.a.b[0].c``, see ``_vertex.py``). The call ends
with an empty ``functionCall: {}``, with a ``partialArgs`` part lacking
``willContinue``, with the next name-bearing part, or with the candidate's
``finishReason``. ``thoughtSignature`` on a part must be sent back with that
part: it is kept as provider state (on a call's part, also when it comes on
one of its ``partialArgs`` parts).

A part of a built-in tool (beside custom ones: ``toolCall`` /
``toolResponse``, ``executableCode`` / ``codeExecutionResult``) or of media
(``inlineData``, ``fileData``) is kept whole, signature included, as a
provider-state item ``{"type": "part", "part": {...}}`` with where it stood
among the text and the calls, and goes back there; any other part is an
``UnknownItem`` (google-genai's ``types.Part`` lists the fields), and so is
a candidate's or a response's field the codec does not read (grounding,
URL context, safety ratings...: nothing the API wants back). References:
https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent
https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling
"""

from __future__ import annotations

from typing import Any, Final

from toolwire.errors import RemoteProtocolError
from toolwire.stream.codecs import structured
from toolwire.stream.codecs._common import (
    DONE,
    UnreadFields,
    as_int,
    as_list,
    as_obj,
    as_str,
    error_event,
    finish_part,
    load_frame,
    meta_part,
    thinking_usage,
    unknown_part,
)
from toolwire.stream.codecs._dialect import Capabilities, ProviderInfo, WireDialect
from toolwire.stream.codecs._vertex import ArgsBuilder, PartialArgs, Piece, parse_path
from toolwire.stream.codecs.emulation import gemini as emulation
from toolwire.stream.codecs.gemini_request import (
    _PART,
    DIALECT_NAME,
    _request_path,
    _route_target,
    _tool_schemas,
    encode_contents,
    encode_request,
    encode_tools,
    tool_schemas,
)
from toolwire.stream.framing import FramingKind
from toolwire.stream.parts import (
    POSITION_KEY,
    TEXT_POSITION_KEY,
    CallPart,
    ErrorPart,
    FinishPart,
    Part,
    ReasoningPart,
    StatePart,
    StreamEndPart,
    TextPart,
    TrailerPart,
    UsagePart,
)
from toolwire.types import FinishReason, Usage

__all__ = [
    "DIALECT",
    "RAW_FINISH_REASONS",
    "GeminiCodec",
    "encode_contents",
    "encode_request",
    "encode_tools",
    "tool_schemas",
    "usage_from_gemini",
]


RAW_FINISH_REASONS: Final[dict[str, FinishReason]] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
    "LANGUAGE": "content_filter",
    "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error",
}
"""Gemini's ``finishReason`` values in toolwire's vocabulary."""

_KEPT_FIELDS = frozenset(
    {
        "toolCall",
        "toolResponse",
        "executableCode",
        "codeExecutionResult",
        "inlineData",
        "fileData",
        "functionResponse",
    }
)
"""A part holding one of these (a built-in tool's call or result, media the
model made) is kept whole and sent back in place."""


_USAGE: Final = "usageMetadata"


def usage_from_gemini(raw: dict[str, Any]) -> Usage:
    """``usageMetadata`` as a :class:`Usage`.

    ``output_tokens`` counts thinking tokens too (``candidatesTokenCount`` +
    ``thoughtsTokenCount``), as OpenAI's ``completion_tokens`` does.
    """
    return thinking_usage(
        raw,
        DIALECT_NAME,
        _USAGE,
        output="candidatesTokenCount",
        thoughts="thoughtsTokenCount",
        prompt="promptTokenCount",
        total="totalTokenCount",
        cached="cachedContentTokenCount",
    )


_CANDIDATE_READ = frozenset({"index", "content", "finishReason"})
_RESPONSE_READ = frozenset({"candidates", "modelVersion", "responseId", "usageMetadata"})
"""The candidate and response fields the codec reads; any other
(``groundingMetadata``, ``urlContextMetadata``, ``safetyRatings``,
``citationMetadata``, ``continuationToken``..., and ``promptFeedback`` beside
candidates) is handed on as an ``UnknownItem``."""


class _Streamed:
    """A Vertex call whose arguments arrive as partialArgs."""

    __slots__ = ("builder", "partial")

    def __init__(self) -> None:
        self.builder = ArgsBuilder()
        self.partial = PartialArgs()


class GeminiCodec:
    """Decodes GenerateContentResponse chunks (and whole responses) into parts."""

    dialect = DIALECT_NAME
    framings: frozenset[FramingKind] = frozenset({"sse", "json-array"})

    def __init__(self) -> None:
        self._unread = UnreadFields(DIALECT_NAME)
        self._open: dict[int, _Streamed] = {}
        self._calls: dict[int, int] = {}
        self._text: dict[int, int] = {}  # characters of answer text per candidate
        self._meta_seen = False
        self.quirks: set[str] = set()

    def decode(self, event: str, data: str) -> list[Part]:
        obj = load_frame(data, DIALECT_NAME, self.quirks)
        return [TrailerPart(DONE)] if obj is None else self._response(obj)

    def decode_response(self, body: dict[str, Any]) -> list[Part]:
        """A whole ``generateContent`` response: what its stream would give."""
        feedback = body.get("promptFeedback")
        blocked = isinstance(feedback, dict) and feedback.get("blockReason")
        if not body.get("candidates") and not blocked and "error" not in body:
            raise RemoteProtocolError("the response has no candidates")
        return [*self._response(body), StreamEndPart()]

    def _response(self, obj: dict[str, Any]) -> list[Part]:
        if "error" in obj and "candidates" not in obj:
            return [ErrorPart(error_event(obj, DIALECT_NAME))]
        parts: list[Part] = []
        if not self._meta_seen:
            self._meta_seen = True
            parts.append(meta_part(obj.get("modelVersion"), obj.get("responseId")))
        candidates = as_list(obj.get("candidates"), f"{DIALECT_NAME}: candidates")
        for candidate in candidates:
            self._candidate(as_obj(candidate, f"{DIALECT_NAME}: candidate"), parts)
        feedback = obj.get("promptFeedback")
        read = _RESPONSE_READ
        if not candidates and isinstance(feedback, dict) and feedback.get("blockReason"):
            # A prompt blocked before generation: no candidate, a block reason.
            parts.append(FinishPart("content_filter", str(feedback["blockReason"])))
            read = read | {"promptFeedback"}
        parts += self._unread.parts(obj, read)
        usage = obj.get("usageMetadata")
        if isinstance(usage, dict) and any(k.endswith("TokenCount") for k in usage):
            parts.append(UsagePart(usage_from_gemini(usage)))
        return parts

    def _candidate(self, candidate: dict[str, Any], parts: list[Part]) -> None:
        c = as_int(candidate.get("index"), f"{DIALECT_NAME}: candidate index") or 0
        content = candidate.get("content")
        if content:
            for part in as_list(
                as_obj(content, f"{DIALECT_NAME}: content").get("parts"), f"{DIALECT_NAME}: parts"
            ):
                self._part(as_obj(part, f"{DIALECT_NAME}: part"), c, parts)
        parts += self._unread.parts(candidate, _CANDIDATE_READ, c)
        finish = candidate.get("finishReason")
        if finish:
            raw = as_str(finish, f"{DIALECT_NAME}: finishReason") or ""
            self._close_streamed(c, parts)
            parts.append(finish_part(RAW_FINISH_REASONS, raw, c))

    def _part(self, part: dict[str, Any], c: int, parts: list[Part]) -> None:
        if not _KEPT_FIELDS.isdisjoint(part):
            # A built-in tool's part (or media): kept whole, in its place.
            item: dict[str, Any] = {"type": _PART, "part": part}
            calls, chars = self._calls.get(c, 0), self._text.get(c, 0)
            if calls or chars:
                item = {**item, POSITION_KEY: calls, TEXT_POSITION_KEY: chars}
            parts.append(StatePart(item, c))
            return
        signature = part.get("thoughtSignature")
        if "functionCall" in part:
            continued = c in self._open  # a Vertex call streamed in partialArgs parts
            opened = self._function_call(
                as_obj(part["functionCall"], f"{DIALECT_NAME}: functionCall"), c, parts
            )
            if signature and (opened or continued):
                # The signature of the call this part opened or continues.
                position = self._calls.get(c, 0) - 1
                state = {"type": "thought_signature", "call": position, "signature": signature}
                parts.append(StatePart(state, c))
            elif signature:
                parts.append(StatePart({"type": "thought_signature", "signature": signature}, c))
            return
        text = part.get("text")
        if isinstance(text, str):
            if text:
                if part.get("thought"):
                    parts.append(ReasoningPart(text, c))
                else:
                    self._text[c] = self._text.get(c, 0) + len(text)
                    parts.append(TextPart(text, c))
            if signature:
                parts.append(StatePart({"type": "thought_signature", "signature": signature}, c))
        elif text is not None:
            raise RemoteProtocolError(f"{DIALECT_NAME}: text part is not a string")
        else:
            if signature:
                parts.append(StatePart({"type": "thought_signature", "signature": signature}, c))
            data = [k for k in part if k not in ("thoughtSignature", "thought_signature")]
            if data or not signature:
                kind = data[0] if data else "empty part"
                parts.append(unknown_part(DIALECT_NAME, kind, part, self.quirks, c))

    def _function_call(self, fc: dict[str, Any], c: int, parts: list[Part]) -> bool:
        """Read a ``functionCall`` part; say whether it opened a call."""
        name = as_str(fc.get("name"), f"{DIALECT_NAME}: functionCall name")
        if not name:
            self._partial_args(fc, c, parts)
            return False
        self._close_streamed(c, parts)
        call_id = as_str(fc.get("id"), f"{DIALECT_NAME}: functionCall id")
        self._calls[c] = self._calls.get(c, 0) + 1
        if fc.get("willContinue"):
            self.quirks.add("arguments as Vertex partialArgs")
            self._open[c] = _Streamed()
            parts.append(CallPart(choice=c, id=call_id, name=name, new=True))
            self._partial_args(fc, c, parts)
            return True
        args = fc.get("args")
        if args is not None and not isinstance(args, dict):
            raise RemoteProtocolError(f"{DIALECT_NAME}: functionCall args is not an object")
        parts.append(
            CallPart(choice=c, id=call_id, name=name, args_value=args or {}, new=True, done=True)
        )
        return True

    def _partial_args(self, fc: dict[str, Any], c: int, parts: list[Part]) -> None:
        streamed = self._open.get(c)
        pieces = fc.get("partialArgs")
        if pieces:
            if streamed is None:
                raise RemoteProtocolError(f"{DIALECT_NAME}: partialArgs with no function call open")
            for item in as_list(pieces, f"{DIALECT_NAME}: partialArgs"):
                piece = _piece(as_obj(item, f"{DIALECT_NAME}: partialArgs item"))
                streamed.builder.apply(piece)
                streamed.partial.pieces.append(piece)
            mark = len(streamed.partial.pieces)
            parts.append(CallPart(choice=c, partial=streamed.partial, mark=mark))
        if streamed is not None and not fc.get("willContinue"):
            # An empty functionCall, or a partialArgs part without
            # willContinue, ends the call.
            self._close_streamed(c, parts)

    def _close_streamed(self, c: int, parts: list[Part]) -> None:
        streamed = self._open.pop(c, None)
        if streamed is not None:
            parts.append(CallPart(choice=c, args_value=streamed.builder.value(), done=True))


def _piece(item: dict[str, Any]) -> Piece:
    """One ``partialArgs`` item, checked: ``(path, value, append)``."""
    path = as_str(item.get("jsonPath"), f"{DIALECT_NAME}: jsonPath")
    if not path:
        raise RemoteProtocolError(f"{DIALECT_NAME}: partialArgs item has no jsonPath")
    keys = parse_path(path)
    if "stringValue" in item:
        return keys, as_str(item["stringValue"], f"{DIALECT_NAME}: stringValue") or "", True
    if "numberValue" in item:
        number = item["numberValue"]
        if not isinstance(number, (int, float)) or isinstance(number, bool):
            raise RemoteProtocolError(f"{DIALECT_NAME}: numberValue is not a number")
        return keys, number, False
    if "boolValue" in item:
        flag = item["boolValue"]
        if not isinstance(flag, bool):
            raise RemoteProtocolError(f"{DIALECT_NAME}: boolValue is not a boolean")
        return keys, flag, False
    if "nullValue" in item:
        return keys, None, False
    raise RemoteProtocolError(f"{DIALECT_NAME}: partialArgs item at {path[:80]} carries no value")


DIALECT: Final = WireDialect(
    name=DIALECT_NAME,
    codec=GeminiCodec,
    capabilities=Capabilities(whole_responses=True),
    finish_reasons=RAW_FINISH_REASONS,
    usage=usage_from_gemini,
    sniff_shape=lambda obj: "candidates" in obj or "usageMetadata" in obj,
    whole_framing="json-array",
    paths=(":streamGenerateContent", ":generateContent"),
    stream_paths=(":streamGenerateContent",),
    routes=(
        "/v1beta/models/{target:path}",
        "/v1/models/{target:path}",
        "/v1/projects/{project}/locations/{region}/publishers/google/models/{target}",
    ),
    route_target=_route_target,
    base_path="/v1beta",
    encode_request=encode_request,
    tool_schemas=_tool_schemas,
    otel_provider="gcp.gemini",
    decode_request=emulation.decode_request,
    encoder=emulation.GeminiEncoder,
    request_path=_request_path,
    is_error_body=lambda body: (
        isinstance(body, dict) and body.get("error") is not None and "candidates" not in body
    ),
    structured_output=structured.GEMINI,
    provider=ProviderInfo(
        names=("gemini",),
        class_name="Gemini",
        demo_model="gemini-2.5-flash",
        structured_models=structured.GEMINI_MODELS,
        price_provider="google",
    ),
)
"""Google's ``generateContent`` (Gemini API and Vertex AI)."""
