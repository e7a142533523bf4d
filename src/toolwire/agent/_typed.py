"""A typed run's turns: whether a reply gives the output, and the output as it streams.

:func:`judge` is pure: given a reply, it says whether the reply is the
answer (:class:`Accepted`), an answer that failed validation and goes back to
the model (:class:`Refused`), or no answer yet (``None``: tools to run, a
paused turn). :class:`OutputStream` follows the answer's JSON as it streams
and makes one :class:`~toolwire.run.OutputDelta` per delta, reading the
partial value from the same incremental parser tool arguments use, once per
fragment: linear in the output's size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from toolwire.agent._output import OutputFailure, OutputMember, OutputSpec
from toolwire.agent._partial import PartialOutput
from toolwire.agent.loop import is_continued
from toolwire.events import Event, TextDelta, ToolCallDelta, ToolCallReady, ToolCallStarted
from toolwire.run import OutputDelta
from toolwire.stream import jsonio
from toolwire.stream.partial import LazyPartial
from toolwire.tools import ToolResult
from toolwire.types import ChoiceResult, InvalidToolCall, ToolCall

__all__ = ["Accepted", "OutputStream", "Refused", "judge", "refused_result"]

Mode = Literal["native", "tool"]


@dataclass(frozen=True, slots=True)
class Accepted:
    """The reply gives the output ``value``."""

    value: Any


@dataclass(frozen=True, slots=True)
class Refused:
    """The reply answered, and its answer did not validate.

    ``calls`` holds the final-result calls refused (each with why), empty
    for a native answer or a text answer where a call was asked for."""

    failure: OutputFailure
    calls: tuple[tuple[ToolCall | InvalidToolCall, OutputFailure], ...] = ()


def judge(spec: OutputSpec[Any], mode: Mode, choice: ChoiceResult) -> Accepted | Refused | None:
    """What a reply is to a typed run asking in ``mode`` (see the module docstring).

    With the tool, the first valid final-result call is the output (the
    turn's other calls do not run: the run is over); every final-result
    call refused is answered with its errors, beside the other calls' results.
    A reply with neither a call nor a pause is refused: the answer must be
    given by the tool. Natively, the text of a reply without calls is the output.
    """
    calls: list[ToolCall | InvalidToolCall] = [*choice.tool_calls, *choice.invalid_tool_calls]
    calls.sort(key=lambda c: c.index)
    if mode == "native":
        if calls or is_continued(choice):
            return None
        return _accepted(spec.check(spec.whole, choice.text))
    refused: list[tuple[ToolCall | InvalidToolCall, OutputFailure]] = []
    for call in calls:
        member = spec.member(call.name)
        if member is None:
            continue
        if isinstance(call, InvalidToolCall):
            failure = OutputFailure(call.raw_arguments, (("", f"not valid JSON: {call.error}"),))
            refused.append((call, failure))
            continue
        outcome = spec.check(member, jsonio.dumps(call.arguments))
        if not isinstance(outcome, OutputFailure):
            return Accepted(outcome)
        refused.append((call, outcome))
    if refused:
        return Refused(refused[-1][1], tuple(refused))
    if calls or is_continued(choice):
        return None
    names = " or ".join(spec.tool_names)
    message = f"no answer was given: call {names} with it, as its arguments"
    return Refused(OutputFailure(choice.text, (("", message),)))


def _accepted(value: Any) -> Accepted | Refused:
    if isinstance(value, OutputFailure):
        return Refused(value)
    return Accepted(value)


def refused_result(call: ToolCall | InvalidToolCall, failure: OutputFailure) -> ToolResult:
    """The result a refused final-result call gets: the errors, for the model to fix."""
    content = jsonio.dumps({"error": "invalid_output", "message": failure.feedback()})
    arguments = dict(call.arguments) if isinstance(call, ToolCall) else {}
    return ToolResult(
        call_id=call.id,
        name=call.name,
        ok=False,
        content=content,
        error="invalid_arguments",
        arguments=arguments,
    )


class OutputStream:
    """The output of one model turn as it streams, for :class:`OutputDelta` events.

    Natively the answer is the turn's text (choice 0); with the tool, the
    arguments of the first final-result call, whose ``ToolCallDelta.partial``
    the stream's own lazy parser already gives. With ``build``, each delta
    also carries the partial ``T`` it completed (``output``), from a
    :class:`~toolwire.agent._partial.PartialOutput`."""

    __slots__ = (
        "_call",
        "_fragments",
        "_grown",
        "_parser",
        "_typed",
        "build",
        "mode",
        "spec",
        "turn",
    )

    def __init__(self, spec: OutputSpec[Any], mode: Mode, turn: int, *, build: bool) -> None:
        self.spec = spec
        self.build = build
        self.mode = mode
        self.turn = turn
        self._fragments: list[str] = []
        self._parser = LazyPartial(self._fragments)
        self._call: tuple[int, OutputMember] | None = None
        """``(call index, member)`` of the final-result call followed."""
        self._grown = False
        """An argument delta of that call was seen (a dialect that sends a
        call whole, Gemini's, gives its arguments once, when it is ready)."""
        self._typed: PartialOutput | None = None
        if mode == "native" and build:
            self._typed = spec.partial_output(spec.whole, self._parser.settled)

    def deltas(self, events: list[Event]) -> list[OutputDelta]:
        """The output deltas ``events`` (one network read's) make."""
        out: list[OutputDelta] = []
        for event in events:
            if self.mode == "native":
                if isinstance(event, TextDelta) and event.choice == 0 and event.text:
                    self._fragments.append(event.text)
                    partial = self.spec.whole.unwrap(self._parser.partial_at(len(self._fragments)))
                    out.append(self._delta(partial))
            elif isinstance(event, ToolCallStarted) and event.choice == 0:
                member = self.spec.member(event.name)
                if member is not None and self._call is None:
                    self._call = (event.index, member)
            elif isinstance(event, ToolCallDelta) and event.choice == 0:
                followed = self._call
                if followed is not None and followed[0] == event.index:
                    if not self._grown and self.build:
                        source = event.source
                        settled = source.settled if isinstance(source, LazyPartial) else _open
                        self._typed = self.spec.partial_output(followed[1], settled)
                    self._grown = True
                    out.append(self._delta(followed[1].unwrap(event.partial)))
            elif isinstance(event, ToolCallReady) and event.choice == 0 and not self._grown:
                followed = self._call
                if followed is not None and followed[0] == event.call.index:
                    if self.build:
                        self._typed = self.spec.partial_output(followed[1], _closed)
                    out.append(self._delta(followed[1].unwrap(event.call.arguments)))
        return out

    def _delta(self, partial: Any) -> OutputDelta:
        typed = self._typed
        output = None if typed is None else typed.update(partial)
        return OutputDelta(turn=self.turn, partial=partial, output=output)


def _open(container: Any, depth: int) -> bool:
    """Settledness unknown (arguments built by the codec): the last value of
    a container counts as still being read."""
    return False


def _closed(container: Any, depth: int) -> bool:
    """Arguments given whole: everything is complete."""
    return True
