"""The agent loop's decisions, as pure functions over closed unions.

After each model turn the loop asks :func:`next_step` what to do, and the
async driver (:mod:`toolwire.agent`) only carries the answer out:

* :class:`RunTools`: execute these calls (in call order; the toolbox asks for
  approval where a tool requires it, per call), then ask the model again;
* :class:`ContinueTurn`: the provider paused the turn (``finish_reason ==
  "paused"``) or cut it to take steering input (``"steered"``): ask again
  with what it said so far, no message added;
* :class:`Finish`: the run is over, answered or stopped by the turn limit;
* :class:`RetryTurn`: the turn's stream broke after bytes were read, send the
  whole turn again (no tool of the broken stream ever runs);
* :class:`Fail`: the stream broke and no retry is left: raise its error.

What each model request says besides the conversation is
:func:`turn_options` of the run's :class:`RequestOptions` and the turn.

When a run resumes, :func:`settlement` decides for each call of the recorded
turn whether its recorded outcome stands, whether it was denied, whether it
was interrupted and must not run again, or whether it runs. Nothing here
does I/O, reads a clock or awaits, so every branch is tested directly.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, overload

from typing_extensions import assert_never

from toolwire import _compat
from toolwire.errors import ToolwireError
from toolwire.run import Outcome
from toolwire.stream import jsonio
from toolwire.tools import Tool, ToolResult
from toolwire.types import ChoiceResult, InvalidToolCall, ToolCall

if TYPE_CHECKING:
    from toolwire.stream.codecs.request import ToolChoice

__all__ = [
    "Broken",
    "ContinueTurn",
    "Deny",
    "Fail",
    "Finish",
    "Interrupt",
    "NextStep",
    "Replied",
    "RequestOptions",
    "RetryTurn",
    "Reuse",
    "Run",
    "RunTools",
    "Settlement",
    "TurnEnd",
    "denied_result",
    "interrupted_result",
    "is_continued",
    "next_step",
    "settlement",
    "turn_options",
]

AnyCall = ToolCall | InvalidToolCall


def is_continued(choice: ChoiceResult) -> bool:
    """Whether the provider means the turn to go on (``paused``, ``steered``):
    it is not an answer, even without calls."""
    return choice.finish_reason in ("paused", "steered")


# -- what a turn asks ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestOptions:
    """What a model request says besides the conversation."""

    model: str
    """The provider's model id."""
    tools: tuple[Mapping[str, Any], ...] = ()
    """The tool schemas, in the provider's dialect."""
    tool_choice: ToolChoice | None = None
    """The tool choice asked for (see :func:`turn_options` for later turns)."""
    max_tokens: int | None = None
    temperature: float | None = None
    extra: Mapping[str, Any] | None = None
    """Provider-specific body fields; ``None`` for none."""


def turn_options(options: RequestOptions, turn: int) -> RequestOptions:
    """The options of model turn number ``turn`` (1-based) of a run asking ``options``.

    A forced tool choice applies to the first turn only: afterwards the model
    must be free to answer, and the request says nothing (some servers,
    llama-cpp-python's, cannot stream an explicit ``"auto"``); ``"auto"`` and
    ``"none"`` stay as the caller asked. Without tools there is nothing to
    choose: no tool choice is sent.
    """
    choice = options.tool_choice
    if not options.tools or (turn > 1 and choice not in ("auto", "none")):
        choice = None
    if choice == options.tool_choice:
        return options
    return replace(options, tool_choice=choice)


# -- how a turn ended -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Replied:
    """Model turn number ``turn`` (1-based) streamed to its end with this choice."""

    choice: ChoiceResult
    turn: int


@dataclass(frozen=True, slots=True)
class Broken:
    """The stream of attempt number ``attempt`` of a turn broke after bytes were read."""

    error: ToolwireError
    attempt: int


TurnEnd = Replied | Broken


# -- what to do next --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunTools:
    """Execute these calls, then ask the model again."""

    calls: tuple[AnyCall, ...]


@dataclass(frozen=True, slots=True)
class ContinueTurn:
    """The provider paused the turn: send it back as it is, to be continued."""


@dataclass(frozen=True, slots=True)
class Finish:
    """The run is over, with this outcome."""

    outcome: Outcome


@dataclass(frozen=True, slots=True)
class RetryTurn:
    """Send the whole turn again; this will be attempt number ``attempt``."""

    attempt: int
    error: ToolwireError


@dataclass(frozen=True, slots=True)
class Fail:
    """The turn cannot be completed: raise ``error``."""

    error: ToolwireError


NextStep = RunTools | ContinueTurn | Finish | RetryTurn | Fail


@overload
def next_step(
    end: Replied, *, max_turns: int, stream_retries: int
) -> RunTools | ContinueTurn | Finish: ...
@overload
def next_step(end: Broken, *, max_turns: int, stream_retries: int) -> RetryTurn | Fail: ...
def next_step(end: TurnEnd, *, max_turns: int, stream_retries: int) -> NextStep:
    """What the loop does after a turn ended as ``end``.

    Calls are run whatever the finish reason says (some providers never say
    ``tool_calls``); a turn without calls is the answer, unless the provider
    paused it, and then it is continued. Running tools or continuing after
    the last allowed turn would only produce work nobody reads, so the limit
    is checked first; a ``steered`` turn without calls is continued by its
    successor, which is the same turn, so no limit stops it. A broken stream is sent again while
    ``stream_retries`` allow. A turn that replied never leads to a retry or a
    failure, and a broken one never to tools or an answer: the overloads say so.
    """
    match end:
        case Broken(error=error, attempt=attempt):
            if attempt > stream_retries:
                return Fail(error)
            return RetryTurn(attempt + 1, error)
        case Replied(choice=choice, turn=turn):
            calls: list[AnyCall] = [*choice.tool_calls, *choice.invalid_tool_calls]
            if not calls and not is_continued(choice):
                return Finish("answered")
            if not calls and choice.finish_reason == "steered":
                return ContinueTurn()  # its successor is the same turn
            if turn >= max_turns:
                return Finish("max_turns")
            if not calls:
                return ContinueTurn()
            calls.sort(key=lambda call: call.index)
            return RunTools(tuple(calls))
        case _:
            assert_never(end)


# -- what a resumed turn already has ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reuse:
    """The call's outcome is recorded: use it."""

    result: ToolResult
    eager: bool


@dataclass(frozen=True, slots=True)
class Deny:
    """The call was denied: a recorded denial stays a denial."""

    reason: str


@dataclass(frozen=True, slots=True)
class Interrupt:
    """The call started and its outcome was never recorded; running it again
    is not known to be safe, so the model is told it was interrupted."""


@dataclass(frozen=True, slots=True)
class Run:
    """The call runs (it never started, or repeating it is safe)."""


Settlement = Reuse | Deny | Interrupt | Run


def settlement(
    call: AnyCall,
    *,
    outcomes: Mapping[str, tuple[ToolResult, bool]],
    denied: Mapping[str, str],
    started: Collection[str],
    approved: Collection[str],
    tool: Callable[[str], Tool | None],
) -> Settlement:
    """What becomes of ``call`` in a resumed turn, from what the journal recorded.

    A call that started without a recorded outcome runs again only if that is
    safe: an invalid call (answered without running anything), an unknown
    tool, a ``read_only`` or idempotent tool, or a ``requires_approval`` tool
    that had no approval yet (approval is recorded before the body runs, so
    it never started).
    """
    outcome = outcomes.get(call.id)
    if outcome is not None:
        return Reuse(*outcome)
    if call.id in denied:
        return Deny(denied[call.id])
    if call.id not in started or isinstance(call, InvalidToolCall):
        return Run()
    found = tool(call.name)
    if found is None or found.read_only or found.idempotent:
        return Run()
    if found.requires_approval and call.id not in approved:
        return Run()
    return Interrupt()


def interrupted_result(call: AnyCall) -> ToolResult:
    """What the model is told about a call that started and has no recorded
    outcome: it may have run (its worker crashed after the effect, or was
    fenced out by a takeover and may still finish it); it is not repeated."""
    message = (
        f"The call to {call.name!r} may have run: it started, and its outcome was never "
        "recorded (its worker crashed or was stopped, and may even have finished it since). "
        "It was not repeated, because repeating it is not known to be safe. Check whether it "
        "took effect before calling it again."
    )
    return _failed(call, "interrupted", message, "failed")


def denied_result(call: AnyCall, reason: str) -> ToolResult:
    """A recorded denial stays a denial on resume."""
    message = (
        f"This call to {call.name!r} was denied and did not run. Reason: {reason}. "
        "Do not repeat it unchanged; ask the user how to proceed or take another approach."
    )
    return _failed(call, "denied", message, "denied")


def _failed(call: AnyCall, kind: str, message: str, error: str) -> ToolResult:
    return ToolResult(
        call_id=call.id,
        name=call.name,
        ok=False,
        content=jsonio.dumps({"error": kind, "message": message}),
        error=error,  # type: ignore[arg-type]
        arguments=dict(call.arguments) if isinstance(call, ToolCall) else {},
    )


def __getattr__(name: str) -> object:
    """Older names, with a warning (see :mod:`toolwire._compat`)."""
    return _compat.renamed(__name__, name)
