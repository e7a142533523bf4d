"""The accumulator: tool-call fragments in, complete tool calls out.

Theory of operation
-------------------
Codecs hand over provider-neutral parts (see ``codecs/_parts.py``); the
accumulator owns every rule that decides *which call a fragment belongs to*
and *when a call is complete*, so all dialects share one tested behaviour.

Identity. Within a choice, a fragment belongs to:

1. the call with the same non-empty id (``""`` and ``"null"`` are no id);
   a new id starts a new call, even at an index already in use — unless the
   call at that index has no id yet, in which case the id is its own;
2. otherwise the latest call with the same raw index (indexes may be sparse
   or start at 1: they are keys, never positions);
3. otherwise, with neither id nor index, the latest call.

Ids and names are assigned once and never appended (OpenRouter/Kimi repeat
both whole on every delta; concatenating yields ``read_fileread_file``), and
an empty string never overwrites them (DashScope sends ``"id": ""``).

Completion. A call is handed on as ``ToolCallReady`` only when it is provably
complete — its own end marker, the end of its arguments' top-level JSON value
(tracked by a cheap scanner on every fragment), the choice's finish reason,
or the clean end of the stream — *and* its arguments parse to a JSON object.
The start of another call never completes one: parallel calls may interleave
their fragments (call 0, call 1, call 0...), and any interleaving gives the
same calls as the same fragments sent one call after another. Text that does
not parse is repaired only where that is unambiguous; otherwise the call is
reported as ``ToolCallInvalid`` with the parse error, never turned into
``{}``. Calls still open when a stream is cut are reported as incomplete and
are never handed on as ready.

Partial values. Each call keeps its fragments; ``ToolCallDelta.partial``
runs an incremental parser lazily, moving forward only, so reading the
partial value of every delta costs time linear in the argument size.

No I/O, no clocks: this module is fed parts and returns events.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from typing import Any

from toolwire._json import dumps
from toolwire._jsonstream import CompletionScanner, LazyPartial
from toolwire._repair import ArgumentsParseError, parse_arguments
from toolwire.codecs._parts import (
    MISSING,
    ArgsPart,
    CallDone,
    CallPart,
    ErrorPart,
    FinishPart,
    MetaPart,
    Part,
    ReasoningPart,
    ServerCallPart,
    StatePart,
    StreamEndPart,
    TextPart,
    TrailerPart,
    UsagePart,
)
from toolwire.errors import RemoteProtocolError, StreamTruncated, ToolwireError
from toolwire.events import (
    ChoiceFinished,
    Event,
    ServerToolCallReady,
    StreamEnded,
    StreamFailed,
    ToolCallDelta,
    ToolCallInvalid,
    ToolCallReady,
    ToolCallStarted,
    UsageReported,
    new_reasoning_delta,
    new_text_delta,
    new_tool_call_delta,
)
from toolwire.types import (
    ChoiceResult,
    IncompleteToolCall,
    InvalidToolCall,
    ServerToolCall,
    StreamResult,
    ToolCall,
    Usage,
)

__all__ = ["Accumulator", "mint_call_id"]

_OPEN = 0
_READY = 1
_INVALID = 2
_INCOMPLETE = 3


def mint_call_id() -> str:
    """A fresh call id for providers that send none (Gemini, Ollama)."""
    return "call_" + uuid.uuid4().hex[:24]


class _StaticPartial:
    """A structured partial value, already built by the codec (Vertex)."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    def partial_at(self, mark: int) -> Any:
        return self._value


class _Call:
    __slots__ = (
        "args_default",
        "args_final",
        "args_value",
        "fragments",
        "id",
        "name",
        "position",
        "raw_index",
        "scanner",
        "source",
        "state",
    )

    def __init__(self, position: int, raw_index: int | None) -> None:
        self.position = position
        self.raw_index = raw_index
        self.id: str | None = None
        self.name = ""
        self.fragments: list[str] = []
        self.scanner: CompletionScanner | None = None
        self.args_value: Any = MISSING
        self.args_final: str | None = None
        self.args_default: Any = MISSING
        self.source: LazyPartial | _StaticPartial | None = None
        self.state = _OPEN

    def raw_text(self) -> str:
        if self.args_final is not None:
            return self.args_final
        return "".join(self.fragments)

    def growing(self) -> bool:
        """True while the argument text may legitimately still grow."""
        scanner = self.scanner
        return (
            self.args_value is MISSING
            and self.args_final is None
            and scanner is not None
            and scanner.state == "scanning"
        )


class _Choice:
    __slots__ = (
        "by_id",
        "by_index",
        "calls",
        "finish_reason",
        "invalid",
        "raw_finish_reason",
        "ready",
        "reasoning",
        "server_calls",
        "state",
        "text",
    )

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.calls: list[_Call] = []
        self.by_id: dict[str, _Call] = {}
        self.by_index: dict[int, _Call] = {}
        self.ready: list[ToolCall] = []
        self.invalid: list[InvalidToolCall] = []
        self.server_calls: list[ServerToolCall] = []
        self.state: list[dict[str, Any]] = []
        self.finish_reason: str | None = None
        self.raw_finish_reason: str | None = None


def _clean_id(value: str | None) -> str | None:
    """An id or a name as sent, or ``None`` for the placeholders some
    providers send on continuations (``""``, the string ``"null"``)."""
    if not value or value == "null":
        return None
    return value


class Accumulator:
    """Turns codec parts into events and keeps the running result.

    Args:
        id_factory: makes ids for calls the provider sends without one.
    """

    def __init__(self, *, id_factory: Callable[[], str] | None = None) -> None:
        self._id_factory = id_factory or mint_call_id
        self._choices: dict[int, _Choice] = {}
        self.usage: Usage | None = None
        self.model: str | None = None
        self.response_id: str | None = None
        self.ended = False
        """The provider's end-of-stream marker was seen."""
        self.error: ToolwireError | None = None
        self.closed = False
        self.cut_tail: str | None = None
        """The last payload, when the body stopped in the middle of it."""

    # -- feeding ---------------------------------------------------------------

    def apply(self, parts: Iterable[Part], out: list[Event]) -> None:
        """Apply parts in order, appending the events they cause to ``out``."""
        for part in parts:
            if self.error is not None:
                return
            kind = type(part)
            if kind is ArgsPart:
                self._args_part(part, out)  # type: ignore[arg-type]
            elif kind is CallPart:
                self._call_part(part, out)  # type: ignore[arg-type]
            elif kind is TextPart or kind is ReasoningPart:
                self._text_part(part, out)  # type: ignore[arg-type]
            else:
                self._other_part(part, out)

    def _args_part(self, part: ArgsPart, out: list[Event]) -> None:
        choice = self._choices.get(part.choice)
        call = None
        if choice is not None:
            if part.index is not None:
                call = choice.by_index.get(part.index)
            elif choice.calls:
                call = choice.calls[-1]
        scanner = call.scanner if call is not None else None
        if call is None or scanner is None or call.state != _OPEN:
            # Anything unusual takes the general path, with all its rules.
            self._call_part(CallPart(part.choice, None, part.index, None, part.args), out)
            return
        args = part.args
        if not args:
            return
        fragments = call.fragments
        fragments.append(args)
        completed = scanner.feed(args)
        out.append(
            new_tool_call_delta(
                part.choice, call.position, call.id, call.name, args, call.source, len(fragments)
            )
        )
        if completed and call.name:
            self._finalize(choice, part.choice, call, out, allow_close=False)  # type: ignore[arg-type]

    def _text_part(self, part: TextPart | ReasoningPart, out: list[Event]) -> None:
        text = part.text
        if not text:
            return
        choice = self._choice(part.choice)
        if type(part) is TextPart:
            choice.text.append(text)
            out.append(new_text_delta(part.choice, text))
        else:
            choice.reasoning.append(text)
            out.append(new_reasoning_delta(part.choice, text))

    def _other_part(self, part: Part, out: list[Event]) -> None:
        if isinstance(part, CallDone):
            choice = self._choice(part.choice)
            call = (
                choice.by_index.get(part.index)
                if part.index is not None
                else (choice.calls[-1] if choice.calls else None)
            )
            if call is not None and call.state == _OPEN:
                self._finalize(choice, part.choice, call, out, allow_close=False)
        elif isinstance(part, FinishPart):
            self._finish(part, out)
        elif isinstance(part, UsagePart):
            self.usage = part.usage
            out.append(UsageReported(usage=part.usage))
        elif isinstance(part, ServerCallPart):
            server = ServerToolCall(
                id=part.id,
                name=part.name,
                type=part.type,
                arguments=part.arguments,
                raw_arguments=part.raw_arguments,
            )
            self._choice(part.choice).server_calls.append(server)
            out.append(ServerToolCallReady(choice=part.choice, call=server))
        elif isinstance(part, StatePart):
            self._choice(part.choice).state.append(part.item)
        elif isinstance(part, MetaPart):
            self.model = part.model or self.model
            self.response_id = part.response_id or self.response_id
        elif isinstance(part, StreamEndPart):
            if self.ended:
                return  # a second end marker ends nothing more
            self.ended = True
            self._finalize_all(out, allow_close=True)
            out.append(StreamEnded())
        elif isinstance(part, TrailerPart):
            self.trailer(out)
        elif isinstance(part, ErrorPart):
            self.fail(part.error, out)

    def fail(self, error: ToolwireError, out: list[Event]) -> None:
        """Stop decoding: calls still open become incomplete, never ready."""
        if self.error is not None:
            return
        self.error = error
        for choice in self._choices.values():
            for call in choice.calls:
                if call.state == _OPEN:
                    call.state = _INCOMPLETE
        out.append(StreamFailed(error=error))

    def close(self, out: list[Event]) -> None:
        """The input ended. Without an end marker, open calls are incomplete
        and the stream is reported as truncated."""
        if self.closed:
            return
        self.closed = True
        if self.error is not None:
            return
        if self.ended or self._all_choices_finished():
            self._finalize_all(out, allow_close=True)
            return
        tail = " in the middle of a payload" if self.cut_tail is not None else ""
        error = self._truncated(f"the stream ended{tail} before the provider's end marker")
        error.raw = self.cut_tail[:500] if self.cut_tail is not None else None
        self.fail(error, out)

    def trailer(self, out: list[Event]) -> None:
        """A ``data: [DONE]`` line in a dialect whose own end is another event
        (Cohere v2 and OpenRouter's Responses endpoint send one after it).

        After the provider's end event it ends nothing more: a clean end. Before
        it, the stream stopped early: the calls still open are incomplete.
        """
        if self.error is not None or self.ended or self._all_choices_finished():
            return
        self.fail(self._truncated("a [DONE] line arrived before the provider's end event"), out)

    def _truncated(self, what: str) -> StreamTruncated:
        incomplete = self._open_calls()
        calls = (
            f"{len(incomplete)} tool call(s) were still being streamed"
            if incomplete
            else "no tool call was in progress"
        )
        return StreamTruncated(f"{what}; {calls}", incomplete_tool_calls=incomplete)

    # -- tool calls --------------------------------------------------------------

    def _choice(self, index: int) -> _Choice:
        choice = self._choices.get(index)
        if choice is None:
            choice = self._choices[index] = _Choice()
        return choice

    def _call_part(self, part: CallPart, out: list[Event]) -> None:
        choice = self._choice(part.choice)
        call_id = _clean_id(part.id)
        name = _clean_id(part.name) or ""
        call: _Call | None = None
        if not part.new:
            if call_id is not None:
                call = choice.by_id.get(call_id)
                if call is None:
                    # A new id: its own call, unless the call it would
                    # otherwise attach to has no id yet.
                    candidate = (
                        choice.by_index.get(part.index)
                        if part.index is not None
                        else (choice.calls[-1] if choice.calls else None)
                    )
                    if candidate is not None and candidate.id is None:
                        call = candidate
            elif part.index is not None:
                call = choice.by_index.get(part.index)
            elif choice.calls:
                call = choice.calls[-1]
        if call is None:
            if not (part.new or call_id or name or _has_content(part)):
                return  # an empty delta that belongs to nothing: nothing to do
            call = self._open(choice, part, call_id, out)
        elif call.state != _OPEN:
            self._late_part(call, part, call_id, name, out)
            return
        if call_id is not None and call.id is None:
            call.id = call_id
            choice.by_id[call_id] = call
        if name:
            call.name = name  # assigned, never appended
        c = part.choice

        args = part.args
        if args:
            call.fragments.append(args)
            scanner = call.scanner
            if scanner is None:
                scanner = call.scanner = CompletionScanner()
                call.source = LazyPartial(call.fragments)
            completed = scanner.feed(args)
            out.append(
                new_tool_call_delta(
                    c, call.position, call.id, call.name, args, call.source, len(call.fragments)
                )
            )
            if completed and call.name and not part.done:
                self._finalize(choice, c, call, out, allow_close=False)
                return
        if part.args_value is not MISSING:
            call.args_value = part.args_value
        if part.args_final is not None:
            call.args_final = part.args_final
        if part.args_default is not MISSING and call.args_default is MISSING:
            call.args_default = part.args_default
        if part.partial is not MISSING:
            call.source = _StaticPartial(part.partial)
            out.append(
                ToolCallDelta(
                    choice=c,
                    index=call.position,
                    id=call.id,
                    name=call.name,
                    delta="",
                    source=call.source,
                    mark=0,
                )
            )
        if part.done:
            self._finalize(choice, c, call, out, allow_close=False)
        elif (
            name
            and call.scanner is not None
            and call.scanner.state == "complete"
            and call.args_value is MISSING
        ):
            # The name arrived after complete arguments.
            self._finalize(choice, c, call, out, allow_close=False)

    def _open(
        self, choice: _Choice, part: CallPart, call_id: str | None, out: list[Event]
    ) -> _Call:
        # The start of a new call proves nothing about the others: parallel
        # calls may interleave their fragments, so each one waits for its own
        # end marker, the choice's finish or the end of the stream.
        call = _Call(len(choice.calls), part.index)
        choice.calls.append(call)
        if part.index is not None:
            choice.by_index[part.index] = call
        if call_id is not None:
            call.id = call_id
            choice.by_id[call_id] = call
        call.name = _clean_id(part.name) or ""
        out.append(
            ToolCallStarted(choice=part.choice, index=call.position, id=call.id, name=call.name)
        )
        return call

    def _late_part(
        self, call: _Call, part: CallPart, call_id: str | None, name: str, out: list[Event]
    ) -> None:
        """A part for a call that is already complete: harmless repeats are
        ignored (trailing empty deltas, the same name again); anything that
        would change the call is a protocol error, never a silent drop."""
        problems = []
        if part.args and part.args.strip():
            problems.append("more argument text")
        if name and name != call.name:
            problems.append(f"a different name {name!r}")
        if part.args_final is not None and part.args_final != call.raw_text():
            if part.args_final.strip() != call.raw_text().strip():
                problems.append("different final arguments")
        if part.args_value is not MISSING and call.args_value is MISSING:
            problems.append("an arguments object")
        if problems:
            label = call.id or f"#{call.position}"
            self.fail(
                RemoteProtocolError(
                    f"tool call {label} ({call.name}) was already complete when "
                    + " and ".join(problems)
                    + " arrived for it"
                ),
                out,
            )

    def _finalize(
        self, choice: _Choice, c: int, call: _Call, out: list[Event], *, allow_close: bool
    ) -> None:
        raw = call.raw_text()
        repaired = False
        error: str | None = None
        value: Any = None
        if call.args_value is not MISSING:
            value = call.args_value
            if value is None:
                value = {}
            if not raw:
                raw = dumps(value)
        elif not raw.strip() and call.args_default is not MISSING:
            value = call.args_default
        else:
            try:
                value, repaired = parse_arguments(raw, at_end=allow_close)
            except ArgumentsParseError as exc:
                error = f"the arguments are not valid JSON: {exc}"
        if error is None and not isinstance(value, dict):
            error = f"the arguments must be a JSON object, got {_json_type(value)}"
        if error is None and not call.name:
            error = "the tool call has no name"
        minted = call.id is None
        call_id = call.id or self._id_factory()
        call.id = call_id
        if error is not None:
            call.state = _INVALID
            invalid = InvalidToolCall(
                id=call_id,
                name=call.name,
                raw_arguments=raw,
                error=error,
                index=call.position,
                minted_id=minted,
            )
            choice.invalid.append(invalid)
            out.append(ToolCallInvalid(choice=c, call=invalid))
            return
        call.state = _READY
        ready = ToolCall(
            id=call_id,
            name=call.name,
            arguments=value,
            raw_arguments=raw,
            repaired=repaired,
            index=call.position,
            minted_id=minted,
        )
        choice.ready.append(ready)
        out.append(ToolCallReady(choice=c, call=ready))

    def _finish(self, part: FinishPart, out: list[Event]) -> None:
        choice = self._choice(part.choice)
        choice.finish_reason = part.reason
        choice.raw_finish_reason = part.raw_reason
        truncated = part.reason == "length"
        for call in choice.calls:
            if call.state != _OPEN:
                continue
            if truncated and call.growing():
                # Cut by the token limit: a prefix, never to be repaired or run.
                call.state = _INCOMPLETE
                continue
            self._finalize(choice, part.choice, call, out, allow_close=not truncated)
        out.append(
            ChoiceFinished(choice=part.choice, reason=part.reason, raw_reason=part.raw_reason)
        )

    def _finalize_all(self, out: list[Event], *, allow_close: bool) -> None:
        for c, choice in self._choices.items():
            for call in choice.calls:
                if call.state == _OPEN:
                    self._finalize(choice, c, call, out, allow_close=allow_close)

    def _all_choices_finished(self) -> bool:
        return bool(self._choices) and all(
            ch.finish_reason is not None for ch in self._choices.values()
        )

    def _open_calls(self) -> list[IncompleteToolCall]:
        return [
            IncompleteToolCall(
                id=call.id,
                name=call.name or None,
                raw_arguments=call.raw_text(),
                index=call.position,
            )
            for choice in self._choices.values()
            for call in choice.calls
            if call.state in (_OPEN, _INCOMPLETE)
        ]

    # -- result --------------------------------------------------------------------

    def result(self, api: str) -> StreamResult:
        """The reading of the stream so far (final once the input is closed)."""
        choices = []
        for c in sorted(self._choices):
            ch = self._choices[c]
            incomplete = tuple(
                IncompleteToolCall(
                    id=call.id,
                    name=call.name or None,
                    raw_arguments=call.raw_text(),
                    index=call.position,
                )
                for call in ch.calls
                if call.state in (_OPEN, _INCOMPLETE)
            )
            choices.append(
                ChoiceResult(
                    index=c,
                    text="".join(ch.text),
                    reasoning="".join(ch.reasoning),
                    finish_reason=ch.finish_reason,
                    raw_finish_reason=ch.raw_finish_reason,
                    tool_calls=tuple(sorted(ch.ready, key=lambda t: t.index)),
                    invalid_tool_calls=tuple(ch.invalid),
                    incomplete_tool_calls=incomplete,
                    server_tool_calls=tuple(ch.server_calls),
                    provider_state=tuple(ch.state),
                )
            )
        if not choices:
            choices.append(ChoiceResult(index=0))
        return StreamResult(
            api=api,
            choices=tuple(choices),
            usage=self.usage,
            error=self.error,
            complete=self.error is None and (self.ended or self._all_choices_finished()),
            model=self.model,
            response_id=self.response_id,
        )


def _has_content(part: CallPart) -> bool:
    return bool(
        (part.args and part.args.strip())
        or part.args_value is not MISSING
        or part.args_final
        or part.partial is not MISSING
        or part.done
    )


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if value is None:
        return "null"
    return type(value).__name__
