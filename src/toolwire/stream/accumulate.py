"""The accumulator: tool-call fragments in, complete tool calls out.

Theory of operation
-------------------
Codecs hand over provider-neutral parts (see ``_parts.py``); the accumulator
owns every rule that decides *which call a fragment belongs to* and *when a
call is complete*, so all dialects share one tested behaviour.

Identity. Within a choice, a fragment belongs to:

1. the call with the same non-empty id (``""`` and ``"null"`` are no id);
   a new id starts a new call, even at an index already in use — unless the
   call at that index has no id yet, in which case the id is its own;
2. otherwise the latest call with the same raw index (indexes may be sparse
   or start at 1: they are keys, never positions);
3. otherwise, with neither id nor index, the latest call.

Each lookup is a dictionary access, so a new call is opened in constant time
however many came before it. Ids and names are assigned once and never
appended (OpenRouter/Kimi repeat both whole on every delta; concatenating
yields ``read_fileread_file``), and an empty string never overwrites them
(DashScope sends ``"id": ""``).

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

Bounds. A choice holds at most ``MAX_TEXT_CHARS`` of text (and of reasoning)
and ``MAX_TOOL_CALLS`` calls; a call at most ``MAX_ARGUMENTS_CHARS`` of
arguments; a response at most ``MAX_KEPT_ITEMS`` unknown and state items,
each counted with its payload in the response's characters (see
:mod:`toolwire.stream.limits`).

No I/O, no clocks: this module is fed parts and returns events.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NoReturn, cast

from toolwire.content import output_part
from toolwire.errors import RemoteProtocolError, StreamTruncated, ToolwireError
from toolwire.events import (
    Event,
    PartReceived,
    ProviderNotice,
    ServerToolCallReady,
    StreamEnded,
    StreamFailed,
    UnknownItem,
    UsageReported,
    new_reasoning_delta,
    new_text_delta,
)
from toolwire.stream._assembly import CallAssembly
from toolwire.stream._budget import ResponseBudget
from toolwire.stream._calls import (
    OPEN,
    mint_call_id,
    replace_undecodable,
)
from toolwire.stream.jsonio import dumps_bytes
from toolwire.stream.limits import KEPT_ITEM_CHARS, MAX_KEPT_ITEMS, MAX_TEXT_CHARS
from toolwire.stream.parts import (
    DIALECT_KEY,
    ArgsPart,
    CallDone,
    CallPart,
    ErrorPart,
    FinishPart,
    MetaPart,
    NoticePart,
    Part,
    ReasoningPart,
    ServerCallPart,
    StatePart,
    StreamEndPart,
    TextPart,
    TrailerPart,
    UnknownPart,
    UsagePart,
)
from toolwire.types import (
    ChoiceResult,
    ServerToolCall,
    StreamResult,
    Usage,
)

__all__ = ["Accumulator", "mint_call_id"]


class Accumulator:
    """Turns codec parts into events and keeps the running result: the
    response's text, usage and kept items here, its choices and their tool
    calls in :attr:`calls` (a :class:`~toolwire.stream._assembly.CallAssembly`).

    Args:
        id_factory: makes ids for calls the provider sends without one.
    """

    def __init__(self, *, id_factory: Callable[[], str] | None = None) -> None:
        self._budget = ResponseBudget()
        self.calls = CallAssembly(id_factory=id_factory or mint_call_id, budget=self._budget)
        """The choices and their tool calls."""
        self._kept = 0
        """Unknown and state items kept, of all choices."""
        self.usage: Usage | None = None
        self.model: str | None = None
        self.response_id: str | None = None
        self.ended = False
        """The provider's end-of-stream marker was seen."""
        self.error: ToolwireError | None = None
        self.closed = False
        self.cut_tail: str | None = None
        """The last payload, when the body stopped in the middle of it."""
        self.state_dialect: str | None = None
        """The dialect that decodes the stream: each provider-state item is
        tagged with it (:data:`~toolwire.stream.parts.DIALECT_KEY`), so that
        only that dialect sends it back."""
        self.unknown_items: list[UnknownItem] = []
        self.notices: list[ProviderNotice] = []
        """What the provider sent that the codec does not read, in order."""

    @property
    def check_utf8(self) -> bool:
        """Set when the framing met bytes that were not UTF-8 (kept as lone
        surrogates): text shows them as U+FFFD, and a call whose arguments
        or name held them is invalid."""
        return self.calls.check_utf8

    @check_utf8.setter
    def check_utf8(self, value: bool) -> None:
        self.calls.check_utf8 = value

    # -- feeding ---------------------------------------------------------------

    def apply(self, parts: Iterable[Part], out: list[Event]) -> None:
        """Apply parts in order, appending the events they cause to ``out``."""
        calls = self.calls
        try:
            for part in parts:
                if self.error is not None:
                    return
                kind = type(part)
                if kind is ArgsPart:
                    args = cast(ArgsPart, part)
                    calls.add_args(args.choice, args.index, args.args, out)
                elif kind is CallPart:
                    calls.call_part(part, out)  # type: ignore[arg-type]
                elif kind is TextPart or kind is ReasoningPart:
                    self._text_part(part, out)  # type: ignore[arg-type]
                else:
                    self._other_part(part, out)
        except ToolwireError as exc:  # a limit of toolwire.stream.limits was passed
            self.fail(exc, out)

    def _text_part(self, part: TextPart | ReasoningPart, out: list[Event]) -> None:
        text = part.text
        if not text:
            return
        if self.calls.check_utf8:
            text = replace_undecodable(text)
        choice = self.calls.choice(part.choice)
        self._budget.take(len(text))
        if type(part) is TextPart:
            choice.text_size += len(text)
            if choice.text_size > MAX_TEXT_CHARS:
                self._too_much("text")
            choice.text.append(text)
            out.append(new_text_delta(part.choice, text))
        else:
            choice.reasoning_size += len(text)
            if choice.reasoning_size > MAX_TEXT_CHARS:
                self._too_much("reasoning")
            choice.reasoning.append(text)
            out.append(new_reasoning_delta(part.choice, text))

    def fail(self, error: ToolwireError, out: list[Event]) -> None:
        """Stop decoding: calls still open become incomplete, never ready."""
        if self.error is not None:
            return
        self.error = error
        self.calls.abandon()
        out.append(StreamFailed(error=error))

    def add_text_run(self, texts: list[str], out: list[Event]) -> None:
        """Non-empty text deltas of choice 0 in a row (matched in place), the
        events and result each gives alone, counted at once when they fit
        the caps; else one at a time, so that a cap fails where it would."""
        try:
            if self.error is not None:
                return
            if self.calls.check_utf8:
                texts = [replace_undecodable(text) for text in texts]
            choice = self.calls.choice(0)
            budget = self._budget
            size = sum(map(len, texts))
            if budget.used + size > budget.ceiling or choice.text_size + size > MAX_TEXT_CHARS:
                self.apply([TextPart(text) for text in texts], out)
                return
            budget.used += size
            choice.text_size += size
            choice.text += texts
            out += [new_text_delta(0, text) for text in texts]
        except ToolwireError as exc:  # a limit of toolwire.stream.limits was passed
            self.fail(exc, out)

    def _too_much(self, what: str) -> NoReturn:
        raise RemoteProtocolError(f"the response's {what} exceeds {MAX_TEXT_CHARS} characters")

    def _other_part(self, part: Part, out: list[Event]) -> None:
        calls = self.calls
        if isinstance(part, CallDone):
            choice = calls.choice(part.choice)
            call = choice.by_position(part.index)
            if call is not None and call.state == OPEN:
                calls.finalize(choice, part.choice, call, out, allow_close=False)
        elif isinstance(part, FinishPart):
            calls.finish(part, out)
        elif isinstance(part, UsagePart):
            self.usage = part.usage
            out.append(UsageReported(usage=part.usage))
        elif isinstance(part, ServerCallPart):
            self._server_call(part, out)
        elif isinstance(part, StatePart):
            item = part.item
            if self.state_dialect is not None:
                item = {**item, DIALECT_KEY: self.state_dialect}
            choice = calls.choice(part.choice)
            self._keep(item)
            choice.state.append(item)
            made = output_part(part.item)
            if made is not None:
                out.append(PartReceived(choice=part.choice, part=made))
        elif isinstance(part, MetaPart):
            self.model = part.model or self.model
            self.response_id = part.response_id or self.response_id
        elif isinstance(part, StreamEndPart):
            if self.ended:
                return  # a second end marker ends nothing more
            self.ended = True
            calls.finalize_all(out, allow_close=True)
            out.append(StreamEnded())
        elif isinstance(part, TrailerPart):
            self.trailer(out, part.text)
        elif isinstance(part, ErrorPart):
            self.fail(part.error, out)
        elif isinstance(part, UnknownPart):
            unknown = UnknownItem(
                choice=part.choice,
                dialect=part.dialect,
                type=part.type,
                payload=part.payload,
                quirk=part.quirk,
            )
            self._keep(part.payload)
            self.unknown_items.append(unknown)
            out.append(unknown)
        elif isinstance(part, NoticePart):
            notice = ProviderNotice(
                choice=part.choice,
                dialect=part.dialect,
                type=part.type,
                payload=part.payload,
                message=part.message,
                warning=part.warning,
            )
            self._keep(part.payload)
            self.notices.append(notice)
            out.append(notice)

    def _keep(self, payload: object) -> None:
        """Count one more item kept for the result (an unknown or a state
        item) against the response's caps: its number, and its size."""
        if self._kept >= MAX_KEPT_ITEMS:
            raise RemoteProtocolError(
                f"the response has more than {MAX_KEPT_ITEMS} items toolwire keeps "
                "without reading them (unknown items and provider state), all choices together"
            )
        self._kept += 1
        self._budget.take(KEPT_ITEM_CHARS + len(dumps_bytes(payload)))

    def _server_call(self, part: ServerCallPart, out: list[Event]) -> None:
        server = ServerToolCall(
            id=part.id,
            name=part.name,
            type=part.type,
            arguments=part.arguments,
            raw_arguments=part.raw_arguments,
        )
        choice = self.calls.choice(part.choice)
        self.calls.count_call()
        choice.server_calls.append(server)
        out.append(ServerToolCallReady(choice=part.choice, call=server))

    def close(self, out: list[Event]) -> None:
        """The input ended. Without an end marker, open calls are incomplete
        and the stream is reported as truncated."""
        if self.closed:
            return
        self.closed = True
        self._budget.release()
        if self.error is not None:
            return
        if self.ended or self.calls.all_finished():
            self.calls.finalize_all(out, allow_close=True)
            return
        tail = " in the middle of a payload" if self.cut_tail is not None else ""
        error = self._truncated(f"the stream ended{tail} before the provider's end marker")
        error.raw = self.cut_tail[:500] if self.cut_tail is not None else None
        self.fail(error, out)

    def trailer(self, out: list[Event], text: str = "") -> None:
        """A ``data: [DONE]`` line in a dialect whose own end is another event
        (Cohere v2 and OpenRouter's Responses endpoint send one after it).

        After the provider's end event it ends nothing more: a clean end. Before
        it, the stream stopped early: the calls still open are incomplete.
        """
        if self.error is not None or self.ended or self.calls.all_finished():
            return
        line = f"a {text} line" if text else "an end-of-stream line"
        self.fail(self._truncated(f"{line} arrived before the provider's end event"), out)

    def _truncated(self, what: str) -> StreamTruncated:
        incomplete = self.calls.incomplete()
        calls = (
            f"{len(incomplete)} tool call(s) were still being streamed"
            if incomplete
            else "no tool call was in progress"
        )
        return StreamTruncated(f"{what}; {calls}", incomplete_tool_calls=incomplete)

    # -- result --------------------------------------------------------------------

    def result(self, dialect: str) -> StreamResult:
        """The reading of the stream so far (final once the input is closed)."""
        choices = tuple(ch.result(c) for c, ch in sorted(self.calls.choices.items()))
        return StreamResult(
            dialect=dialect,
            choices=choices or (ChoiceResult(index=0),),
            usage=self.usage,
            error=self.error,
            complete=self.error is None and (self.ended or self.calls.all_finished()),
            model=self.model,
            response_id=self.response_id,
            unknown_items=tuple(self.unknown_items),
            notices=tuple(self.notices),
        )
