"""What an agent run is and what it reports: its description, its records, its events.

These are value types, below the loop that produces them: the agent, the
journal, the observers and the CLI all import them from here, and this module
imports nothing above the stream's own types.

Naming: the stream reports a tool *call* as it is streamed
(``ToolCallStarted``, ``ToolCallDelta``, ``ToolCallReady``); the agent reports
the *execution* of a ready call (:class:`ToolExecutionStarted`,
:class:`ToolExecutionFinished`). ``ToolStarted`` and ``ToolFinished``, their
older names, still resolve with a warning (:mod:`toolwire._compat`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal

from typing_extensions import TypeVar

from toolwire import _compat
from toolwire.errors import ToolwireError
from toolwire.events import Event
from toolwire.messages import Message
from toolwire.types import InvalidToolCall, ToolCall, Usage

if TYPE_CHECKING:
    from toolwire.cost import Cost
    from toolwire.tools import ToolResult

__all__ = [
    "AgentEvent",
    "ModelRetrying",
    "Outcome",
    "OutputDelta",
    "OutputT",
    "PendingCall",
    "RunFinished",
    "RunInfo",
    "RunResult",
    "RunStarted",
    "Steer",
    "SteerHow",
    "ToolCallRecord",
    "ToolExecutionFinished",
    "ToolExecutionStarted",
    "TurnFinished",
    "TurnStarted",
    "TurnSteered",
    "argument_digest",
    "canonical_arguments",
    "printable_output",
]

OutputT = TypeVar("OutputT", default=str)
"""The type of a run's output: ``str`` unless the run asked for another
(``output_type=``, see :mod:`toolwire.agent._output`)."""

Outcome = Literal["answered", "max_turns", "suspended"]
"""How a run ended with a result: the model answered, the turn limit came
first, or the run waits for an approval or an outside result (``pending``)."""


def canonical_arguments(arguments: Mapping[str, Any]) -> str:
    """The one JSON text of a call's arguments: keys sorted, no spaces, UTF-8.

    Raises:
        TypeError, ValueError: the arguments are not JSON data.
    """
    return json.dumps(
        arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def argument_digest(arguments: Mapping[str, Any]) -> str:
    """``sha256:`` and the hex SHA-256 of :func:`canonical_arguments`: what
    an approval names, so that it approves these arguments and no others."""
    text = canonical_arguments(arguments)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class PendingCall:
    """A call a suspended run waits on, as its journal records it."""

    call_id: str
    name: str
    """The tool's name."""
    awaiting: Literal["approval", "result", "answer"]
    """``approval`` for a ``requires_approval`` tool with no approver in the
    process, ``result`` for an ``external`` tool, ``answer`` for a tool that
    asked a person a question mid-call (an MCP server's elicitation)."""
    arguments: dict[str, Any]
    """The validated arguments, as :func:`canonical_arguments` writes them."""
    digest: str
    """:func:`argument_digest` of ``arguments``."""
    turn: int
    repaired: bool = False
    """The model's arguments were repaired before they were validated: the
    approver sees what will run, not what the model wrote."""
    question: dict[str, Any] | None = None
    """For ``answer``: the question (``message``, answer ``schema``,
    ``source``, ``digest``: :meth:`toolwire.tools.Question.to_dict`)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (``question`` only when there is one)."""
        asked = {} if self.question is None else {"question": self.question}
        return {
            "call_id": self.call_id,
            "name": self.name,
            "awaiting": self.awaiting,
            "arguments": self.arguments,
            "digest": self.digest,
            "turn": self.turn,
            "repaired": self.repaired,
            **asked,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RunInfo:
    """What a run is: recorded when it starts."""

    run_id: str
    model: str
    provider: str
    """The provider's name (``openai``, ``anthropic``...)."""
    dialect: str
    """The wire dialect (``openai-chat``...)."""
    tools: tuple[str, ...]
    settings: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """max_turns, tool_choice, eager... (never a key or a header)."""
    messages: tuple[Message, ...] = ()
    """The conversation the run starts from."""
    resumed: bool = False
    """True when the run continues an interrupted one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallRecord:
    """One tool call of a run and what came of it."""

    turn: int
    call: ToolCall | InvalidToolCall
    result: ToolResult
    eager: bool = False
    """Started while the model was still streaming."""

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data."""
        call: dict[str, Any] = {"id": self.call.id, "name": self.call.name}
        if isinstance(self.call, ToolCall):
            call["arguments"] = self.call.arguments
        else:
            call["raw_arguments"] = self.call.raw_arguments
            call["error"] = self.call.error
        return {
            "turn": self.turn,
            "call": call,
            "result": self.result.to_dict(),
            "eager": self.eager,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult(Generic[OutputT]):
    """What a run produced."""

    output: OutputT
    """The final answer: its text, or with ``output_type=T`` the validated
    ``T``. When the run ended without an answer (``max_turns``,
    ``suspended``), an empty text, or ``None`` for a typed run."""
    outcome: Outcome
    """``answered``, ``max_turns`` when the turn limit ended the run, or
    ``suspended`` when it waits (see ``pending``)."""
    messages: tuple[Message, ...]
    """The whole conversation, system prompt first."""
    usage: Usage
    """Token usage summed over the turns."""
    tool_calls: tuple[ToolCallRecord, ...]
    """Every tool call with its result, attempts and time, in order."""
    turns: int
    """How many model requests the run made (retried turns count once)."""
    run_id: str
    cost: Cost | None = None
    """What the run's model requests cost, in US dollars (see
    :mod:`toolwire.cost`); ``None`` when the price of one of them is unknown.
    The whole run's, every process that ran it counted (a suspended run's so far)."""
    pending: tuple[PendingCall, ...] = ()
    """What a ``suspended`` run waits for: answer with
    :meth:`~toolwire.Agent.resume` (``approvals=``, ``results=``) or
    ``toolwire runs approve/deny/answer``."""

    @property
    def ok(self) -> bool:
        """True when the model answered."""
        return self.outcome == "answered"

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data."""
        out: dict[str, Any] = {
            "run_id": self.run_id,
            "outcome": self.outcome,
            "output": _json_output(self.output),
            "turns": self.turns,
            "usage": self.usage.to_dict(),
            "cost": self.cost.to_dict() if self.cost is not None else None,
            "tool_calls": [record.to_dict() for record in self.tool_calls],
            "messages": [m.to_dict() for m in self.messages],
        }
        if self.pending:
            out["pending"] = [p.to_dict() for p in self.pending]
        return out


def printable_output(output: Any) -> str:
    """A run's output as text: a text as it is, a typed output as indented
    JSON (what the journal records and ``toolwire runs show`` prints)."""
    if isinstance(output, str):
        return output
    if output is None:  # a typed run that ended without one
        return ""
    return json.dumps(_json_output(output), indent=2, ensure_ascii=False)


def _json_output(output: Any) -> Any:
    """A typed output as JSON data (a text stays a text)."""
    if output is None or isinstance(output, (str, int, float, bool)):
        return output
    from pydantic import TypeAdapter  # the typed outputs are pydantic-validated

    return TypeAdapter(type(output)).dump_python(output, mode="json")


# -- events ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted:
    """The run began (or resumed): always the first event, before any request.

    ``run_id`` is what :meth:`toolwire.Agent.resume` and ``toolwire runs``
    take, known before the run can stop for any reason."""

    kind: Literal["run_started"] = "run_started"
    run_id: str
    resumed: bool = False
    """The run goes on from its journal (:meth:`~toolwire.Agent.resume_stream`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted:
    """A model request is about to be sent."""

    kind: Literal["turn_started"] = "turn_started"
    turn: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Steer:
    """Input given to a run while it streams (:meth:`toolwire.Agent.steer`)."""

    steer_id: str
    """Its id, minted by the agent."""
    text: str
    """What the user said."""


SteerHow = Literal["cut", "provider", "pending"]
"""How steering took effect: toolwire ended the response (``cut``), the
provider did (``provider``), or the steers waited for the calls of the
response to be answered and go with the next turn (``pending``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnSteered:
    """Steering input took effect. ``cut`` or ``provider``: the turn's
    response ended ``steered`` (toolwire cut it at a point where no call was
    complete or half streamed, or the provider ended it), and its successor
    continues the same turn, the steers' text after what was said so far.
    ``pending``: the response had calls; the steers' text follows their
    results, in the next turn's request."""

    kind: Literal["turn_steered"] = "turn_steered"
    turn: int
    steers: tuple[Steer, ...]
    """The steers said, in the order given (none when the provider holds them)."""
    how: SteerHow


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRetrying:
    """A turn's stream failed and the whole turn is being sent again."""

    kind: Literal["model_retrying"] = "model_retrying"
    turn: int
    attempt: int
    error: ToolwireError


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecutionStarted:
    """A ready tool call began executing."""

    kind: Literal["tool_execution_started"] = "tool_execution_started"
    turn: int
    call: ToolCall | InvalidToolCall
    eager: bool = False
    """Started while the model was still streaming."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecutionFinished:
    """A tool call finished executing (successfully or not: see ``result.ok``)."""

    kind: Literal["tool_execution_finished"] = "tool_execution_finished"
    turn: int
    call: ToolCall | InvalidToolCall
    result: ToolResult
    eager: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFinished:
    """A model turn ended (its tools, if any, have run)."""

    kind: Literal["turn_finished"] = "turn_finished"
    turn: int
    finish_reason: str | None
    usage: Usage | None
    tool_calls: int
    cost: Cost | None = None
    """What the turn's model request cost (``None`` when unknown)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputDelta:
    """A typed run's output as streamed so far (after each delta of the
    answer's JSON, native text or a final-result call's arguments).

    ``partial`` is the JSON value parsed so far (objects, lists, strings cut
    where the stream is), not yet validated; it is the same object, grown in
    place, from one delta to the next (copy it to keep a snapshot). Reading it
    costs nothing beyond the parse of the delta: linear in the output's size.
    """

    kind: Literal["output_delta"] = "output_delta"
    turn: int
    partial: Any
    output: Any = None
    """The partial ``T`` when the run was asked for it (``stream(...,
    partial_output=True)``, :meth:`toolwire.Agent.stream_output`) and this
    delta completed more of it; else ``None`` (see ``docs/output.md``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished:
    """The run is over."""

    kind: Literal["run_finished"] = "run_finished"
    result: RunResult[Any]


AgentEvent = (
    Event
    | RunStarted
    | TurnStarted
    | TurnSteered
    | ModelRetrying
    | ToolExecutionStarted
    | ToolExecutionFinished
    | TurnFinished
    | OutputDelta
    | RunFinished
)
"""Everything :meth:`toolwire.Agent.stream` yields: the stream's events and the run's."""


def __getattr__(name: str) -> object:
    """Older names, with a warning (see :mod:`toolwire._compat`)."""
    return _compat.renamed(__name__, name)
