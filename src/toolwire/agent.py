"""The agent loop: model -> tool calls -> execute -> results -> model, until
the model answers or the turn limit is reached.

Theory of operation
-------------------
Each *turn* builds one request from the conversation (through the provider,
which owns the wire shape), streams the response through toolwire's decoder,
and collects complete tool calls. Calls are executed by a
:class:`~toolwire.Toolbox` (validation, timeouts, retries, approval); their
results go back as :class:`~toolwire.messages.ToolResultMessage` in call
order, with the ids the model gave, invalid arguments and tool errors
included so the model can correct itself. The loop ends when a turn has no
tool call (the answer), or with a typed ``max_turns`` outcome.

The decision of what to do after a turn is a pure function,
:func:`next_step`, so it is tested without I/O; the rest is the async shell.

With ``eager=True``, a ``read_only`` tool starts as soon as its call is
provably complete, while the model is still streaming; if that stream then
fails, the early work is cancelled and discarded, exactly as if it had never
started. Cancelling a run (task cancellation, Ctrl-C) cancels every tool task
it started: tool batches run inside task groups owned by the run.

Every run is recorded in a journal (:mod:`toolwire.journal`) unless
``journal=False``: the journal is the first observer, so each step is on
disk before it happens. :meth:`Agent.resume` reads a run's journal and
continues from its last recorded step: a recorded tool outcome is reused, an
interrupted call runs again only when that is safe (``read_only``, or the
tool takes the idempotency key, which is the same as the first time), and is
otherwise reported to the model as interrupted; a turn whose answer was not
recorded is requested again.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
import uuid
from collections.abc import (
    AsyncGenerator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.abc

from toolwire import _json
from toolwire.decoder import StreamDecoder
from toolwire.errors import ReadError, ToolwireError, TransportTimeout, UsageError
from toolwire.events import Event, StreamFailed, ToolCallReady
from toolwire.journal import (
    Journal,
    JournalObserver,
    RecordedTurn,
    ResumePlan,
    default_journal_path,
    open_journal,
    plan_resume,
)
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from toolwire.observe import RunInfo, RunObserver
from toolwire.tools import (
    Approval,
    ApprovalCallback,
    ApprovalRequest,
    Tool,
    Toolbox,
    ToolResult,
    ask_approval,
    idempotency_key,
)
from toolwire.types import ChoiceResult, InvalidToolCall, StreamResult, ToolCall, Usage

if TYPE_CHECKING:
    from toolwire.http import Transport
    from toolwire.providers import Provider
    from toolwire.providers._base import ToolChoice

__all__ = [
    "Agent",
    "AgentEvent",
    "Finish",
    "ModelRetrying",
    "RunFinished",
    "RunResult",
    "RunTools",
    "ToolCallRecord",
    "ToolFinished",
    "ToolStarted",
    "TurnFinished",
    "TurnStarted",
    "next_step",
]

Outcome = Literal["answered", "max_turns"]


# -- records ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallRecord:
    """One tool call of a run and what came of it."""

    turn: int
    call: ToolCall | InvalidToolCall
    result: ToolResult
    eager: bool = False
    """Started while the model was still streaming."""

    def to_dict(self) -> dict[str, Any]:
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
class RunResult:
    """What a run produced."""

    output: str
    """The final answer text (empty when the run ended without one)."""
    outcome: Outcome
    """``answered``, or ``max_turns`` when the turn limit ended the run."""
    messages: tuple[Message, ...]
    """The whole conversation, system prompt first."""
    usage: Usage
    """Token usage summed over the turns."""
    tool_calls: tuple[ToolCallRecord, ...]
    """Every tool call with its result, attempts and time, in order."""
    turns: int
    """How many model requests the run made (retried turns count once)."""
    run_id: str

    @property
    def ok(self) -> bool:
        """True when the model answered."""
        return self.outcome == "answered"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "outcome": self.outcome,
            "output": self.output,
            "turns": self.turns,
            "usage": self.usage.to_dict(),
            "tool_calls": [record.to_dict() for record in self.tool_calls],
            "messages": [m.to_dict() for m in self.messages],
        }


# -- events -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted:
    """A model request is about to be sent."""

    kind: Literal["turn_started"] = "turn_started"
    turn: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRetrying:
    """A turn's stream failed and the whole turn is being sent again."""

    kind: Literal["model_retrying"] = "model_retrying"
    turn: int
    attempt: int
    error: ToolwireError


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStarted:
    """A tool call began executing."""

    kind: Literal["tool_started"] = "tool_started"
    turn: int
    call: ToolCall | InvalidToolCall
    eager: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFinished:
    """A tool call finished (successfully or not: see ``result.ok``)."""

    kind: Literal["tool_finished"] = "tool_finished"
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


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished:
    """The run is over."""

    kind: Literal["run_finished"] = "run_finished"
    result: RunResult


AgentEvent = (
    Event | TurnStarted | ModelRetrying | ToolStarted | ToolFinished | TurnFinished | RunFinished
)


# -- the pure decision ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunTools:
    """Execute these calls, then ask the model again."""

    calls: tuple[ToolCall | InvalidToolCall, ...]


@dataclass(frozen=True, slots=True)
class Finish:
    """The run is over, with this outcome."""

    outcome: Outcome


def next_step(choice: ChoiceResult, *, turn: int, max_turns: int) -> RunTools | Finish:
    """What to do after model turn number ``turn`` (1-based) produced ``choice``.

    Calls are run whatever the finish reason says (some providers never say
    ``tool_calls``); a turn without calls is the answer. Running tools after
    the last allowed turn would only produce results nobody reads, so the
    limit is checked first.
    """
    calls: list[ToolCall | InvalidToolCall] = [*choice.tool_calls, *choice.invalid_tool_calls]
    calls.sort(key=lambda call: call.index)
    if not calls:
        return Finish("answered")
    if turn >= max_turns:
        return Finish("max_turns")
    return RunTools(tuple(calls))


# -- the agent ------------------------------------------------------------------------


class _TurnFailed(Exception):
    """Internal: a turn's stream failed after bytes were read."""

    def __init__(self, error: ToolwireError) -> None:
        super().__init__(error.message)
        self.error = error


class Agent:
    """Runs a model with tools until it answers.

    Args:
        provider: an :mod:`toolwire.providers` instance (OpenAIChat,
            OpenAIResponses, Anthropic, Gemini).
        model: the provider's model id.
        tools: tools or plain functions, or a ready :class:`Toolbox`.
        system: the system prompt.
        max_turns: the most model requests a run may make.
        tool_choice: ``"auto"``, ``"required"``, ``"none"`` or ``{"name": ...}``
            for the first turn; later turns use ``"auto"`` so the model can
            answer.
        eager: start ``read_only`` tools while the model is still streaming.
        stream_retries: how many times a turn whose stream fails mid-way
            (cut, malformed, error event) is sent again; 0 raises the typed
            error at once. No tool of a failed stream ever runs.
        max_tokens: output limit per model request.
        temperature: sampling temperature.
        transport: the HTTP transport (default: the provider's own).
        approve: approval callback for ``requires_approval`` tools (used when
            ``tools`` is not already a Toolbox).
        metadata: passed to tools in ``ctx.metadata``.
        extra: provider-specific body fields, sent with every request.
        observers: :class:`~toolwire.observe.RunObserver` objects told of
            every step (journals, traces); awaited, so a write-ahead log is
            written before the step it records.
        journal: where runs are recorded: ``None`` (the default) or ``True``
            for the default file (``$TOOLWIRE_JOURNAL``, else the user state
            directory; see :func:`toolwire.journal.default_journal_path`),
            a file path, a :class:`~toolwire.journal.Journal`, or ``False``
            to record nothing. :meth:`resume` needs one.
    """

    def __init__(
        self,
        provider: Provider,
        *,
        model: str,
        tools: Toolbox | Iterable[Tool | Callable[..., Any]] = (),
        system: str | None = None,
        max_turns: int = 10,
        tool_choice: ToolChoice | None = None,
        eager: bool = False,
        stream_retries: int = 0,
        max_tokens: int | None = None,
        temperature: float | None = None,
        transport: Transport | None = None,
        approve: Any = None,
        metadata: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
        observers: Sequence[RunObserver] = (),
        journal: Journal | str | os.PathLike[str] | bool | None = None,
    ) -> None:
        if max_turns < 1:
            raise UsageError("max_turns must be at least 1")
        if stream_retries < 0:
            raise UsageError("stream_retries must be >= 0")
        self.provider = provider
        self.model = model
        self.toolbox = tools if isinstance(tools, Toolbox) else Toolbox(tools, approve=approve)
        self.system = system
        self.max_turns = max_turns
        self.tool_choice = tool_choice
        self.eager = eager
        self.stream_retries = stream_retries
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.transport = transport
        self.metadata = dict(metadata or {})
        self.extra = dict(extra or {})
        self.observers: list[RunObserver] = list(observers)
        self._journal: Journal | None = None
        self._journal_path: str | os.PathLike[str] | None = None
        if journal is None or journal is True:
            self._journal_path = default_journal_path()
        elif isinstance(journal, (str, os.PathLike)):
            self._journal_path = journal
        elif journal is not False:
            if not isinstance(journal, Journal):
                raise UsageError(
                    "journal must be a path, a Journal, True/None (the default file) or False"
                )
            self._journal = journal
        self._journal_observer: JournalObserver | None = None

    def __repr__(self) -> str:
        return (
            f"Agent(provider={self.provider!r}, model={self.model!r}, "
            f"tools={list(self.toolbox.names)!r}, max_turns={self.max_turns})"
        )

    # -- public API -----------------------------------------------------------------

    async def run(self, prompt: str | Sequence[Message], *, run_id: str | None = None) -> RunResult:
        """Run until the model answers; return the whole record.

        Raises:
            ProviderError, TransportError: the model request failed after the
                transport's retries.
            ProtocolError: a turn's stream failed and ``stream_retries`` ran out.
        """
        result: RunResult | None = None
        async for event in self.stream(prompt, run_id=run_id):
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None
        return result

    def run_sync(self, prompt: str | Sequence[Message], *, run_id: str | None = None) -> RunResult:
        """:meth:`run` for synchronous code.

        It starts its own event loop, and closes the provider's own
        connections before returning: they belong to that loop.
        """

        async def main() -> RunResult:
            try:
                return await self.run(prompt, run_id=run_id)
            finally:
                await self.provider.aclose()

        return anyio.run(main)

    async def stream(
        self, prompt: str | Sequence[Message], *, run_id: str | None = None
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run, yielding every event of every turn as it happens: the model's
        text and tool-call deltas, tools starting and finishing, turn and run
        ends. The last event is :class:`RunFinished`.

        Iterate it to the end, or close it (``contextlib.aclosing``): closing
        it early cancels the run and every tool it started.
        """
        messages = self._initial_messages(prompt)
        chosen = run_id or uuid.uuid4().hex

        async def runner(emit: Callable[[AgentEvent], None]) -> None:
            await self._run(messages, chosen, emit)

        # Closed in this task when the caller closes us: left to the garbage
        # collector, its task group would be exited from another task.
        async with contextlib.aclosing(self._events(runner)) as events:
            async for event in events:
                yield event

    async def _events(
        self, runner: Callable[[Callable[[AgentEvent], None]], Awaitable[None]]
    ) -> AsyncGenerator[AgentEvent, None]:
        send, receive = anyio.create_memory_object_stream[AgentEvent](math.inf)
        failure: list[BaseException] = []

        async def produce() -> None:
            async with send:
                try:
                    await runner(send.send_nowait)
                except Exception as exc:  # handed to the consumer below
                    failure.append(exc)

        closed = False
        async with anyio.create_task_group() as tg:
            tg.start_soon(produce)
            async with receive:
                try:
                    async for event in receive:
                        yield event
                except GeneratorExit:
                    # The caller closed us early: cancel the run here, and
                    # end normally, so that the task group does not report
                    # the GeneratorExit as one of its errors.
                    closed = True
                    tg.cancel_scope.cancel()
        if failure and not closed:
            raise failure[0]

    async def resume(self, run_id: str) -> RunResult:
        """Continue an interrupted run from its last recorded step.

        A tool call whose outcome is recorded is not run again; one that
        started without a recorded outcome runs again only if the tool is
        ``read_only`` or takes the idempotency key (the same key as the first
        time), and is otherwise answered as interrupted. A turn whose answer
        was not recorded is requested again. A finished run returns its
        recorded result without any request.

        Raises:
            UsageError: the agent has no journal.
            JournalError: the journal has no such run, or cannot be read.
            ProviderError, TransportError, ProtocolError: as for :meth:`run`.
        """
        result: RunResult | None = None
        async for event in self.resume_stream(run_id):
            if isinstance(event, RunFinished):
                result = event.result
        assert result is not None
        return result

    async def resume_stream(self, run_id: str) -> AsyncGenerator[AgentEvent, None]:
        """:meth:`resume`, yielding the events of the rest of the run as
        :meth:`stream` does."""
        journal = self.journal
        if journal is None:
            raise UsageError("resume() needs a journal, and this agent records none")
        log = journal.load_run(run_id)
        plan = plan_resume(log)
        finished = log.run.status if log.run.finished else None

        async def runner(emit: Callable[[AgentEvent], None]) -> None:
            if finished is not None:
                emit(RunFinished(result=self._recorded_result(plan, finished)))
                return
            await self._run(list(plan.messages), run_id, emit, plan=plan)

        # Closed in this task when the caller closes us: left to the garbage
        # collector, its task group would be exited from another task.
        async with contextlib.aclosing(self._events(runner)) as events:
            async for event in events:
                yield event

    @property
    def journal(self) -> Journal | None:
        """The journal this agent records to (opened on first use), or ``None``."""
        if self._journal is None and self._journal_path is not None:
            self._journal = open_journal(self._journal_path)
        return self._journal

    async def aclose(self) -> None:
        """Release the provider's connections."""
        await self.provider.aclose()

    # -- the loop ---------------------------------------------------------------------

    def _initial_messages(self, prompt: str | Sequence[Message]) -> list[Message]:
        messages: list[Message] = []
        if self.system:
            messages.append(SystemMessage(self.system))
        if isinstance(prompt, str):
            messages.append(UserMessage(prompt))
        else:
            given = list(prompt)
            if self.system and any(isinstance(m, SystemMessage) for m in given):
                messages = []
            messages.extend(given)
        return messages

    def settings(self) -> dict[str, Any]:
        """The run settings an observer records (nothing secret)."""
        return {
            "max_turns": self.max_turns,
            "tool_choice": self.tool_choice,
            "eager": self.eager,
            "stream_retries": self.stream_retries,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "base_url": self.provider.base_url,
        }

    def _observers(self) -> list[RunObserver]:
        journal = self.journal
        if journal is None:
            return self.observers
        if self._journal_observer is None or self._journal_observer.journal is not journal:
            key = getattr(self.provider, "_api_key", None)
            secret = key.reveal() if key is not None and hasattr(key, "reveal") else None
            self._journal_observer = JournalObserver(
                journal, secrets=[secret] if isinstance(secret, str) else []
            )
        # The journal comes first: every other observer sees a step once it
        # is recorded.
        return [self._journal_observer, *self.observers]

    async def _notify(self, method: str, *args: Any, **kwargs: Any) -> None:
        for observer in self._observers():
            await getattr(observer, method)(*args, **kwargs)

    async def _run(
        self,
        messages: list[Message],
        run_id: str,
        emit: Callable[[AgentEvent], None],
        *,
        plan: ResumePlan | None = None,
    ) -> None:
        info = RunInfo(
            run_id=run_id,
            model=self.model,
            provider=self.provider.name,
            api=self.provider.api,
            tools=self.toolbox.names,
            settings=self.settings(),
            messages=tuple(messages),
            resumed=plan is not None,
        )
        await self._notify("run_started", info)
        if plan is not None and self._journal_observer is not None:
            self._journal_observer.resumed_from(
                run_id,
                usage=plan.usage,
                tool_calls=len(plan.records),
                turns=plan.turn,
            )
        try:
            final = await self._loop(messages, run_id, emit, plan=plan)
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                await self._notify("run_failed", run_id, exc)
            raise
        await self._notify("run_finished", run_id, final)
        emit(RunFinished(result=final))

    def _recorded_result(self, plan: ResumePlan, outcome: str) -> RunResult:
        """The result of a run the journal shows finished."""
        messages = list(plan.messages)
        records = [
            ToolCallRecord(turn=r.turn, call=r.call, result=r.result, eager=r.eager)
            for r in plan.records
        ]
        output = ""
        if plan.response is not None:
            messages.append(plan.response.assistant)
            if outcome == "answered":
                output = plan.response.assistant.text
        return RunResult(
            output=output,
            outcome="answered" if outcome == "answered" else "max_turns",
            messages=tuple(messages),
            usage=plan.usage,
            tool_calls=tuple(records),
            turns=plan.turn,
            run_id=plan.run_id,
        )

    async def _loop(
        self,
        messages: list[Message],
        run_id: str,
        emit: Callable[[AgentEvent], None],
        *,
        plan: ResumePlan | None = None,
    ) -> RunResult:
        records: list[ToolCallRecord] = []
        usage = Usage()
        turn = 0
        settling: RecordedTurn | None = None
        if plan is not None:
            records = [
                ToolCallRecord(turn=r.turn, call=r.call, result=r.result, eager=r.eager)
                for r in plan.records
            ]
            usage = plan.usage
            settling = plan.response
            # Without a recorded answer, the last turn is requested again.
            turn = plan.turn if settling is not None else max(plan.turn - 1, 0)
        while True:
            done: dict[str, tuple[ToolResult, bool]] = {}
            if settling is not None:
                choice = settling.choice()
                turn_usage = settling.usage
                assistant = settling.assistant
            else:
                turn += 1
                emit(TurnStarted(turn=turn))
                result, early = await self._model_turn(messages, turn, run_id, emit)
                if result.usage is not None:
                    usage = usage + result.usage
                choice = result.choices[0]
                turn_usage = result.usage
                assistant = AssistantMessage.from_choice(choice)
                done = {call_id: (r, True) for call_id, r in early.items()}
            messages.append(assistant)
            step = next_step(choice, turn=turn, max_turns=self.max_turns)
            if isinstance(step, Finish):
                emit(
                    TurnFinished(
                        turn=turn,
                        finish_reason=choice.finish_reason,
                        usage=turn_usage,
                        tool_calls=0,
                    )
                )
                return RunResult(
                    output=choice.text if step.outcome == "answered" else "",
                    outcome=step.outcome,
                    messages=tuple(messages),
                    usage=usage,
                    tool_calls=tuple(records),
                    turns=turn,
                    run_id=run_id,
                )
            if settling is not None:
                done = await self._settle(step.calls, settling, turn, run_id, emit)
                settling = None
            results = await self._run_tools(step.calls, done, turn, run_id, emit)
            for call in step.calls:
                tool_result, eager = results[call.id]
                records.append(
                    ToolCallRecord(turn=turn, call=call, result=tool_result, eager=eager)
                )
                messages.append(
                    ToolResultMessage(
                        call_id=call.id,
                        name=call.name,
                        content=tool_result.content,
                        is_error=not tool_result.ok,
                    )
                )
            emit(
                TurnFinished(
                    turn=turn,
                    finish_reason=choice.finish_reason,
                    usage=turn_usage,
                    tool_calls=len(step.calls),
                )
            )

    def _build(self, messages: Sequence[Message], turn: int) -> Any:
        # A forced choice applies to the first turn only: afterwards the model
        # must be free to answer. "none" stays "none".
        tool_choice = self.tool_choice
        if turn > 1 and tool_choice is not None and tool_choice != "none":
            tool_choice = "auto"
        return self.provider.build_request(
            model=self.model,
            messages=messages,
            tools=self.toolbox.schemas(self.provider.api) if len(self.toolbox) else (),
            tool_choice=tool_choice if len(self.toolbox) else None,
            stream=True,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            extra=self.extra or None,
        )

    async def _model_turn(
        self,
        messages: Sequence[Message],
        turn: int,
        run_id: str,
        emit: Callable[[AgentEvent], None],
    ) -> tuple[StreamResult, dict[str, ToolResult]]:
        """One model request (sent again on a failed stream, if allowed).

        Returns the decoded result and the results of tools run eagerly."""
        request = self._build(messages, turn)
        attempt = 0
        while True:
            attempt += 1
            await self._notify("model_request", run_id, turn, attempt, tuple(messages))
            started = time.monotonic()
            try:
                result, early = await self._stream_once(request, turn, run_id, emit)
            except _TurnFailed as failed:
                elapsed = time.monotonic() - started
                await self._notify("model_failed", run_id, turn, attempt, failed.error, elapsed)
                if attempt > self.stream_retries:
                    raise failed.error from None
                emit(ModelRetrying(turn=turn, attempt=attempt + 1, error=failed.error))
                continue
            except ToolwireError as error:
                elapsed = time.monotonic() - started
                await self._notify("model_failed", run_id, turn, attempt, error, elapsed)
                raise
            elapsed = time.monotonic() - started
            await self._notify("model_response", run_id, turn, attempt, result, elapsed)
            return result, early

    async def _stream_once(
        self, request: Any, turn: int, run_id: str, emit: Callable[[AgentEvent], None]
    ) -> tuple[StreamResult, dict[str, ToolResult]]:
        decoder = StreamDecoder(self.provider.api)
        early: dict[str, ToolResult] = {}
        transport = self.transport or self.provider.transport
        failed: ToolwireError | None = None

        async def run_early(call: ToolCall) -> None:
            ran = await self._execute([call], turn, run_id, emit, eager=True)
            early[call.id] = ran[call.id]

        def handle(events: list[Event], tg: anyio.abc.TaskGroup) -> ToolwireError | None:
            for event in events:
                emit(event)
                if isinstance(event, StreamFailed):
                    return event.error
                if self.eager and isinstance(event, ToolCallReady) and event.choice == 0:
                    tool = self.toolbox.get(event.call.name)
                    if tool is not None and tool.read_only:
                        tg.start_soon(run_early, event.call)
            return None

        request_error: ToolwireError | None = None
        async with anyio.create_task_group() as tg:
            try:
                async with transport.stream(
                    request, parse_error=self.provider.parse_error
                ) as response:
                    # From here on, a broken stream is a failed turn, which
                    # may be sent again; errors before (connect, an HTTP
                    # status after the transport's retries) end the run.
                    try:
                        async for chunk in response.aiter_bytes():
                            failed = handle(decoder.feed(chunk), tg)
                            if failed is not None:
                                break
                    except (ReadError, TransportTimeout) as exc:
                        failed = exc
                        emit(StreamFailed(error=exc))
            except ToolwireError as exc:
                request_error = exc
            if failed is None and request_error is None:
                failed = handle(decoder.close(), tg)
            if failed is not None or request_error is not None:
                # Nothing from a failed stream may run: cancel and discard.
                tg.cancel_scope.cancel()
        # Raised outside the task group, so callers get the error itself,
        # not an exception group.
        if request_error is not None:
            raise request_error
        if failed is not None:
            raise _TurnFailed(failed)
        result = decoder.result()
        if result.error is not None:  # pragma: no cover - reported as StreamFailed above
            raise _TurnFailed(result.error)
        return result, early

    def _metadata(self, turn: int) -> dict[str, Any]:
        return {**self.metadata, "turn": turn, "model": self.model}

    async def _settle(
        self,
        calls: Sequence[ToolCall | InvalidToolCall],
        recorded: RecordedTurn,
        turn: int,
        run_id: str,
        emit: Callable[[AgentEvent], None],
    ) -> dict[str, tuple[ToolResult, bool]]:
        """The results a resumed turn already has: recorded outcomes, recorded
        denials, and interrupted calls that must not run again. The other
        calls (never started, or safe to repeat) are left to run."""
        done: dict[str, tuple[ToolResult, bool]] = {}
        for call in calls:
            outcome = recorded.outcomes.get(call.id)
            if outcome is not None:
                done[call.id] = outcome
                continue
            if call.id in recorded.denied:
                result = _denied(call, recorded.denied[call.id])
                await self._notify("tool_interrupted", run_id, turn, call, result)
            elif call.id in recorded.started and not self._safe_to_repeat(call, recorded):
                result = _interrupted(call)
                await self._notify("tool_interrupted", run_id, turn, call, result)
            else:
                continue
            emit(ToolFinished(turn=turn, call=call, result=result))
            done[call.id] = (result, False)
        return done

    def _safe_to_repeat(self, call: ToolCall | InvalidToolCall, recorded: RecordedTurn) -> bool:
        """Whether a call that started without a recorded outcome may run again."""
        if isinstance(call, InvalidToolCall):
            return True  # answered without running anything
        tool = self.toolbox.get(call.name)
        if tool is None or tool.read_only or tool.idempotent:
            return True
        # Approval is asked, and recorded, before the body runs: a call that
        # had no approval yet never started (and is asked about again).
        return tool.requires_approval and call.id not in recorded.approved

    async def _run_tools(
        self,
        calls: Sequence[ToolCall | InvalidToolCall],
        done: Mapping[str, tuple[ToolResult, bool]],
        turn: int,
        run_id: str,
        emit: Callable[[AgentEvent], None],
    ) -> dict[str, tuple[ToolResult, bool]]:
        """Run the calls that have no result yet (run eagerly, or recorded by
        an earlier process) as one batch; results by id with their eager flag."""
        results: dict[str, tuple[ToolResult, bool]] = dict(done)
        pending = [call for call in calls if call.id not in done]
        if pending:
            ran = await self._execute(pending, turn, run_id, emit)
            results.update((call_id, (result, False)) for call_id, result in ran.items())
        return results

    async def _execute(
        self,
        calls: Sequence[ToolCall | InvalidToolCall],
        turn: int,
        run_id: str,
        emit: Callable[[AgentEvent], None],
        *,
        eager: bool = False,
    ) -> dict[str, ToolResult]:
        """Run calls through the toolbox, which alone decides what is a
        duplicate and asks for approval: every intent is told to the observers
        before anything runs (so a duplicate folded onto another call is never
        run again on resume), and each outcome as soon as it is known."""
        keys = {call.id: idempotency_key(run_id, call.id) for call in calls}
        for call in calls:
            await self._notify("tool_started", run_id, turn, call, keys[call.id], eager=eager)
            emit(ToolStarted(turn=turn, call=call, eager=eager))

        async def finished(call: ToolCall | InvalidToolCall, result: ToolResult) -> None:
            await self._notify("tool_finished", run_id, turn, call, result, eager=eager)
            emit(ToolFinished(turn=turn, call=call, result=result, eager=eager))

        results = await self.toolbox.execute(
            calls,
            run_id=run_id,
            metadata=self._metadata(turn),
            idempotency_keys=keys,
            approve=self._approver(run_id, turn),
            on_result=finished,
        )
        return {call.id: result for call, result in zip(calls, results, strict=True)}

    def _approver(self, run_id: str, turn: int) -> ApprovalCallback | None:
        """The toolbox's approval callback, with each decision told to the
        observers (the journal records it) before the toolbox acts on it."""
        inner = self.toolbox.approve
        if inner is None:
            return None

        async def approve(request: ApprovalRequest) -> Approval:
            decision = await ask_approval(inner, request)
            await self._notify(
                "approval_decided", run_id, turn, request.call_id, request.tool_name, decision
            )
            return decision

        return approve


# -- resume and approvals -------------------------------------------------------------


def _interrupted(call: ToolCall | InvalidToolCall) -> ToolResult:
    """What the model is told about a call a crash interrupted, not run again."""
    message = (
        f"The call to {call.name!r} was interrupted before its outcome was recorded: it may "
        "or may not have taken effect, and it was not run again because repeating it is not "
        "known to be safe. Check whether it took effect before calling it again."
    )
    return ToolResult(
        call_id=call.id,
        name=call.name,
        ok=False,
        content=_json.dumps({"error": "interrupted", "message": message}),
        error="failed",
        arguments=dict(call.arguments) if isinstance(call, ToolCall) else {},
    )


def _denied(call: ToolCall | InvalidToolCall, reason: str) -> ToolResult:
    """A recorded denial stays a denial on resume."""
    message = (
        f"This call to {call.name!r} was denied and did not run. Reason: {reason}. "
        "Do not repeat it unchanged; ask the user how to proceed or take another approach."
    )
    return ToolResult(
        call_id=call.id,
        name=call.name,
        ok=False,
        content=_json.dumps({"error": "denied", "message": message}),
        error="denied",
        arguments=dict(call.arguments) if isinstance(call, ToolCall) else {},
    )
