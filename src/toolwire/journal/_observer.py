"""The journal as a run observer: each step of a run becomes a record.

Theory of operation: :class:`JournalObserver` turns the agent's awaited
observer hooks into :class:`~toolwire.journal.Journal` writes, so a record is
durable before the step it describes happens (the tool intent before the
tool body, the request with its new messages before the request is sent).
Every record it writes is a typed record (:mod:`toolwire.journal._kinds`),
built by :mod:`toolwire.journal._payloads` and encoded without the secrets
it is given (the provider's API key) or the credential patterns of
:func:`toolwire.tools.scrub`.

Batching: a record is *committed* (durable before the hook returns) when
the agent's next step depends on it, and *staged* until then otherwise
(:mod:`toolwire.journal._step_writer` says which, and why no effect is
lost).

Parts go once each, by sha256, to the journal's blob table (both stores
toolwire ships keep one), in the transaction of the first record that refers
to them; the bytes never go through the records' redaction
(:mod:`toolwire.journal._blobs`). The records that change what a run has
used carry the run's totals after that step (:meth:`JournalObserver.metered`),
so a run resumed elsewhere goes on counting its limits from them. Writes are
small synchronous transactions on the event loop's thread by default;
``offload=True`` runs them in a worker thread (the reliability figures say
why the default is inline).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

import anyio

from toolwire.cost import Cost, RunTotals
from toolwire.errors import ToolwireError, UsageLimitExceeded
from toolwire.journal._base import RunStore
from toolwire.journal._blobs import Blob, store_parts
from toolwire.journal._kinds import (
    ModelAttempt,
    ModelFailed,
    ModelRequest,
    ModelStreaming,
    Record,
    RunFailed,
    RunStarted,
    SteerApplied,
    ToolsChanged,
    payload_of,
)
from toolwire.journal._payloads import (
    RecordEncoder,
    answered_record,
    approval_record,
    clean_settings,
    encode_record,
    error_record,
    intent_record,
    outcome_record,
    pending_record,
    response_record,
    run_summary,
    sampled_record,
)
from toolwire.journal._protocol import Journal
from toolwire.journal._records import Step, end_step
from toolwire.journal._step_writer import StepWriter
from toolwire.journal._totals import totals_record
from toolwire.messages import Message
from toolwire.observe import RunObserver
from toolwire.providers import ProviderAttempt
from toolwire.run import RunInfo, RunResult, TurnSteered
from toolwire.tools import Approval, Question, QuestionAnswer, Sample, ToolResult, ToolsChange
from toolwire.types import InvalidToolCall, StreamResult, ToolCall, Usage

__all__ = ["JournalObserver", "encode_record"]

_ZERO = Cost(total=Decimal(0))


class JournalObserver(RunObserver):
    """Records every step of the runs it observes in a journal.

    One observer may serve many concurrent runs: its state is kept per run id.

    Args:
        journal: where to write.
        secrets: strings that must never be written (API keys).
        offload: write from a worker thread instead of the event loop's.
    """

    def __init__(
        self, journal: Journal, *, secrets: Iterable[str] = (), offload: bool = False
    ) -> None:
        self.journal = journal
        self._encode = RecordEncoder(secrets).encode
        self._writes = StepWriter(journal, offload=offload)
        self._blobs = isinstance(journal, RunStore)
        """Whether parts go to the journal's blob table (another store keeps
        them inline, as base64)."""
        self._last_header: tuple[object, str] = ((), "")
        self._stored: dict[str, int] = {}
        self._usage: dict[str, Usage] = {}
        self._cost: dict[str, Cost | None] = {}
        self._priced: dict[str, tuple[Usage | None, Cost | None]] = {}
        """A request's usage and cost, told before its response or failure."""
        self._calls: dict[str, int] = {}
        self._turns: dict[str, int] = {}
        self._meters: dict[str, Callable[[], RunTotals]] = {}

    def __repr__(self) -> str:
        return f"JournalObserver({self.journal!r})"

    def _header(self, info: RunInfo) -> str:
        """The run's header as recorded (the last one is kept: the runs of one
        agent share it)."""
        key = (info.model, info.provider, info.dialect, info.tools, tuple(info.settings.items()))
        try:
            if self._last_header[0] == key:
                return self._last_header[1]
        except TypeError:  # a setting that cannot be compared
            pass
        header = self._text(
            RunStarted(
                model=info.model,
                provider=info.provider,
                dialect=info.dialect,
                tools=tuple(info.tools),
                settings=clean_settings(info.settings),
            )
        )
        self._last_header = (key, header)
        return header

    def _messages(self, messages: Sequence[Message], blobs: dict[str, Blob]) -> list[str]:
        """The JSON text of each message, its parts as blob references (their
        bytes added to ``blobs``) when the journal keeps blobs."""
        if not self._blobs:
            return [self._encode(m.to_dict()) for m in messages]
        return [self._encode(store_parts(m.to_dict(), blobs)) for m in messages]

    def _text(self, record: Record) -> str:
        """The JSON text a journal stores for ``record``, every secret removed."""
        return self._encode(payload_of(record))

    def _forget(self, run_id: str) -> None:
        tables = (self._stored, self._usage, self._cost, self._priced, self._calls, self._turns)
        for table in (*tables, self._meters):
            table.pop(run_id, None)
        self._writes.forget(run_id)

    # -- hooks -------------------------------------------------------------------

    async def run_started(self, info: RunInfo) -> None:
        """Record the run (or its resumption) with the messages it starts from:
        a new run's start is committed with its first request."""
        header = self._header(info)
        run_id = info.run_id
        if info.resumed:
            stored = await self._writes.call(
                lambda: self.journal.record_run(run_id, header=header, messages=(), resumed=True)
            )
        else:
            blobs: dict[str, Blob] = {}
            texts = self._messages(info.messages, blobs)
            start = Step("run_started", header, messages=texts, blobs=tuple(blobs.values()))
            self._writes.stage(run_id, start)
            stored = len(texts)
        self._stored[run_id] = stored
        self._usage.setdefault(run_id, Usage())
        self._calls.setdefault(run_id, 0)

    def resumed_from(
        self, run_id: str, *, usage: Usage, tool_calls: int, turns: int, cost: Cost | None = None
    ) -> None:
        """Seed the totals of a resumed run with what its earlier part did."""
        self._usage[run_id] = usage
        self._cost[run_id] = cost
        self._calls[run_id] = tool_calls
        self._turns[run_id] = turns

    def metered(self, run_id: str, totals: Callable[[], RunTotals]) -> None:
        """Record the run's ``totals()`` (its meter's) with each step that
        changes them."""
        self._meters[run_id] = totals

    def _totals_entry(self, run_id: str) -> dict[str, Any] | None:
        """The run's totals as recorded (``None`` when its meter is unknown)."""
        totals = self._meters.get(run_id)
        return totals_record(totals()) if totals is not None else None

    async def tools_changed(self, run_id: str, turn: int, change: ToolsChange) -> None:
        """Record the tools a source added and removed before this turn."""
        record = ToolsChanged(source=change.source, added=change.added, removed=change.removed)
        await self._writes.commit(run_id, Step("tools_changed", self._text(record), turn, None))

    async def turn_steered(self, run_id: str, turn: int, steered: TurnSteered) -> None:
        """Record each steer that took effect (none is sent by toolwire: one
        record of the provider's own), before the successor's request."""
        records = [
            SteerApplied(steer_id=s.steer_id, text=s.text, how=steered.how) for s in steered.steers
        ] or [SteerApplied(how=steered.how)]
        for record in records:
            await self._writes.commit(run_id, Step("steer", self._text(record), turn, None))

    async def model_request(
        self, run_id: str, turn: int, attempt: int, messages: Sequence[Message]
    ) -> None:
        """Record the request, and the messages no earlier request carried."""
        stored = self._stored.get(run_id, 0)
        blobs: dict[str, Blob] = {}
        new = self._messages(messages[stored:], blobs)
        totals = self._totals_entry(run_id)
        data = self._text(ModelRequest(messages=len(messages), new=len(new), totals=totals))
        step = Step(
            "model_request",
            data,
            turn,
            attempt,
            messages=new,
            first_position=stored,
            blobs=tuple(blobs.values()),
        )
        await self._writes.commit(run_id, step)
        self._stored[run_id] = max(stored, len(messages))
        self._turns[run_id] = max(self._turns.get(run_id, 0), turn)

    async def model_streaming(self, run_id: str, turn: int, attempt: int, response_id: str) -> None:
        """Record (committed at once) the id under which the provider keeps
        the response being streamed: a run resumed before the answer is
        recorded reads it again instead of asking again."""
        data = self._text(ModelStreaming(response_id=response_id))
        await self._writes.commit(run_id, Step("model_streaming", data, turn, attempt))

    async def model_attempt(
        self, run_id: str, turn: int, attempt: int, tried: ProviderAttempt
    ) -> None:
        """Record a provider of a fallback chain tried for the request."""
        record = ModelAttempt(
            position=tried.position,
            provider=tried.provider,
            dialect=tried.dialect,
            model=tried.model,
            elapsed=tried.elapsed,
            error=error_record(tried.error) if tried.error is not None else None,
        )
        # Staged: the response or the failure that follows commits it.
        self._writes.stage(run_id, Step("model_attempt", self._text(record), turn, attempt))

    async def model_usage(
        self, run_id: str, turn: int, attempt: int, usage: Usage | None, cost: Cost | None
    ) -> None:
        """Keep a request's usage and cost for its response (or failure) record,
        and add its cost to the run's."""
        self._priced[run_id] = (usage, cost)
        if usage is not None:
            self._usage[run_id] = self._usage.get(run_id, Usage()) + usage
        total = self._cost.get(run_id, _ZERO)
        self._cost[run_id] = None if total is None or cost is None else total + cost

    async def model_response(
        self, run_id: str, turn: int, attempt: int, result: StreamResult, elapsed: float
    ) -> None:
        """Record what the model answered (choice 0 is the one the run follows)."""
        priced = self._priced.pop(run_id, None)
        cost = priced[1] if priced is not None else None
        if priced is None and result.usage is not None:  # counted by model_usage otherwise
            self._usage[run_id] = self._usage.get(run_id, Usage()) + result.usage
        totals = self._totals_entry(run_id)
        record = response_record(result, cost, elapsed, totals)
        blobs: dict[str, Blob] = {}
        if self._blobs and record.assistant is not None:  # the media the model made
            record = replace(record, assistant=store_parts(record.assistant, blobs))
        data = self._text(record)
        # Staged: what comes next (the intents of its tool calls, the next
        # request, the run's end) is committed with it.
        step = Step("model_response", data, turn, attempt, blobs=tuple(blobs.values()))
        self._writes.stage(run_id, step)

    async def model_failed(
        self, run_id: str, turn: int, attempt: int, error: ToolwireError, elapsed: float
    ) -> None:
        """Record a failed request or stream (with what it used, when a usage
        limit cut it)."""
        priced = self._priced.pop(run_id, None)
        usage, cost = priced if priced is not None else (None, None)
        record = ModelFailed(
            elapsed=elapsed,
            error=error_record(error),
            priced=priced is not None,
            usage=usage.to_dict() if usage is not None else None,
            cost=cost.to_dict() if cost is not None else None,
            totals=self._totals_entry(run_id),
        )
        data = self._text(record)
        # Staged: the request sent again, or the run's end, commits it.
        self._writes.stage(run_id, Step("model_failed", data, turn, attempt))

    async def tool_started(
        self,
        run_id: str,
        turn: int,
        call: ToolCall | InvalidToolCall,
        idempotency_key: str,
        *,
        eager: bool = False,
    ) -> None:
        """Record the intent: committed before the tool's body runs."""
        totals = self._totals_entry(run_id)
        step = self._intent(turn, call, idempotency_key, eager, totals)
        await self._writes.commit(run_id, step)

    def _intent(
        self,
        turn: int,
        call: ToolCall | InvalidToolCall,
        idempotency_key: str,
        eager: bool,
        totals: dict[str, Any] | None = None,
    ) -> Step:
        data = self._text(intent_record(call, idempotency_key, eager, totals=totals))
        return Step("tool_intent", data, turn, call_id=call.id)

    async def tools_started(
        self,
        run_id: str,
        turn: int,
        calls: Sequence[tuple[ToolCall | InvalidToolCall, str]],
        *,
        eager: bool = False,
    ) -> None:
        """Record the intents of a batch of calls: committed together, before
        any of them runs."""
        if not calls:
            return
        *staged, (last, last_key) = calls
        for call, idempotency_key in staged:
            self._writes.stage(run_id, self._intent(turn, call, idempotency_key, eager))
        totals = self._totals_entry(run_id)
        step = self._intent(turn, last, last_key, eager, totals)
        await self._writes.commit(run_id, step)

    async def approval_decided(
        self, run_id: str, turn: int | None, call_id: str, name: str, decision: Approval
    ) -> None:
        """Record an approver's decision (before the tool may run)."""
        data = self._text(approval_record(name, decision))
        await self._writes.commit(run_id, Step("approval", data, turn, call_id=call_id))

    async def model_sampled(self, run_id: str, turn: int, call_id: str, sample: Sample) -> None:
        """Record (committed at once) a completion a running tool asked of
        the run's model, with the run's totals that count it."""
        if sample.usage is not None:  # it was sent: what it used and cost count
            self._usage[run_id] = self._usage.get(run_id, Usage()) + sample.usage
            total, cost = self._cost.get(run_id, _ZERO), sample.cost
            self._cost[run_id] = None if total is None or cost is None else total + cost
        record = sampled_record(sample, self._totals_entry(run_id))
        await self._writes.commit(
            run_id, Step(record.kind, self._text(record), turn, call_id=call_id)
        )

    async def question_answered(
        self,
        run_id: str,
        turn: int,
        call_id: str,
        name: str,
        question: Question,
        answer: QuestionAnswer,
    ) -> None:
        """Record (committed at once) an answer given in process to a
        running tool's question, bound to the question's digest."""
        record = answered_record(name, question, answer, principal="callback")
        await self._writes.commit(
            run_id, Step(record.kind, self._text(record), turn, call_id=call_id)
        )

    async def tool_finished(
        self,
        run_id: str,
        turn: int,
        call: ToolCall | InvalidToolCall,
        result: ToolResult,
        *,
        eager: bool = False,
    ) -> None:
        """Record the outcome of a tool call."""
        await self._outcome(run_id, turn, call, result, eager=eager, interrupted=False)

    async def tool_interrupted(
        self, run_id: str, turn: int, call: ToolCall | InvalidToolCall, result: ToolResult
    ) -> None:
        """Record that an interrupted call was answered without running again."""
        await self._outcome(run_id, turn, call, result, eager=False, interrupted=True)

    async def _outcome(
        self,
        run_id: str,
        turn: int,
        call: ToolCall | InvalidToolCall,
        result: ToolResult,
        *,
        eager: bool,
        interrupted: bool,
    ) -> None:
        record = outcome_record(result, eager=eager, interrupted=interrupted)
        blobs: dict[str, Blob] = {}
        if self._blobs and record.result is not None and result.parts:
            record = replace(record, result=store_parts(record.result, blobs))
        data = self._text(record)
        step = Step("tool_outcome", data, turn, call_id=call.id, blobs=tuple(blobs.values()))
        await self._writes.commit(run_id, step)
        self._calls[run_id] = self._calls.get(run_id, 0) + 1

    async def run_finished(self, run_id: str, result: RunResult) -> None:
        """Record the run's outcome and answer."""
        totals = self._totals_entry(run_id)
        summary = self._text(run_summary(result, totals))
        data = self._text(pending_record(result, totals)) if result.pending else summary
        await self._writes.commit(run_id, end_step(result.outcome, summary, data))
        self._forget(run_id)

    async def run_failed(self, run_id: str, error: BaseException) -> None:
        """Record why the run ended without an outcome."""
        cancelled = isinstance(error, (anyio.get_cancelled_exc_class(), KeyboardInterrupt))
        cost = self._cost.get(run_id, _ZERO)
        record = RunFailed(
            error=error_record(error),
            cancelled=cancelled,
            turns=self._turns.get(run_id),
            tool_calls=self._calls.get(run_id, 0),
            usage=self._usage.get(run_id, Usage()).to_dict(),
            cost=cost.to_dict() if cost is not None else None,
            totals=self._totals_entry(run_id),
        )
        text = self._text(record)
        status = "cancelled" if cancelled else "failed"
        if isinstance(error, UsageLimitExceeded):
            status = "limit"
        try:
            # Shielded by the agent; the write is short. A journal that cannot
            # be written must not hide the error that ended the run.
            self._writes.last(run_id, end_step(status, text, text))
        except ToolwireError:
            import logging

            logging.getLogger("toolwire.journal").exception(
                "cannot record the end of run %s", run_id
            )
        self._forget(run_id)
