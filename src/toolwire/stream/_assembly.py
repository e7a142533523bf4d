"""Tool calls assembled from their fragments: the accumulator's rules for calls.

A :class:`CallAssembly` is the part of an
:class:`~toolwire.stream.accumulate.Accumulator` that owns the choices of a
response and their tool calls: which call a fragment belongs to (identity),
when a call is complete and handed on (completion), the bounds on choices,
calls and arguments, and what a failure makes of the calls still open. The
rules themselves are told in the accumulator's theory of operation. A part
that breaks them raises a :class:`~toolwire.errors.ToolwireError`, which the
accumulator turns into the stream's failure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from toolwire.errors import RemoteProtocolError
from toolwire.events import (
    ChoiceFinished,
    Event,
    ToolCallDelta,
    ToolCallInvalid,
    ToolCallReady,
    ToolCallStarted,
    new_tool_call_delta,
)
from toolwire.stream import _calls
from toolwire.stream._budget import ResponseBudget
from toolwire.stream._calls import INCOMPLETE, OPEN, OpenCall, settle
from toolwire.stream._choice import Choice, clean_id, has_content, late_problems
from toolwire.stream._jsonstream import CompletionScanner, LazyPartial
from toolwire.stream.limits import MAX_CHOICES, MAX_TOOL_CALLS
from toolwire.stream.parts import MISSING, CallPart, FinishPart
from toolwire.types import IncompleteToolCall, InvalidToolCall

__all__ = ["CallAssembly"]


class CallAssembly:
    """The choices of one response and their tool calls.

    Args:
        id_factory: makes ids for calls the provider sends without one.
        budget: the response's characters, shared with its text and kept items.
    """

    __slots__ = ("_id_factory", "budget", "check_utf8", "choices", "count")

    def __init__(self, *, id_factory: Callable[[], str], budget: ResponseBudget) -> None:
        self._id_factory = id_factory
        self.choices: dict[int, Choice] = {}
        """The response's choices by their index."""
        self.budget = budget
        self.count = 0
        """Tool calls (client and server) of all choices."""
        self.check_utf8 = False
        """Set when the framing met bytes that were not UTF-8: a call whose
        arguments or name held them is invalid."""

    def add_args(self, c: int, index: int | None, args: str, out: list[Event]) -> None:
        """Apply ``ArgsPart(c, index, args)``: :meth:`add_args_run` for one
        fragment, without the run's bookkeeping (most network reads of a
        streamed turn hold one fragment)."""
        choice, call = self._open_call(c, index)
        if call is None:
            self.call_part(CallPart(c, None, index, None, args), out)
            return
        scanner = call.scanner
        assert scanner is not None
        if not args:
            return
        n = len(args)
        self.budget.take(n)
        if call.size + n > _calls.MAX_ARGUMENTS_CHARS:
            call.over_size(n)
            self.finalize(choice, c, call, out, allow_close=False)  # type: ignore[arg-type]
            return
        call.size += n
        fragments = call.fragments
        fragments.append(args)
        # More of a string (the commonest fragment) cannot close the arguments.
        if scanner.mid_string and '"' not in args and "\\" not in args:
            completed = False
        else:
            completed = scanner.feed(args)
        out.append(
            new_tool_call_delta(
                c, call.position, call.id, call.name, args, call.source, len(fragments)
            )
        )
        if completed and call.name:
            self.finalize(choice, c, call, out, allow_close=False)  # type: ignore[arg-type]

    def _open_call(self, c: int, index: int | None) -> tuple[Choice | None, OpenCall | None]:
        """The choice and the open call that argument text for ``(c, index)``
        continues the common way; the call is ``None`` when only the general
        path may take the text (no such call, a closed one, bytes to check)."""
        choice = self.choices.get(c)
        call = None
        if choice is not None:
            if index is not None:
                call = choice.by_index.get(index)
            elif choice.calls:
                call = choice.calls[-1]
        if call is None or call.scanner is None or call.state != OPEN or self.check_utf8:
            return choice, None
        return choice, call

    def add_args_run(
        self, c: int, index: int | None, texts: Sequence[str], out: list[Event]
    ) -> None:
        """Apply ``ArgsPart(c, index, text)`` for each of ``texts``, in order:
        the common case, kept short (more text for an open call, looked up
        once for the run); anything unusual takes the general path."""
        i, end = 0, len(texts)
        while i < end:
            choice, call = self._open_call(c, index)
            if call is None:
                self.call_part(CallPart(c, None, index, None, texts[i]), out)
                i += 1
                continue
            scanner = call.scanner
            assert scanner is not None
            budget, most = self.budget, _calls.MAX_ARGUMENTS_CHARS
            fragments, position, name = call.fragments, call.position, call.name
            call_id, source = call.id, call.source
            # Characters that fit both the response's reservation and the
            # call's cap: counted in ``taken``, settled once; a fragment past
            # them is settled and checked on its own.
            room = min(budget.ceiling - budget.used, most - call.size)
            taken = 0
            try:
                while i < end:
                    args = texts[i]
                    i += 1
                    if not args:
                        continue
                    n = len(args)
                    taken += n
                    if taken > room:
                        budget.used += taken - n
                        call.size += taken - n
                        taken = 0
                        budget.take(n)
                        if call.size + n > most:
                            call.over_size(n)
                            self.finalize(choice, c, call, out, allow_close=False)  # type: ignore[arg-type]
                            break  # the rest go the general way
                        call.size += n
                        room = min(budget.ceiling - budget.used, most - call.size)
                    fragments.append(args)
                    # More of a string (the commonest fragment) cannot close the arguments.
                    if scanner.mid_string and '"' not in args and "\\" not in args:
                        completed = False
                    else:
                        completed = scanner.feed(args)
                    out.append(
                        new_tool_call_delta(
                            c, position, call_id, name, args, source, len(fragments)
                        )
                    )
                    if completed and name:
                        budget.used += taken
                        call.size += taken
                        taken = 0
                        self.finalize(choice, c, call, out, allow_close=False)  # type: ignore[arg-type]
                        break
            finally:
                budget.used += taken
                call.size += taken

    def abandon(self) -> None:
        """The stream failed: calls still open become incomplete, never ready."""
        self.budget.release()
        for choice in self.choices.values():
            for call in choice.calls:
                if call.state == OPEN:
                    call.state = INCOMPLETE

    def incomplete(self) -> list[IncompleteToolCall]:
        """The calls of every choice that were cut, in choice order."""
        return [call for choice in self.choices.values() for call in choice.incomplete()]

    # -- tool calls --------------------------------------------------------------

    def choice(self, index: int) -> Choice:
        """The choice ``index``, opened on its first part (at most ``MAX_CHOICES``)."""
        choice = self.choices.get(index)
        if choice is None:
            if len(self.choices) >= MAX_CHOICES:
                raise RemoteProtocolError(f"the response has more than {MAX_CHOICES} choices")
            choice = self.choices[index] = Choice()
        return choice

    def call_part(self, part: CallPart, out: list[Event]) -> None:
        """Apply a part of a call: open it, grow it, or complete it."""
        choice = self.choice(part.choice)
        call_id = clean_id(part.id)
        name = clean_id(part.name) or ""
        call = None if part.new else choice.find(call_id, part.index)
        if call is None and not part.new and call_id is None and not name:
            call = _continued_under(choice, part)
        if call is None:
            if not (part.new or call_id or name or has_content(part)):
                return  # an empty delta that belongs to nothing: nothing to do
            call = self._open(choice, part, call_id, out)
        elif call.state != OPEN:
            self._late_part(call, part, name)
            return
        if call_id is not None and call.id is None:
            call.id = call_id
            choice.by_id[call_id] = call
        if name:
            call.name = call.check_text(name) if self.check_utf8 else name  # never appended
        if part.asynchronous:
            call.asynchronous = True
        if part.changed is not None and call.problem is None:
            call.problem = f"the call changed between its start and its end: {part.changed}"
        if part.args and self._add_text(choice, call, part, out):
            return
        self._add_values(call, part, out)
        if part.cut:
            call.state = INCOMPLETE
        elif part.done:
            self.finalize(choice, part.choice, call, out, allow_close=False)
        elif (
            name
            and call.scanner is not None
            and call.scanner.state == "complete"
            and call.args_value is MISSING
        ):
            # The name arrived after complete arguments.
            self.finalize(choice, part.choice, call, out, allow_close=False)

    def _add_text(self, choice: Choice, call: OpenCall, part: CallPart, out: list[Event]) -> bool:
        """Append a fragment of argument text; say whether that completed the call."""
        args = part.args or ""
        self.budget.take(len(args))
        if call.over_size(len(args)):
            self.finalize(choice, part.choice, call, out, allow_close=False)
            return True
        if self.check_utf8:
            args = call.check_text(args)
        call.fragments.append(args)
        scanner = call.scanner
        if scanner is None:
            scanner = call.scanner = CompletionScanner()
            call.source = LazyPartial(call.fragments)
        completed = scanner.feed(args)
        out.append(
            new_tool_call_delta(
                part.choice,
                call.position,
                call.id,
                call.name,
                args,
                call.source,
                len(call.fragments),
            )
        )
        if completed and call.name and not part.done:
            self.finalize(choice, part.choice, call, out, allow_close=False)
            return True
        return False

    def _add_values(self, call: OpenCall, part: CallPart, out: list[Event]) -> None:
        """Arguments as values: a whole object, the final text, a default, a
        structured partial value."""
        if part.args_value is not MISSING:
            call.args_value = part.args_value
            if self.check_utf8:
                call.check_value(part.args_value)
        if part.args_final is not None:
            call.args_final = (
                call.check_text(part.args_final) if self.check_utf8 else part.args_final
            )
        if part.args_default is not MISSING and call.args_default is MISSING:
            call.args_default = part.args_default
        if part.partial is not None:
            call.source = part.partial
            out.append(
                ToolCallDelta(
                    choice=part.choice,
                    index=call.position,
                    id=call.id,
                    name=call.name,
                    delta="",
                    source=call.source,
                    mark=part.mark,
                )
            )

    def _open(
        self, choice: Choice, part: CallPart, call_id: str | None, out: list[Event]
    ) -> OpenCall:
        # The start of a new call proves nothing about the others: parallel
        # calls may interleave their fragments, so each one waits for its own
        # end marker, the choice's finish or the end of the stream.
        self.count_call()
        call = OpenCall(len(choice.calls), part.index)
        choice.calls.append(call)
        if part.index is not None:
            choice.by_index[part.index] = call
        if call_id is not None:
            call.id = call_id
            choice.by_id[call_id] = call
        name = clean_id(part.name) or ""
        call.name = call.check_text(name) if self.check_utf8 else name
        out.append(
            ToolCallStarted(choice=part.choice, index=call.position, id=call.id, name=call.name)
        )
        return call

    def count_call(self) -> None:
        """Count one more call of the response (at most ``MAX_TOOL_CALLS``)."""
        if self.count >= MAX_TOOL_CALLS:
            raise RemoteProtocolError(
                f"the response has more than {MAX_TOOL_CALLS} tool calls, all choices together"
            )
        self.count += 1

    def _late_part(self, call: OpenCall, part: CallPart, name: str) -> None:
        """A part for a call that is already complete: harmless repeats are
        ignored; anything that would change the call is a protocol error,
        never a silent drop."""
        problems = late_problems(call, part, name)
        if problems:
            label = call.id or f"#{call.position}"
            raise RemoteProtocolError(
                f"tool call {label} ({call.name}) was already complete when "
                + " and ".join(problems)
                + " arrived for it"
            )

    def finalize(
        self, choice: Choice, c: int, call: OpenCall, out: list[Event], *, allow_close: bool
    ) -> None:
        """Settle an open call: ready or invalid, and the event that says so."""
        settled = settle(call, allow_close=allow_close, id_factory=self._id_factory)
        if isinstance(settled, InvalidToolCall):
            choice.invalid.append(settled)
            out.append(ToolCallInvalid(choice=c, call=settled))
        else:
            choice.ready.append(settled)
            out.append(ToolCallReady(choice=c, call=settled))

    def finish(self, part: FinishPart, out: list[Event]) -> None:
        """A choice's finish reason: its open calls are settled."""
        choice = self.choice(part.choice)
        reason = part.reason
        if reason == "stop" and choice.calls:
            # Several servers say "stop" after calls; the calls are what matters.
            reason = "tool_calls"
        choice.finish_reason = reason
        choice.raw_finish_reason = part.raw_reason
        choice.refusal = part.refusal
        truncated = reason == "length"
        for call in choice.calls:
            if call.state != OPEN:
                continue
            if truncated and call.growing():
                # Cut by the token limit: a prefix, never to be repaired or run.
                call.state = INCOMPLETE
                continue
            self.finalize(choice, part.choice, call, out, allow_close=not truncated)
        out.append(
            ChoiceFinished(
                choice=part.choice,
                reason=reason,
                raw_reason=part.raw_reason,
                refusal=part.refusal,
            )
        )

    def finalize_all(self, out: list[Event], *, allow_close: bool) -> None:
        """Settle every call still open (the stream ended)."""
        for c, choice in self.choices.items():
            for call in choice.calls:
                if call.state == OPEN:
                    self.finalize(choice, c, call, out, allow_close=allow_close)

    def all_finished(self) -> bool:
        """Whether there are choices and each has its finish reason."""
        return bool(self.choices) and all(
            ch.finish_reason is not None for ch in self.choices.values()
        )


def _continued_under(choice: Choice, part: CallPart) -> OpenCall | None:
    """The call whose rest ``part`` is, sent under another index (vLLM's and
    SGLang's tool parsers under speculative decoding, vLLM PR #37070): only
    when that is unambiguous. The piece names no call (no id, no name), its
    index is new, it does not open an object, and the latest call is still
    open with arguments that are not complete. A parallel call always opens
    with its own id or name, or with its object: it is never merged."""
    index, text = part.index, part.args
    last = choice.calls[-1] if choice.calls else None
    if index is None or not text or text.lstrip()[:1] in ("{", ""):
        return None
    if last is None or last.state != OPEN or last.scanner is None or not last.fragments:
        return None
    if last.scanner.state == "complete" or last.raw_index == index:
        return None
    choice.by_index[index] = last
    return last
