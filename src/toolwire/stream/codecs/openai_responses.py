"""OpenAI Responses API streams and responses (also Azure, Bedrock "mantle",
LM Studio, xAI, OpenRouter and others' Responses-compatible endpoints).

Every event's payload has a ``type`` (Bedrock puts the ``data:`` line before
the ``event:`` line, so the payload, not the SSE event name, is what counts).
A function call is an output item: ``response.output_item.added`` opens it
(with ``call_id`` and ``name``), ``response.function_call_arguments.delta``
streams its arguments keyed by ``output_index``, ``...arguments.done`` carries
the complete text (some servers send only that), ``response.output_item.done``
ends it. Reasoning items come first, so a call's ``output_index`` is often not
0; reasoning items are kept as provider state to be sent back (with their
place among the calls). Items of hosted tools (web search, MCP...) are
server-side calls. A whole (non-streamed) ``response`` object holds the same
items, read by the same code. A call is the call that started: an
``output_item.done`` that names another ``call_id`` or ``name`` makes it
invalid, and a call item is added once per ``output_index``. A background
response's stream reopened after a cut (``continue_after``) must go on
numbering its events one by one and name no other response (see
``_continuation.py``).
Reference: https://platform.openai.com/docs/api-reference/responses-streaming
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from toolwire.errors import RemoteProtocolError
from toolwire.stream.codecs import sdk, structured
from toolwire.stream.codecs._common import (
    DONE,
    as_int,
    as_list,
    as_obj,
    as_str,
    error_event,
    is_done_trailer,
    load_payload,
    meta_part,
    output_with_reasoning,
    token_count,
    unknown_part,
)
from toolwire.stream.codecs._continuation import Continuation, continuation, numbered, refused
from toolwire.stream.codecs._dialect import Capabilities, WireDialect
from toolwire.stream.codecs.emulation import openai_responses as emulation
from toolwire.stream.codecs.openai_responses_items import (
    ASKED_CALLS,
    PROGRESS_EVENTS,
    SERVER_ITEMS,
    STATE_ITEMS,
    changed_fields,
    generated_image,
    server_call,
)
from toolwire.stream.codecs.openai_responses_notices import (
    STEER_EVENTS,
    configuration_notice,
    input_transformations,
    steer_event,
)
from toolwire.stream.codecs.openai_responses_request import (
    DIALECT_NAME,
    PROVIDER,
    async_marked,
    custom_tool_schema,
    encode_input,
    encode_request,
    resume_path,
    resume_target,
    tool_schema,
)
from toolwire.stream.codecs.openai_responses_socket import RESPONSES_SOCKET
from toolwire.stream.codecs.openai_schema import strict_schemas, to_openai_strict
from toolwire.stream.framing import FramingKind
from toolwire.stream.jsonio import dumps
from toolwire.stream.jsonio import loads_fast as _loads
from toolwire.stream.parts import (
    POSITION_KEY,
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
    "ASKED_CALLS",
    "DIALECT",
    "INCOMPLETE_REASONS",
    "PROGRESS_EVENTS",
    "SERVER_ITEMS",
    "STATE_ITEMS",
    "OpenAIResponsesCodec",
    "custom_tool_schema",
    "encode_input",
    "encode_request",
    "tool_schema",
    "usage_from_responses",
]


INCOMPLETE_REASONS: Final[dict[str, FinishReason]] = {
    "max_output_tokens": "length",
    "max_messages": "length",
    "content_filter": "content_filter",
    "steered": "steered",
}
"""``incomplete_details.reason`` values in toolwire's vocabulary (a response
that is ``completed`` ends in ``stop``, or ``tool_calls`` after calls; one
that refused, in ``refusal``); another reason is ``other``, never a limit."""

_CALL_KEYS = frozenset({"type", "id", "call_id", "name", "arguments", "input", "status"})

_TEXT_DELTAS = {"response.output_text.delta", "response.refusal.delta"}
_TEXT_DONE = {"response.output_text.done", "response.refusal.done"}
_REASONING_DELTAS = {"response.reasoning_text.delta", "response.reasoning_summary_text.delta"}
_REASONING_DONE = {"response.reasoning_text.done", "response.reasoning_summary_text.done"}


def usage_from_responses(raw: dict[str, Any]) -> Usage:
    """Responses usage (``input_tokens``...) as a :class:`Usage`;
    ``output_tokens`` includes reasoning (:func:`output_with_reasoning`)."""
    out_details = raw.get("output_tokens_details")
    out_details = out_details if isinstance(out_details, dict) else {}
    in_details = raw.get("input_tokens_details")
    in_details = in_details if isinstance(in_details, dict) else {}
    prompt = token_count(raw, "input_tokens", DIALECT_NAME)
    completion = token_count(raw, "output_tokens", DIALECT_NAME)
    reasoning = token_count(out_details, "reasoning_tokens", DIALECT_NAME, "output_tokens_details")
    total = token_count(raw, "total_tokens", DIALECT_NAME)
    output, reasoning = output_with_reasoning(prompt, completion, reasoning, total)
    return Usage(
        input_tokens=prompt,
        output_tokens=output,
        total_tokens=total,
        reasoning_tokens=reasoning,
        cached_tokens=token_count(
            in_details, "cached_tokens", DIALECT_NAME, "input_tokens_details"
        ),
        raw=raw,
    )


class OpenAIResponsesCodec:
    """Decodes Responses stream events (and whole responses) into parts."""

    dialect = DIALECT_NAME
    framings: frozenset[FramingKind] = frozenset({"sse"})

    def __init__(self) -> None:
        # (item_id, content_index) of text/reasoning that arrived as deltas,
        # so a later ``.done`` with the whole text is not counted twice.
        self._streamed: set[tuple[Any, Any]] = set()
        self._calls = 0
        self._refused = False
        self.quirks: set[str] = set()
        self._response: str | None = None  # the response's id
        self._number: int | None = None  # the last event's sequence_number
        self._continued: Continuation | None = None  # set when the stream was reopened
        # (call_id, name) of each call item, by output_index, as it was added.
        self._items: dict[int, tuple[str | None, str | None]] = {}
        self._handlers: dict[str, Callable[[dict[str, Any], list[Part]], None]] = {
            "response.function_call_arguments.done": self._arguments_done,
            "response.custom_tool_call_input.delta": self._custom_delta,
            "response.custom_tool_call_input.done": self._custom_done,
            "response.output_item.added": self._item_added,
            "response.output_item.done": self._item_done,
            "response.created": self._created,
            "response.in_progress": self._created,
            "response.completed": self._ended,
            "response.incomplete": self._ended,
            "response.failed": self._failed,
            "error": lambda obj, parts: parts.append(ErrorPart(error_event(obj, DIALECT_NAME))),
        }
        for kind in STEER_EVENTS:
            self._handlers[kind] = self._steer

    @property
    def cursor(self) -> tuple[str, str] | None:
        """``(response id, sequence_number of the last event decoded)``: a
        background response's stream resumes after it (``None`` before both
        are known)."""
        if self._response is None or self._number is None:
            return None
        return self._response, str(self._number)

    def continue_after(self, stream_id: str, after: str | None) -> None:
        """See :class:`~toolwire.stream.codecs.ContinuedCodec`: from now on
        each event's ``sequence_number`` must be the one after the last, and
        a response an event names must be ``stream_id``."""
        self._continued = continuation(DIALECT_NAME, self.cursor, stream_id, after)
        self._response = stream_id

    def decode(self, event: str, data: str) -> list[Part]:
        if '"response.function_call_arguments.delta"' in data[:64]:
            # The hot path: numbers travel inside the delta string, so the
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
        kind = obj.get("type") or event
        number = obj.get("sequence_number")
        if self._continued is not None:
            # OpenAI numbers a response's events one by one; ``starting_after=N``
            # streams those after N. The provider's own error is reported as such.
            if type(number) is int or kind != "error":
                self._number = numbered(self._continued, kind, number, self._number, data)
        elif type(number) is int:
            self._number = number
        parts: list[Part] = []
        if kind == "response.function_call_arguments.delta":
            delta = as_str(obj.get("delta"), f"{DIALECT_NAME}: delta") or ""
            parts.append(CallPart(index=self._index(obj), args=delta))
        elif kind in _TEXT_DELTAS or kind in _REASONING_DELTAS:
            self._text_delta(kind, obj, parts)
        elif kind in _TEXT_DONE or kind in _REASONING_DONE:
            self._text_done(kind, obj, parts)
        else:
            handler = self._handlers.get(kind)
            if handler is not None:
                handler(obj, parts)
            elif kind not in PROGRESS_EVENTS:
                parts.append(unknown_part(DIALECT_NAME, str(kind), obj, self.quirks))
        return parts

    def decode_response(self, body: dict[str, Any]) -> list[Part]:
        """A whole ``response`` object: what its stream would give."""
        parts: list[Part] = []
        output = body.get("output")
        if not isinstance(output, list):
            raise RemoteProtocolError("the response has no 'output' array")
        self._created({"response": body}, parts)
        reasoning = 0
        for index, item in enumerate(output):
            item = as_obj(item, f"{DIALECT_NAME}: output item")
            kind = item.get("type")
            if kind == "message":
                for part in as_list(item.get("content"), f"{DIALECT_NAME}: content"):
                    self._content_part(as_obj(part, f"{DIALECT_NAME}: content part"), parts)
            elif kind == "reasoning":
                summary = as_list(item.get("summary"), f"{DIALECT_NAME}: summary")
                for part in [*summary, *as_list(item.get("content"), f"{DIALECT_NAME}: content")]:
                    text = part.get("text") if isinstance(part, dict) else None
                    if isinstance(text, str):
                        parts.append(ReasoningPart("\n\n" + text if reasoning else text))
                        reasoning += 1
            elif kind == "function_call":
                self._item_added({"output_index": index, "item": {**item, "arguments": ""}}, parts)
            elif kind == "custom_tool_call":
                self._item_added({"output_index": index, "item": {**item, "input": ""}}, parts)
            self._item_done({"output_index": index, "item": item}, parts)
        status = body.get("status")
        if status == "failed":
            self._failed({"response": body}, parts)
        elif status == "incomplete":
            self._ended({"type": "response.incomplete", "response": body}, parts)
        else:
            self._ended({"type": "response.completed", "response": body}, parts)
        return parts

    def _content_part(self, part: dict[str, Any], parts: list[Part]) -> None:
        if part.get("type") == "output_text" and isinstance(part.get("text"), str):
            parts.append(TextPart(part["text"]))
        elif part.get("type") == "refusal" and isinstance(part.get("refusal"), str):
            self._refused = True
            parts.append(TextPart(part["refusal"]))

    def _text_delta(self, kind: str, obj: dict[str, Any], parts: list[Part]) -> None:
        self._streamed.add((obj.get("item_id"), obj.get("content_index", obj.get("summary_index"))))
        text = as_str(obj.get("delta"), f"{DIALECT_NAME}: delta") or ""
        if kind == "response.refusal.delta":
            self._refused = True
        if text:
            parts.append(TextPart(text) if kind in _TEXT_DELTAS else ReasoningPart(text))

    def _text_done(self, kind: str, obj: dict[str, Any], parts: list[Part]) -> None:
        key = (obj.get("item_id"), obj.get("content_index", obj.get("summary_index")))
        if kind == "response.refusal.done":
            self._refused = True
        if key not in self._streamed:
            field = "refusal" if kind == "response.refusal.done" else "text"
            text = as_str(obj.get(field), f"{DIALECT_NAME}: {field}") or ""
            if text:
                parts.append(TextPart(text) if kind in _TEXT_DONE else ReasoningPart(text))

    def _arguments_done(self, obj: dict[str, Any], parts: list[Part]) -> None:
        final = as_str(obj.get("arguments"), f"{DIALECT_NAME}: arguments")
        if final is not None:
            parts.append(CallPart(index=self._index(obj), args_final=final))

    def _custom_delta(self, obj: dict[str, Any], parts: list[Part]) -> None:
        delta = as_str(obj.get("delta"), f"{DIALECT_NAME}: delta") or ""
        parts.append(CallPart(index=self._index(obj), args=dumps(delta)[1:-1]))

    def _custom_done(self, obj: dict[str, Any], parts: list[Part]) -> None:
        final = as_str(obj.get("input"), f"{DIALECT_NAME}: input")
        if final is not None:
            parts.append(CallPart(index=self._index(obj), args_final=dumps({"input": final})))

    def _item_added(self, obj: dict[str, Any], parts: list[Part]) -> None:
        item = as_obj(obj.get("item"), f"{DIALECT_NAME}: item")
        kind = item.get("type")
        if kind != "custom_tool_call" and kind != "function_call":
            return
        index = self._index(obj)
        if index in self._items:  # a replay, or another call in its place
            what = f"output item {index} (a {kind}) was added twice"
            raise refused(self._continued, DIALECT_NAME, what, dumps(obj))
        self._calls += 1
        call_id = as_str(item.get("call_id"), f"{DIALECT_NAME}: call_id")
        name = as_str(item.get("name"), f"{DIALECT_NAME}: name")
        self._items[index] = (call_id or None, name or None)
        if kind == "custom_tool_call":
            # Freeform input: the arguments {"input": ...}, streamed as JSON text.
            text = as_str(item.get("input"), f"{DIALECT_NAME}: input") or ""
            args: str | None = '{"input":"' + dumps(text)[1:-1]
        else:
            args = as_str(item.get("arguments"), f"{DIALECT_NAME}: arguments") or None
        part = CallPart(index=index, id=call_id, name=name, args=args, new=True)
        part.asynchronous = item.get("async") is True
        parts.append(part)

    def _item_done(self, obj: dict[str, Any], parts: list[Part]) -> None:
        item = as_obj(obj.get("item"), f"{DIALECT_NAME}: item")
        item_type = item.get("type")
        if item_type == "function_call" or item_type == "custom_tool_call":
            call_id = as_str(item.get("call_id"), f"{DIALECT_NAME}: call_id")
            name = as_str(item.get("name"), f"{DIALECT_NAME}: name")
            if item_type == "custom_tool_call":
                text = as_str(item.get("input"), f"{DIALECT_NAME}: input")
                final = None if text is None else dumps({"input": text})
            else:
                final = as_str(item.get("arguments"), f"{DIALECT_NAME}: arguments")
            index = self._index(obj)
            part = CallPart(index=index, id=call_id, name=name, args_final=final, done=True)
            part.cut = item.get("status") == "incomplete"
            part.asynchronous = item.get("async") is True
            started = self._items.get(index)
            if started is not None:
                # The call as it started, never another one: what its end
                # changed makes it invalid.
                part.changed = changed_fields(started, (call_id, name))
                if part.changed is not None:
                    call_id = part.id = started[0]
                    part.name = None
            parts.append(part)
            fields = {k: v for k, v in item.items() if k not in _CALL_KEYS and v is not None}
            if call_id and (fields or item_type == "custom_tool_call"):
                # caller, namespace...: sent back with the call.
                state = {"type": "call_item", "call_id": call_id, "item_type": item_type}
                parts.append(StatePart({**state, "fields": fields}))
        elif item_type in ASKED_CALLS and (
            item_type != "tool_search_call" or item.get("execution") == "client"
        ):
            self._asked_call(str(item_type), item, self._index(obj), parts)
        elif item_type in STATE_ITEMS:
            if item_type == "configuration_update":
                parts.append(configuration_notice(item))
            # After some calls, it goes back after them.
            parts.append(StatePart({**item, POSITION_KEY: self._calls} if self._calls else item))
        elif item_type in SERVER_ITEMS:
            parts.append(server_call(item))
            image = generated_image(item)  # kept, not sent back: AssistantMessage.parts
            if image is not None:
                parts.append(StatePart(image))
        elif item_type != "message":
            parts.append(unknown_part(DIALECT_NAME, str(item_type), item, self.quirks))

    def _asked_call(self, kind: str, item: dict[str, Any], index: int, parts: list[Part]) -> None:
        """A call the provider asks the application to answer (see ``ASKED_CALLS``)."""
        self._calls += 1
        fields = {k: v for k, v in item.items() if k != "type"}
        if kind == "mcp_approval_request":
            call_id = as_str(item.get("id"), f"{DIALECT_NAME}: id")
            name = as_str(item.get("name"), f"{DIALECT_NAME}: name")
            part = CallPart(index=index, id=call_id, name=name, new=True, done=True)
            part.args_final = as_str(item.get("arguments"), f"{DIALECT_NAME}: arguments") or "{}"
        else:
            call_id = as_str(item.get("call_id"), f"{DIALECT_NAME}: call_id")
            arguments = {k: v for k, v in fields.items() if k not in _CALL_KEYS}
            if kind == "tool_search_call":  # the search's own arguments
                found = item.get("arguments")
                arguments = found if isinstance(found, dict) else {}
            part = CallPart(index=index, id=call_id, name=ASKED_CALLS[kind], new=True, done=True)
            part.args_value = arguments
        parts.append(part)
        if call_id:
            # "asked" tells the Agent how to answer, in toolwire's words.
            state: dict[str, Any] = {"type": "call_item", "call_id": call_id, "item_type": kind}
            if kind == "mcp_approval_request":
                state.update(asked="approval", server=str(item.get("server_label") or "?"))
            else:
                state["asked"] = "action"
            parts.append(StatePart({**state, "fields": fields}))

    @staticmethod
    def _steer(obj: dict[str, Any], parts: list[Part]) -> None:
        parts += steer_event(str(obj.get("type")), obj)

    def _created(self, obj: dict[str, Any], parts: list[Part]) -> None:
        response = obj.get("response")
        if isinstance(response, dict):
            self._same_response(response, obj)
            meta = meta_part(response.get("model"), response.get("id"))
            self._response = self._response or meta.response_id
            parts.append(meta)

    def _same_response(self, response: dict[str, Any], obj: dict[str, Any]) -> None:
        """An event that names a response names this stream's."""
        found, known = response.get("id"), self._response
        if isinstance(found, str) and found and known is not None and found != known:
            what = f"a {obj.get('type')} event of response {found}, not {known}"
            raise refused(self._continued, DIALECT_NAME, what, dumps(obj))

    def _ended(self, obj: dict[str, Any], parts: list[Part]) -> None:
        response = as_obj(obj.get("response"), f"{DIALECT_NAME}: response")
        self._same_response(response, obj)
        usage = response.get("usage")
        if usage:
            parts.append(UsagePart(usage_from_responses(as_obj(usage, f"{DIALECT_NAME}: usage"))))
        parts += input_transformations(response)
        if obj.get("type") == "response.incomplete":
            details = response.get("incomplete_details")
            raw = details.get("reason") if isinstance(details, dict) else None
            raw = raw if isinstance(raw, str) else "incomplete"
            parts.append(FinishPart(INCOMPLETE_REASONS.get(raw, "other"), raw))
        else:
            raw = str(response.get("status") or "completed")
            parts.append(FinishPart("refusal" if self._refused else "stop", raw))
        parts.append(StreamEndPart())

    def _failed(self, obj: dict[str, Any], parts: list[Part]) -> None:
        response = obj.get("response")
        err = None
        if isinstance(response, dict):
            self._same_response(response, obj)
            err = response.get("error")
        parts.append(FinishPart("error", "failed"))
        parts.append(ErrorPart(error_event(err or obj, DIALECT_NAME)))

    @staticmethod
    def _index(obj: dict[str, Any]) -> int:
        index = as_int(obj.get("output_index"), f"{DIALECT_NAME}: output_index")
        if index is None:
            raise RemoteProtocolError(f"{DIALECT_NAME}: {obj.get('type')} has no output_index")
        return index


DIALECT: Final = WireDialect(
    name=DIALECT_NAME,
    codec=OpenAIResponsesCodec,
    capabilities=Capabilities(whole_responses=True, kept_streams=True),
    finish_reasons=INCOMPLETE_REASONS,
    usage=usage_from_responses,
    sniff_name=lambda name: name.startswith("response."),
    paths=("/responses",),
    client_path="/responses",
    routes=("/v1/responses",),
    continuation_routes=("/v1/responses/{response_id}",),
    continuation_target=resume_target,
    base_path="/v1",
    encode_request=encode_request,
    tool_schemas=async_marked(strict_schemas(tool_schema, custom_tool_schema)),
    strict_schema=to_openai_strict,
    otel_provider="openai",
    decode_request=emulation.decode_request,
    encoder=emulation.OpenAIResponsesEncoder,
    request_path=lambda model, stream: "/responses",
    continuation_path=resume_path,
    is_error_body=lambda body: (
        isinstance(body, dict) and "output" not in body and body.get("error") is not None
    ),
    sdk_shape=sdk.OpenAIResponsesShape(),
    volatile_fields=("metadata", "prompt_cache_key", "safety_identifier", "user"),
    structured_output=structured.RESPONSES,
    provider=PROVIDER,
    socket=RESPONSES_SOCKET,
)
"""The Responses API."""
