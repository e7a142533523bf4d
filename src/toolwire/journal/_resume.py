"""Where an interrupted run stands: a pure reading of its journal.

Theory of operation: :func:`plan_resume` replays a run's events (no I/O) and
returns the state a resumed run continues from:

* the conversation as of the last model request (the ``messages`` records),
  its parts' bytes read back from the journal's blobs;
* the last turn that was requested, and whether its answer was recorded.
  Without an answer, that turn's request is sent again. With one, the turn's
  tool calls are settled from the records that follow the turn's *last*
  request (earlier attempts of a request sent again, and what their eager
  tools did, are history, not state):

  - a call with a recorded outcome is answered with it and never runs again;
  - a call with an intent but no outcome was interrupted, maybe mid-effect;
    the agent decides, per tool, whether running it again is safe;
  - a call without an intent never started.

* the tool records and token usage of the completed turns, so the resumed
  run's result covers the whole run;
* the run's totals (tokens, cost, requests, tool calls, wall time) as last
  recorded (:mod:`toolwire.journal._totals`), so its limits count the whole run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from toolwire.content import content_from_dicts
from toolwire.cost import Cost, RunTotals, cost_from_dict
from toolwire.errors import ContentError, UsageError
from toolwire.journal._blobs import inline_parts
from toolwire.journal._kinds import (
    AnswerGiven,
    ApprovalGiven,
    ModelRequest,
    ModelResponse,
    ModelSampled,
    ModelStreaming,
    QuestionAnswered,
    RunSuspended,
    SteerApplied,
    ToolIntent,
    ToolOutcome,
)
from toolwire.journal._records import JournalError, RunLog
from toolwire.journal._totals import run_totals
from toolwire.messages import AssistantMessage, Message, message_from_dict
from toolwire.tools import QuestionAnswer, ToolResult
from toolwire.types import (
    ChoiceResult,
    FinishReason,
    InvalidToolCall,
    ToolCall,
    Usage,
    as_finish_reason,
)

__all__ = ["RecordedCall", "RecordedTurn", "ResumePlan", "plan_resume", "tool_result_from_dict"]

_RESULT_FIELDS = frozenset(ToolResult.__dataclass_fields__)


def tool_result_from_dict(data: Any) -> ToolResult:
    """Rebuild a :class:`~toolwire.tools.ToolResult` from its ``to_dict()``.

    Raises:
        JournalError: the record is not a tool result.
    """
    if not isinstance(data, dict):
        raise JournalError("a recorded tool result is not a JSON object")
    fields = {k: v for k, v in data.items() if k in _RESULT_FIELDS}
    fields.setdefault("arguments", {})
    if not isinstance(fields["arguments"], dict):
        fields["arguments"] = {}
    try:
        if "parts" in fields:
            fields["parts"] = content_from_dicts(fields["parts"])
        result = ToolResult(**fields)
    except ContentError as exc:
        raise JournalError(f"a recorded tool result's parts do not read: {exc}") from exc
    except TypeError as exc:
        raise JournalError(f"a recorded tool result is incomplete: {exc}") from exc
    if not isinstance(result.call_id, str) or not isinstance(result.content, str):
        raise JournalError("a recorded tool result has no call id or content")
    return result


def _usage_from_dict(data: Any) -> Usage | None:
    if not isinstance(data, dict):
        return None

    def number(name: str) -> int | None:
        value = data.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return Usage(
        input_tokens=number("input_tokens"),
        output_tokens=number("output_tokens"),
        total_tokens=number("total_tokens"),
        reasoning_tokens=number("reasoning_tokens"),
        cached_tokens=number("cached_tokens"),
        cache_write_tokens=number("cache_write_tokens"),
        cache_write_1h_tokens=number("cache_write_1h_tokens"),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedCall:
    """A tool call of a completed turn with its recorded result."""

    turn: int
    call: ToolCall | InvalidToolCall
    result: ToolResult
    eager: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedTurn:
    """The recorded answer of the turn a run resumes in, and its calls' state."""

    assistant: AssistantMessage
    finish_reason: FinishReason | None
    usage: Usage | None
    outcomes: dict[str, tuple[ToolResult, bool]] = field(
        default_factory=dict[str, tuple[ToolResult, bool]]
    )
    """Recorded results by call id, with their ``eager`` flag."""
    started: frozenset[str] = frozenset()
    """Call ids with an intent and no outcome: interrupted."""
    approved: frozenset[str] = frozenset()
    """Call ids an approver allowed (or edited)."""
    denied: dict[str, str] = field(default_factory=dict[str, str])
    """Call ids an approver denied, with the reason."""
    grants: dict[str, str] = field(default_factory=dict[str, str])
    """Approvals given to a suspended run: the argument digest each names,
    by call id (checked against the call before it runs)."""
    answers: dict[str, dict[str, QuestionAnswer]] = field(
        default_factory=dict[str, dict[str, QuestionAnswer]]
    )
    """Answers to the questions its calls asked: by call id, then question digest."""
    steers: tuple[SteerApplied, ...] = ()
    """Steers that took effect after the answer, and that no request carried yet."""

    def choice(self) -> ChoiceResult:
        """The answer as the decoded choice the agent loop works from."""
        valid = tuple(c for c in self.assistant.tool_calls if isinstance(c, ToolCall))
        invalid = tuple(c for c in self.assistant.tool_calls if isinstance(c, InvalidToolCall))
        return ChoiceResult(
            text=self.assistant.text,
            reasoning=self.assistant.reasoning,
            finish_reason=self.finish_reason,
            tool_calls=valid,
            invalid_tool_calls=invalid,
            provider_state=self.assistant.provider_state,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumePlan:
    """Where a run continues from."""

    run_id: str
    messages: tuple[Message, ...]
    """The conversation as of the last model request."""
    turn: int
    """The last turn that was requested (0: no request was made)."""
    response: RecordedTurn | None
    """That turn's recorded answer, or ``None`` when the request must be sent again."""
    records: tuple[RecordedCall, ...]
    """The tool calls of the turns before ``turn``, with their results."""
    usage: Usage
    """Token usage of the recorded answers up to and including ``turn``."""
    cost: Cost | None = None
    """What those answers cost (``None`` when one of them has no known cost)."""
    streaming: str | None = None
    """When ``turn``'s answer was not recorded: the id under which the
    provider keeps the response it was streaming (a Responses background
    response), to be read again rather than asked again."""
    totals: RunTotals = field(default_factory=RunTotals)
    """What the whole run has used so far, every request and every process
    counted: where its usage limits go on from."""
    asynchronous: dict[str, tuple[ToolResult, bool]] = field(
        default_factory=dict[str, tuple[ToolResult, bool]]
    )
    """When ``turn``'s answer was not recorded: the outcomes of the calls
    its attempts started asynchronously, by call id (they stand for the
    attempt sent again)."""
    asynchronous_started: frozenset[str] = frozenset()
    """Those calls that started without a recorded outcome."""


@dataclass
class _Turn:
    request_seq: int
    response: ModelResponse | None = None
    intents: set[str] = field(default_factory=set[str])
    outcomes: dict[str, tuple[ToolResult, bool]] = field(
        default_factory=dict[str, tuple[ToolResult, bool]]
    )
    approved: set[str] = field(default_factory=set[str])
    denied: dict[str, str] = field(default_factory=dict[str, str])
    grants: dict[str, str] = field(default_factory=dict[str, str])
    answers: dict[str, dict[str, QuestionAnswer]] = field(
        default_factory=dict[str, dict[str, QuestionAnswer]]
    )
    streaming: str | None = None
    steers: list[SteerApplied] = field(default_factory=list[SteerApplied])
    asynchronous: set[str] = field(default_factory=set[str])
    """The calls started asynchronously, by any attempt of the turn."""
    steered: list[ModelResponse] = field(default_factory=list[ModelResponse])
    """The turn's answers its later requests continued (steered responses)."""

    def again(self, request_seq: int) -> _Turn:
        """The turn's request sent again (or a steered answer's successor asked):
        what its asynchronous calls did stands, and its answers' usage counts."""
        kept = self.asynchronous
        answered = [*self.steered, *([self.response] if self.response is not None else [])]
        return _Turn(
            request_seq=request_seq,
            intents={i for i in self.intents if i in kept},
            outcomes={k: v for k, v in self.outcomes.items() if k in kept},
            asynchronous=set(kept),
            steered=answered,
        )


def plan_resume(log: RunLog) -> ResumePlan:
    """Read where a run stands from its journal.

    Raises:
        JournalError: the records are not ones toolwire wrote (a response or
            a tool record without its request, a malformed message).
    """
    turns = _read_turns(log)
    try:
        messages = tuple(message_from_dict(inline_parts(m, log.read_blob)) for m in log.messages)
    except UsageError as exc:
        raise JournalError(f"run {log.run.run_id}: a stored message is malformed: {exc}") from exc
    last = max(turns, default=0)
    records, usage, cost = _earlier_turns(turns, last)
    for event in log.events:  # completions the run's tools asked of its model
        if isinstance(event.record, ModelSampled):
            sampled = _usage_from_dict(event.record.usage)
            usage = usage + sampled if sampled is not None else usage
    # An unanswered turn is requested again; only its asynchronous calls stand.
    unanswered = turns[last].again(-1) if last and turns[last].response is None else None
    return ResumePlan(
        run_id=log.run.run_id,
        messages=messages,
        turn=last,
        response=_last_turn(turns[last], last) if last else None,
        records=tuple(records),
        usage=usage,
        cost=cost,
        streaming=turns[last].streaming if unanswered is not None else None,
        totals=run_totals(log.events),
        asynchronous=dict(unanswered.outcomes) if unanswered is not None else {},
        asynchronous_started=frozenset(unanswered.intents - set(unanswered.outcomes))
        if unanswered is not None
        else frozenset(),
    )


def _read_turns(log: RunLog) -> dict[int, _Turn]:
    """Each requested turn's records; a request sent again starts afresh."""
    turns: dict[int, _Turn] = {}
    for event in log.events:
        record = event.record
        if isinstance(record, ModelRequest):
            if event.turn is None:
                raise JournalError(f"event {event.seq}: a model request without a turn")
            earlier = turns.get(event.turn)
            turns[event.turn] = (
                earlier.again(event.seq) if earlier is not None else _Turn(request_seq=event.seq)
            )
            continue
        if isinstance(record, RunSuspended):
            _asked(turns, record)
            continue
        if not isinstance(record, _TURN_RECORDS):
            continue
        state = turns.get(event.turn) if event.turn is not None else None
        if state is None:
            raise JournalError(f"event {event.seq} ({event.kind}): no request for its turn")
        if isinstance(record, ModelResponse):
            # The media the model made is in the blob table (a newer journal's).
            assistant = inline_parts(record.assistant, log.read_blob)
            state.response = replace(record, assistant=assistant)
        elif isinstance(record, ModelStreaming):
            state.streaming = record.response_id
        elif isinstance(record, SteerApplied):
            state.steers.append(record)
        elif event.call_id is None:
            raise JournalError(f"event {event.seq} ({event.kind}): no call id")
        elif isinstance(record, ToolIntent):
            state.intents.add(event.call_id)
            if record.asynchronous:
                state.asynchronous.add(event.call_id)
        elif isinstance(record, ApprovalGiven):
            if record.decision in ("allow", "edit"):
                state.approved.add(event.call_id)
                if record.digest is not None:
                    state.grants[event.call_id] = record.digest
            elif record.decision == "deny":
                state.denied[event.call_id] = (
                    record.reason if record.reason is not None else "the call was not approved"
                )
        elif isinstance(record, AnswerGiven):
            state.outcomes[event.call_id] = (_answer(event.call_id, record), False)
        elif isinstance(record, QuestionAnswered):
            if record.digest is not None:
                action = record.action if record.action in ("accept", "decline") else "cancel"
                given = QuestionAnswer(action=action, content=record.content)  # type: ignore[arg-type]
                state.answers.setdefault(event.call_id, {})[record.digest] = given
        else:
            result = tool_result_from_dict(inline_parts(record.result, log.read_blob))
            state.outcomes[event.call_id] = (result, record.eager)
    return turns


_TURN_RECORDS = (
    ModelResponse,
    SteerApplied,
    ModelStreaming,
    ToolIntent,
    ToolOutcome,
    ApprovalGiven,
    AnswerGiven,
    QuestionAnswered,
)


def _asked(turns: dict[int, _Turn], record: RunSuspended) -> None:
    """A call that suspended its run on a question gave up its call cleanly:
    it is not interrupted, and runs again on resume."""
    for item in record.pending:
        if isinstance(item, dict) and item.get("awaiting") == "answer":
            turn = item.get("turn")
            state = turns.get(turn) if isinstance(turn, int) else None
            if state is not None:
                state.intents.discard(str(item.get("call_id")))


"""The records that belong to a turn's last request."""


def _answer(call_id: str, record: AnswerGiven) -> ToolResult:
    """An external tool's result, given to a suspended run."""
    if record.content is None or record.name is None:
        raise JournalError(f"the answer to call {call_id} has no content or name")
    return ToolResult(call_id=call_id, name=record.name, ok=True, content=record.content)


def _earlier_turns(
    turns: dict[int, _Turn], last: int
) -> tuple[list[RecordedCall], Usage, Cost | None]:
    """The tool calls of the turns before ``last``, and the usage and cost up to it."""
    usage = Usage()
    cost: Cost | None = Cost(total=Decimal(0))
    records: list[RecordedCall] = []
    for number in sorted(turns):
        state = turns[number]
        if state.response is None and number != last:
            raise JournalError(f"turn {number} has no recorded answer but turn {last} does")
        for answer in (*state.steered, *([state.response] if state.response else [])):
            turn_usage = _usage_from_dict(answer.usage)
            if turn_usage is not None:
                usage = usage + turn_usage
            turn_cost = cost_from_dict(answer.cost)
            cost = None if cost is None or turn_cost is None else cost + turn_cost
        if number == last or state.response is None:
            continue
        for call in _assistant(state.response, number).tool_calls:
            outcome = state.outcomes.get(call.id)
            if outcome is None:
                raise JournalError(f"turn {number}: call {call.id} has no recorded result")
            records.append(
                RecordedCall(turn=number, call=call, result=outcome[0], eager=outcome[1])
            )
    return records, usage, cost


def _last_turn(state: _Turn, number: int) -> RecordedTurn | None:
    """The last turn's recorded answer and what came of its calls (``None``:
    its answer was not recorded, so it is requested again)."""
    if state.response is None:
        return None
    return RecordedTurn(
        assistant=_assistant(state.response, number),
        finish_reason=as_finish_reason(state.response.finish_reason),
        usage=_usage_from_dict(state.response.usage),
        outcomes=dict(state.outcomes),
        started=frozenset(state.intents - set(state.outcomes)),
        approved=frozenset(state.approved),
        denied=dict(state.denied),
        grants=dict(state.grants),
        answers={call_id: dict(given) for call_id, given in state.answers.items()},
        steers=tuple(state.steers),
    )


def _assistant(response: ModelResponse, turn: int) -> AssistantMessage:
    data = response.assistant
    if data is None:
        raise JournalError(f"turn {turn}: the recorded answer has no message")
    try:
        return AssistantMessage.from_dict(data)
    except UsageError as exc:
        raise JournalError(f"turn {turn}: the recorded answer is malformed: {exc}") from exc
