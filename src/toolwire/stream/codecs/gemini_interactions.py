"""Gemini Interactions API streams and whole interactions (``POST /v1beta/interactions``).

The stream is SSE; each payload names its kind in ``event_type`` and
carries an ``event_id`` from which a cut stream can be picked up again
(``GET /v1beta/interactions/{id}?stream=true&last_event_id=...``):

* ``interaction.created`` (``interaction: {id, status, model...}``);
* ``step.start`` (``index``, ``step``), ``step.delta`` (``index``, ``delta``),
  ``step.stop`` (``index``, ``usage``): one step at a time, by index;
* ``interaction.status_update`` (``interaction_id``, ``status``, ``usage``);
* ``interaction.completed`` (``interaction: {id, status, usage...}``): the end;
* ``error`` (``error: {code, message}``).

A ``function_call`` step opens with ``{id, name, arguments}``; its
arguments then stream as ``arguments_delta`` deltas (JSON text, appended,
per step index). ``model_output`` steps stream ``text`` deltas;
``thought`` steps stream ``thought_summary`` (reasoning text) and
``thought_signature`` deltas, and are kept whole as provider state (the
signature must go back). Built-in tools' steps (Google Search, code
execution, URL context, file search, Maps, MCP servers...) are kept whole,
their deltas merged into them, and go back in place. ``user_input`` and
``function_result`` steps echo the request's own input and give nothing. Any
other step or delta is an ``UnknownItem``. The interaction's id is kept as
provider state, for ``previous_interaction_id``, and so is the
``continuation_token`` of an interaction that ends ``requires_continuation``
(finish ``paused``), for the request that continues it.

No event id comes twice, a step starts once, streams before its stop and
stops once, and every event that names an interaction names the stream's;
a stream reopened after a cut (``continue_after``) must also give every
event an id (see ``_continuation.py``).

A whole interaction (``stream: false``) holds the same steps in ``steps``,
read by the same code. Reference: google-genai's
``google/genai/_gaos/types/interactions`` (``InteractionSSEEvent``,
``Step``, ``StepDeltaData``, ``Interaction``).
"""

from __future__ import annotations

from typing import Any, Final

from toolwire.errors import RemoteProtocolError
from toolwire.stream.codecs._common import (
    DONE,
    as_int,
    as_list,
    as_obj,
    as_str,
    error_event,
    load_frame,
    meta_part,
    thinking_usage,
    unknown_part,
)
from toolwire.stream.codecs._continuation import Continuation, continuation, refused
from toolwire.stream.codecs._dialect import Capabilities, ProviderInfo, WireDialect
from toolwire.stream.codecs.emulation import gemini_interactions as emulation
from toolwire.stream.codecs.gemini_interactions_request import (
    CONTINUATION,
    DIALECT_NAME,
    INTERACTION,
    KEPT_STEP,
    THOUGHT,
    _continuation_path,
    _continuation_target,
    _request_path,
    _route_target,
    _tool_schemas,
    encode_request,
)
from toolwire.stream.framing import FramingKind
from toolwire.stream.limits import MAX_KEPT_EVENTS
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

__all__ = ["DIALECT", "STATUSES", "GeminiInteractionsCodec", "usage_from_interactions"]


STATUSES: Final[dict[str, FinishReason]] = {
    "completed": "stop",
    "requires_action": "tool_calls",
    "incomplete": "length",
    "budget_exceeded": "length",
    "requires_continuation": "paused",
    "failed": "error",
    "cancelled": "other",
}
"""An interaction's final ``status`` in toolwire's vocabulary:
``requires_continuation`` (the per-request decode limit was reached) is a
pause, continued with its ``continuation_token`` as Anthropic's
``pause_turn`` is continued."""

BUILTIN_STEPS: Final = frozenset(
    f"{tool}_{half}"
    for tool in (
        "code_execution",
        "file_search",
        "google_maps",
        "google_search",
        "mcp_server_tool",
        "processing",
        "retrieval",
        "tool_search",
        "url_context",
    )
    for half in ("call", "result")
)
"""Steps of the server's own tools: kept whole and sent back in place."""

ECHO_STEPS: Final = frozenset({"user_input", "function_result"})
"""Steps that repeat the request's input (no output of the model)."""


def usage_from_interactions(raw: dict[str, Any]) -> Usage:
    """An interaction's ``usage`` as a :class:`Usage`; ``output_tokens``
    counts thinking too (``total_output_tokens`` + ``total_thought_tokens``)."""
    return thinking_usage(
        raw,
        DIALECT_NAME,
        "usage",
        output="total_output_tokens",
        thoughts="total_thought_tokens",
        prompt="total_input_tokens",
        total="total_tokens",
        cached="total_cached_tokens",
    )


class GeminiInteractionsCodec:
    """Decodes Interactions SSE events (and whole interactions) into parts."""

    dialect = DIALECT_NAME
    framings: frozenset[FramingKind] = frozenset({"sse"})

    def __init__(self) -> None:
        self._open: dict[int, dict[str, Any]] = {}  # step index -> the step so far
        self._stopped: set[int] = set()  # the indexes of the steps that ended
        self._calls = 0
        self._chars = 0  # characters of answer text so far
        self._interaction: str | None = None
        self._last_event: str | None = None
        self._seen: set[str] = set()  # every event id read: none comes twice
        self._continued: Continuation | None = None  # set when the stream was reopened
        self._stepped = False  # a step was read
        self.quirks: set[str] = set()

    @property
    def cursor(self) -> tuple[str, str] | None:
        """``(interaction id, id of the last event decoded)``: where a cut
        stream picks up again (``None`` before both are known)."""
        if self._interaction is None or self._last_event is None:
            return None
        return self._interaction, self._last_event

    def continue_after(self, stream_id: str, after: str | None) -> None:
        """See :class:`~toolwire.stream.codecs.ContinuedCodec`: from now on
        each event's ``event_id`` must be one not read yet, and an
        interaction an event names must be ``stream_id``."""
        self._continued = continuation(DIALECT_NAME, self.cursor, stream_id, after)

    def decode(self, event: str, data: str) -> list[Part]:
        obj = load_frame(data, DIALECT_NAME, self.quirks)
        if obj is None:
            return [TrailerPart(DONE)]
        kind = obj.get("event_type") or event
        event_id = obj.get("event_id")
        if not isinstance(event_id, str) or not event_id:
            event_id = None
            if self._continued is not None and kind != "error":
                raise self._continued.mismatch(f"a {kind} event has no event_id", data)
        elif event_id in self._seen:  # read already: only a reopened stream sends it again
            raise refused(
                self._continued, DIALECT_NAME, f"event {event_id} ({kind}) came twice", data
            )
        parts: list[Part] = []
        if kind == "step.delta":
            self._delta(obj, parts)
        elif kind == "step.start":
            index = self._index(obj)
            self._start(index, as_obj(obj.get("step"), f"{DIALECT_NAME}: step"), parts)
        elif kind == "step.stop":
            self._stop(self._index(obj), parts)
        elif kind == "interaction.created":
            self._created(as_obj(obj.get("interaction"), f"{DIALECT_NAME}: interaction"), parts)
        elif kind == "interaction.completed":
            self._completed(as_obj(obj.get("interaction"), f"{DIALECT_NAME}: interaction"), parts)
        elif kind == "error":
            parts.append(ErrorPart(error_event(obj.get("error") or obj, DIALECT_NAME)))
        elif kind == "interaction.status_update":
            self._status(obj, parts)
        else:
            parts.append(unknown_part(DIALECT_NAME, str(kind), obj, self.quirks))
        if event_id is not None:
            if len(self._seen) >= MAX_KEPT_EVENTS:
                raise RemoteProtocolError(
                    f"{DIALECT_NAME}: the stream has more than {MAX_KEPT_EVENTS} events"
                )
            self._seen.add(event_id)
            self._last_event = event_id
        return parts

    def decode_response(self, body: dict[str, Any]) -> list[Part]:
        """A whole interaction: what its stream would give."""
        if not isinstance(body.get("status"), str) or not isinstance(body.get("steps", []), list):
            raise RemoteProtocolError(
                f"{DIALECT_NAME}: not an interaction (no 'status', or bad 'steps')"
            )
        parts: list[Part] = []
        self._created(body, parts)
        self._completed(body, parts)
        return parts

    # -- the interaction ------------------------------------------------------------

    def _created(self, interaction: dict[str, Any], parts: list[Part]) -> None:
        found = as_str(interaction.get("id"), f"{DIALECT_NAME}: interaction id")
        self._same_interaction(found, "interaction.created")
        parts.append(meta_part(interaction.get("model"), found))
        if found and found != self._interaction:
            self._interaction = found
            parts.append(StatePart({"type": INTERACTION, "id": found}))

    def _same_interaction(self, found: str | None, kind: str) -> None:
        """An event that names an interaction names this stream's."""
        known = self._interaction
        if known is None and self._continued is not None:
            known = self._continued.stream_id
        if found and known is not None and found != known:
            what = f"an {kind} event of interaction {found}, not {known}"
            raise refused(self._continued, DIALECT_NAME, what)

    def _status(self, obj: dict[str, Any], parts: list[Part]) -> None:
        found = as_str(obj.get("interaction_id"), f"{DIALECT_NAME}: interaction_id")
        self._same_interaction(found, "interaction.status_update")
        if found and self._interaction is None:
            self._interaction = found
            parts.append(StatePart({"type": INTERACTION, "id": found}))
        usage = obj.get("usage")
        if isinstance(usage, dict) and usage:
            parts.append(UsagePart(usage_from_interactions(usage)))

    def _completed(self, interaction: dict[str, Any], parts: list[Part]) -> None:
        self._same_interaction(
            as_str(interaction.get("id"), f"{DIALECT_NAME}: interaction id"),
            "interaction.completed",
        )
        if self._interaction is None:
            self._created(interaction, parts)
        for index in sorted(self._open):  # steps the server left open
            self._stop(index, parts)
        steps = interaction.get("steps")
        if steps and not self._stepped:
            # Steps only here, none streamed: read them as a whole interaction's.
            for index, step in enumerate(as_list(steps, f"{DIALECT_NAME}: steps")):
                self._start(index, as_obj(step, f"{DIALECT_NAME}: step"), parts, whole=True)
                self._stop(index, parts)
        usage = interaction.get("usage")
        if isinstance(usage, dict) and usage:
            parts.append(UsagePart(usage_from_interactions(usage)))
        token = as_str(interaction.get("continuation_token"), f"{DIALECT_NAME}: continuation_token")
        if token:  # the terminal snapshot's token: where the next request picks up
            parts.append(StatePart({"type": CONTINUATION, "token": token}))
        raw = as_str(interaction.get("status"), f"{DIALECT_NAME}: status") or "completed"
        reason = STATUSES.get(raw, "other")
        if reason == "stop" and self._calls:
            reason = "tool_calls"
        parts.append(FinishPart(reason, raw))
        if raw == "failed":
            errors = as_list(interaction.get("errors"), f"{DIALECT_NAME}: errors")
            parts.append(ErrorPart(error_event(errors[0] if errors else interaction, DIALECT_NAME)))
        parts.append(StreamEndPart())

    # -- steps --------------------------------------------------------------------

    def _start(
        self, index: int, step: dict[str, Any], parts: list[Part], *, whole: bool = False
    ) -> None:
        """A step begins (``whole``: a whole interaction's step, complete)."""
        if index in self._open or index in self._stopped:  # a replay, or another in its place
            raise refused(self._continued, DIALECT_NAME, f"step {index} started twice")
        self._stepped = True
        kind = step.get("type")
        if kind == "function_call":
            self._calls += 1
            self._open[index] = step
            arguments = step.get("arguments")
            if arguments is not None and not isinstance(arguments, dict):
                raise RemoteProtocolError(
                    f"{DIALECT_NAME}: function_call arguments is not an object"
                )
            part = CallPart(
                index=index,
                id=as_str(step.get("id"), f"{DIALECT_NAME}: function_call id"),
                name=as_str(step.get("name"), f"{DIALECT_NAME}: function_call name"),
                new=True,
            )
            if arguments or whole:  # complete arguments: no deltas follow
                part.args_value = arguments or {}
            else:
                part.args_default = {}
            parts.append(part)
        elif kind == "model_output":
            self._open[index] = step
            for item in as_list(step.get("content"), f"{DIALECT_NAME}: content"):
                self._content(as_obj(item, f"{DIALECT_NAME}: content item"), parts)
        elif kind == THOUGHT:
            kept = {k: v for k, v in step.items() if v is not None}
            self._open[index] = kept
            for item in as_list(step.get("summary"), f"{DIALECT_NAME}: summary"):
                text = item.get("text") if isinstance(item, dict) else None
                if isinstance(text, str) and text:
                    parts.append(ReasoningPart(text))
        elif kind in BUILTIN_STEPS:
            self._open[index] = dict(step)
        elif kind not in ECHO_STEPS:
            parts.append(unknown_part(DIALECT_NAME, f"{kind} step", step, self.quirks))

    def _content(self, item: dict[str, Any], parts: list[Part]) -> None:
        if item.get("type") == "text":
            text = as_str(item.get("text"), f"{DIALECT_NAME}: text") or ""
            if text:
                self._chars += len(text)
                parts.append(TextPart(text))
            if item.get("annotations"):
                parts.append(unknown_part(DIALECT_NAME, "annotations", item, self.quirks))
        else:
            parts.append(
                unknown_part(DIALECT_NAME, f"{item.get('type')} output", item, self.quirks)
            )

    def _delta(self, obj: dict[str, Any], parts: list[Part]) -> None:
        index = self._index(obj)
        delta = as_obj(obj.get("delta"), f"{DIALECT_NAME}: delta")
        kind = delta.get("type")
        step = self._open.get(index)
        if step is None and index in self._stopped:
            raise refused(
                self._continued, DIALECT_NAME, f"a {kind} delta for step {index}, which ended"
            )
        if kind == "arguments_delta":
            if step is None or step.get("type") != "function_call":
                raise RemoteProtocolError(
                    f"{DIALECT_NAME}: arguments_delta for step {index}, not a call"
                )
            text = as_str(delta.get("arguments"), f"{DIALECT_NAME}: arguments") or ""
            if text:
                parts.append(CallPart(index=index, args=text))
        elif kind == "text" and (step is None or step.get("type") == "model_output"):
            self._content(delta, parts)
        elif kind == "thought_summary" and step is not None and step.get("type") == THOUGHT:
            # Kept in the thought step whatever it holds (text, an image).
            content = as_obj(delta.get("content"), f"{DIALECT_NAME}: thought_summary content")
            said = content.get("text") if content.get("type") == "text" else None
            if isinstance(said, str) and said:
                parts.append(ReasoningPart(said))
            _add_summary(step, content)
        elif kind == "thought_signature" and step is not None and step.get("type") == THOUGHT:
            signature = as_str(delta.get("signature"), f"{DIALECT_NAME}: signature")
            if signature:
                step["signature"] = step.get("signature", "") + signature
        elif kind == step_type(step) and step is not None and kind in BUILTIN_STEPS:
            _merge_delta(step, delta)
        else:
            parts.append(unknown_part(DIALECT_NAME, f"{kind} delta", obj, self.quirks))

    def _stop(self, index: int, parts: list[Part]) -> None:
        step = self._open.pop(index, None)
        if step is None:
            if index in self._stopped:
                raise refused(self._continued, DIALECT_NAME, f"step {index} ended twice")
            return
        self._stopped.add(index)
        kind = step.get("type")
        if kind == "function_call":
            parts.append(CallPart(index=index, done=True))
        elif kind == THOUGHT:
            parts.append(StatePart(self._placed(step)))
        elif kind in BUILTIN_STEPS:
            parts.append(StatePart(self._placed({"type": KEPT_STEP, "step": step})))

    def _placed(self, item: dict[str, Any]) -> dict[str, Any]:
        """``item`` with where it stood among the calls and the text."""
        if self._calls or self._chars:
            return {**item, POSITION_KEY: self._calls, TEXT_POSITION_KEY: self._chars}
        return item

    @staticmethod
    def _index(obj: dict[str, Any]) -> int:
        index = as_int(obj.get("index"), f"{DIALECT_NAME}: index")
        if index is None:
            raise RemoteProtocolError(f"{DIALECT_NAME}: {obj.get('event_type')} has no step index")
        return index


def _add_summary(step: dict[str, Any], content: dict[str, Any]) -> None:
    """A thought's summary grows by ``content``: text after text joins it, as
    a whole interaction gives it."""
    summary = step.setdefault("summary", [])
    last = summary[-1] if summary else None
    if isinstance(last, dict) and last.get("type") == "text" == content.get("type"):
        summary[-1] = {**last, "text": str(last.get("text", "")) + str(content.get("text", ""))}
    else:
        summary.append(content)


def _merge_delta(step: dict[str, Any], delta: dict[str, Any]) -> None:
    """A built-in tool's step grows by one of its deltas. google-genai's
    ``*CallDelta`` / ``*ResultDelta`` types carry the step's own fields: a
    ``result`` list (search results, places, files) is extended by the
    delta's, a ``result`` text (code execution's output) and a ``signature``
    are appended to (as a thought's are), ``arguments`` take the delta's keys;
    any other field (``is_error``, an MCP tool's ``name``...) is set."""
    for key, value in delta.items():
        if key == "type":
            continue
        old = step.get(key)
        if key in ("result", "signature") and isinstance(old, str) and isinstance(value, str):
            step[key] = old + value
        elif key == "result" and isinstance(old, list) and isinstance(value, list):
            step[key] = [*old, *value]
        elif key == "arguments" and isinstance(old, dict) and isinstance(value, dict):
            step[key] = {**old, **value}
        else:
            step[key] = value


def step_type(step: dict[str, Any] | None) -> Any:
    """A step's ``type`` (``None`` for no step)."""
    return None if step is None else step.get("type")


DIALECT: Final = WireDialect(
    name=DIALECT_NAME,
    codec=GeminiInteractionsCodec,
    capabilities=Capabilities(whole_responses=True, kept_streams=True),
    finish_reasons=STATUSES,
    usage=usage_from_interactions,
    sniff_name=lambda name: name.startswith(("step.", "interaction.")),
    sniff_shape=lambda obj: (
        isinstance(obj.get("event_type"), str)
        and obj["event_type"].startswith(("step.", "interaction."))
    ),
    paths=("/interactions",),
    routes=("/v1beta/interactions", "/v1/interactions"),
    route_target=_route_target,
    continuation_routes=("/v1beta/interactions/{interaction}", "/v1/interactions/{interaction}"),
    continuation_target=_continuation_target,
    continuation_path=_continuation_path,
    base_path="/v1beta",
    client_path="/interactions",
    encode_request=encode_request,
    tool_schemas=_tool_schemas,
    otel_provider="gcp.gemini",
    decode_request=emulation.decode_request,
    encoder=emulation.GeminiInteractionsEncoder,
    request_path=_request_path,
    is_error_body=lambda body: (
        isinstance(body, dict) and body.get("error") is not None and "steps" not in body
    ),
    provider=ProviderInfo(
        names=(DIALECT_NAME,),
        class_name="GeminiInteractions",
        demo_model="gemini-3-flash-preview",
        price_provider="google",
    ),
)
"""Google's Interactions API (Gemini API)."""
