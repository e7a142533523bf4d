"""The agent: model -> tool calls -> execute -> results -> model, until the
model answers or the turn limit is reached.

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

What to do after a turn is decided by pure functions (:mod:`toolwire.agent.loop`),
tested without I/O; :mod:`toolwire.agent._driver` carries the decisions out,
:mod:`toolwire.agent._lifecycle` holds a run's lease and tells its observers
of its start and end, and this module is the public face: configuration, :meth:`Agent.run`,
:meth:`Agent.stream` and :meth:`Agent.resume`. The run's records and events
are value types in :mod:`toolwire.run`.

With ``eager=True``, a ``read_only`` tool starts as soon as its call is
provably complete, while the model is still streaming; if that stream then
fails, the early work is cancelled and discarded. Cancelling a run (task
cancellation, Ctrl-C) cancels every tool task it started: tool batches run
inside task groups owned by the run.

Every run is recorded in a journal (:mod:`toolwire.journal`) unless
``journal=False``: the journal is the first observer, so each step is on
disk before it happens. :meth:`Agent.resume` reads a run's journal and
continues from its last recorded step: a recorded tool outcome is reused, an
interrupted call runs again only when that is safe (``read_only``, or
``idempotent=True``: it gets the same idempotency key as the first time), and
is otherwise reported to the model as interrupted; a turn whose answer was not
recorded is requested again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import secrets
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Literal, overload

import anyio
from typing_extensions import TypeVar

from toolwire.agent._config import agent_toolbox, initial_messages, journal_setting
from toolwire.agent._driver import RunConfig, RunDriver
from toolwire.agent._events import run_events
from toolwire.agent._lifecycle import AgentObservers, resume_point, run_lease
from toolwire.agent._output import OutputMode, OutputSpec, output_spec
from toolwire.agent._resumed import finished_result
from toolwire.agent._suspend import Answers
from toolwire.agent._typed import Accepted, judge
from toolwire.agent.loop import RequestOptions
from toolwire.cost import Budget, Prices, UsageLimits, check_priced, default_prices
from toolwire.errors import UsageError
from toolwire.events import Event
from toolwire.journal import (
    Decision,
    Journal,
    ResumePlan,
    WaitingCall,
    open_journal,
    resolve_approval_key,
    waiting_for,
)
from toolwire.messages import Message
from toolwire.observe import RunObserver, check_observers
from toolwire.run import (
    AgentEvent,
    ModelRetrying,
    OutputDelta,
    OutputT,
    RunFinished,
    RunInfo,
    RunResult,
    RunStarted,
    ToolCallRecord,
    ToolExecutionFinished,
    ToolExecutionStarted,
    TurnFinished,
    TurnStarted,
)
from toolwire.tools import ApprovalCallback, Tool, Toolbox

if TYPE_CHECKING:
    from toolwire.http import HttpRequest, Transport
    from toolwire.providers import Provider, ToolChoice

__all__ = [
    "Agent",
    "AgentEvent",
    "ModelRetrying",
    "RunFinished",
    "RunResult",
    "RunStarted",
    "ToolCallRecord",
    "ToolExecutionFinished",
    "ToolExecutionStarted",
    "TurnFinished",
    "TurnStarted",
]

T = TypeVar("T")
U = TypeVar("U")


class Agent(Generic[OutputT]):
    """Runs a model with tools until it answers.

    Args:
        provider: an :mod:`toolwire.providers` instance (OpenAIChat,
            OpenAIResponses, Anthropic, Gemini).
        model: the provider's model id.
        tools: tools or plain functions, or a ready :class:`Toolbox`.
        system: the system prompt.
        max_turns: the most model requests a run may make.
        tool_choice: ``"auto"``, ``"required"``, ``"none"`` or ``{"name": ...}``.
            ``"auto"`` and ``"none"`` apply to every turn; a forced choice
            (``"required"``, a name) to the first turn only, and later turns
            send no ``tool_choice`` at all so the model can answer. With
            ``None`` (the default) no request carries one.
        eager: start ``read_only`` tools while the model is still streaming.
        stream_retries: how many times a turn whose stream fails mid-way
            (cut, malformed, error event) is sent again; 0 raises the typed
            error at once. No tool of a failed stream ever runs.
        max_tokens: output limit per model request.
        temperature: sampling temperature.
        transport: the HTTP transport (default: the provider's own).
        approve: approval callback for ``requires_approval`` tools; give it
            here with a list of tools, or to your own ``Toolbox(approve=...)``
            (giving both is an error: one of them would be ignored).
        metadata: passed to tools in ``ctx.metadata``.
        extra: provider-specific body fields, sent with every request.
        observers: :class:`~toolwire.observe.RunObserver` objects told of
            every step (journals, traces); awaited, so a write-ahead log is
            written before the step it records.
        prices: how the run's requests are priced (:class:`~toolwire.cost.Prices`):
            ``None`` (the default) for ``genai-prices``' data when it is
            installed (``toolwire[cost]``), ``False`` to price nothing.
        limits: the most one run may use (:class:`~toolwire.cost.UsageLimits`):
            tokens, cost, model requests, tool calls, wall time. Checked as the
            model streams; crossing one stops the run with
            :class:`~toolwire.errors.UsageLimitExceeded`. They count the
            whole run, over every process that runs or resumes it; a cost
            limit needs a price for the model (else
            :class:`~toolwire.errors.CostLimitUnpriced` when the run starts).
        budget: limits shared with every other run given the same
            :class:`~toolwire.cost.Budget` (of this agent or another).
        journal: where runs are recorded: ``None`` (the default) or ``True``
            for the default file (``$TOOLWIRE_JOURNAL``, else the user state
            directory; see :func:`toolwire.journal.default_journal`),
            a file path, a ``postgresql://`` URL (a
            :class:`~toolwire.journal.PostgresJournal`), a
            :class:`~toolwire.journal.Journal`, or ``False``
            to record nothing. :meth:`resume` needs one.
        output_type: what a run answers with: ``str`` (the default, the
            answer's text), or a pydantic model, a dataclass, a TypedDict, a
            ``list[...]``, a ``Literal``, or a union of these; then
            ``result.output`` is a validated instance (``Agent[T]``,
            ``RunResult[T]``). See the typed output guide (``docs/output.md``).
        output_mode: how a typed run asks: ``"auto"`` (the dialect's native
            structured output where the provider and model have it, else a
            final-result tool), ``"native"`` or ``"tool"``.
        output_retries: how many answers that fail validation are sent back
            to the model with the errors before the run raises
            :class:`~toolwire.errors.OutputInvalid`.
        output_strict: validate strictly (the default: ``"500"`` is not an
            integer); ``False`` lets pydantic coerce.
        native_output: whether ``model`` has the dialect's native structured
            output, for ``output_mode="auto"``: ``None`` (the default) asks
            the dialect's registration (``ProviderInfo.structured_models``);
            ``True`` or ``False`` says so for a model it does not know right
            (a new one, a compatible server's).

    Raises:
        UsageError: a setting is out of range, ``approve`` is given with a
            ready Toolbox, or ``journal`` is of an unknown kind.
        RegistrationError: an observer has a method that looks like a hook
            but is none (a misspelt name), or a hook of the wrong signature
            (see :func:`toolwire.observe.check_observers`).
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
        approve: ApprovalCallback | None = None,
        metadata: Mapping[str, Any] | None = None,
        extra: Mapping[str, Any] | None = None,
        observers: Sequence[RunObserver] = (),
        journal: Journal | str | os.PathLike[str] | bool | None = None,
        prices: Prices | bool | None = None,
        limits: UsageLimits | None = None,
        budget: Budget | None = None,
        output_type: type[OutputT] = str,  # type: ignore[assignment]
        output_mode: OutputMode = "auto",
        output_retries: int = 1,
        output_strict: bool = True,
        native_output: bool | None = None,
    ) -> None:
        if max_turns < 1:
            raise UsageError("max_turns must be at least 1")
        if output_retries < 0:
            raise UsageError("output_retries must be >= 0")
        self.output_type = output_type
        self.output_mode: OutputMode = output_mode
        self.output_retries = output_retries
        self.output_strict = output_strict
        self.native_output = native_output
        self._output = output_spec(output_type, output_mode, strict=output_strict)
        if stream_retries < 0:
            raise UsageError("stream_retries must be >= 0")
        self.toolbox = agent_toolbox(tools, approve)
        self.provider = provider
        self.model = model
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
        check_observers(observers)
        self.observers: list[RunObserver] = list(observers)
        if prices is None or prices is True:
            prices = default_prices()
        self.prices: Prices | None = prices or None
        self.limits = limits
        self.budget = budget
        self._journal, self._journal_path = journal_setting(journal)
        self._observers = AgentObservers()

    def __repr__(self) -> str:
        return (
            f"Agent(provider={self.provider!r}, model={self.model!r}, "
            f"tools={list(self.toolbox.names)!r}, max_turns={self.max_turns})"
        )

    # -- public API -----------------------------------------------------------------

    @overload
    async def run(
        self, prompt: str | Sequence[Message], *, run_id: str | None = None
    ) -> RunResult[OutputT]: ...
    @overload
    async def run(
        self, prompt: str | Sequence[Message], *, run_id: str | None = None, output_type: type[U]
    ) -> RunResult[U]: ...
    async def run(
        self, prompt: str | Sequence[Message], *, run_id: str | None = None, output_type: Any = None
    ) -> RunResult[Any]:
        """Run until the model answers; return the whole record.

        ``output_type`` asks this run for another output than the agent's
        (see the class's ``output_type``).

        The turn limit is not an error: it ends the run with
        ``outcome="max_turns"``.

        Raises:
            ProviderError, TransportError: the model request failed after the
                transport's retries.
            ProtocolError: a turn's stream failed and ``stream_retries`` ran out.
            CostLimitUnpriced: a cost limit, and no price for the model
                (raised before any request).
            UsageLimitExceeded: the run crossed one of its limits.
            OutputInvalid: a typed run's answers failed validation
                ``output_retries + 1`` times.
        """
        self._check_limits()
        spec = self._spec(output_type)
        messages = initial_messages(self.system, prompt)
        chosen = run_id or secrets.token_hex(16)
        with run_lease(self.journal, chosen):
            return await self._run(messages, chosen, None, None, spec=spec)

    @overload
    def run_sync(
        self, prompt: str | Sequence[Message], *, run_id: str | None = None
    ) -> RunResult[OutputT]: ...
    @overload
    def run_sync(
        self, prompt: str | Sequence[Message], *, run_id: str | None = None, output_type: type[U]
    ) -> RunResult[U]: ...
    def run_sync(
        self, prompt: str | Sequence[Message], *, run_id: str | None = None, output_type: Any = None
    ) -> RunResult[Any]:
        """:meth:`run` for synchronous code.

        It starts its own event loop, and closes the provider's own
        connections before returning: they belong to that loop.
        """

        return self._sync(lambda: self.run(prompt, run_id=run_id, output_type=output_type))

    async def stream_output(
        self, prompt: str | Sequence[Message], *, run_id: str | None = None, output_type: Any = None
    ) -> AsyncGenerator[Any, None]:
        """Run a typed run, yielding its output as it grows: a partial ``T``
        each time a delta of the answer completes more of it, and last the
        validated output itself.

        A field appears once its value is complete (validated alone, with its
        own type); a ``list[...]`` field appears when its list starts and
        grows by complete items; a ``list[...]`` output grows by complete
        items. A pydantic model is made with ``model_construct``, a dataclass
        without ``__init__``; a ``Literal`` or a natively answered union
        yields only the output. The raw partial JSON is each
        :class:`OutputDelta`'s ``partial`` (:meth:`stream`).

        Raises:
            UsageError: the run is not typed (no ``output_type``).
            OutputInvalid: as for :meth:`run`.
        """
        spec = self._spec(output_type)
        if spec is None:
            raise UsageError("stream_output() needs an output_type other than str")
        events = self.stream(prompt, run_id=run_id, output_type=output_type, partial_output=True)
        async with contextlib.aclosing(events):
            async for event in events:
                if isinstance(event, OutputDelta):
                    if event.output is not None:
                        yield event.output
                elif isinstance(event, RunFinished) and event.result.ok:
                    yield event.result.output

    async def stream(
        self,
        prompt: str | Sequence[Message],
        *,
        run_id: str | None = None,
        output_type: Any = None,
        partial_output: bool = False,
    ) -> AsyncGenerator[AgentEvent, None]:
        """Run, yielding every event of every turn as it happens: the model's
        text and tool-call deltas, tools starting and finishing, turn and run
        ends. The last event is :class:`RunFinished`.

        Iterate it to the end, or close it (``contextlib.aclosing``): closing
        it early cancels the run and every tool it started.

        A typed run (``output_type``) also yields an :class:`OutputDelta`
        after each delta of its answer; with ``partial_output``, each also
        carries the partial ``T`` it completed (``output``, see
        :meth:`stream_output`).
        """
        self._check_limits()
        spec = self._spec(output_type)
        messages = initial_messages(self.system, prompt)
        chosen = run_id or secrets.token_hex(16)

        async def runner(
            emit: Callable[[AgentEvent], None], emit_many: Callable[[list[Event]], None]
        ) -> None:
            with run_lease(self.journal, chosen):
                emit(RunStarted(run_id=chosen))
                result = await self._run(
                    messages, chosen, emit, emit_many, spec=spec, partial_output=partial_output
                )
                emit(RunFinished(result=result))

        # Closed in this task when the caller closes us: left to the garbage
        # collector, its task group would be exited from another task.
        async with contextlib.aclosing(run_events(runner)) as events:
            async for event in events:
                yield event

    async def resume(
        self,
        run_id: str,
        *,
        approvals: Iterable[Decision] = (),
        results: Mapping[str, Any] | None = None,
        principal: str = "",
        approval_key: bytes | None = None,
    ) -> RunResult[OutputT]:
        """Continue an interrupted or suspended run from its last recorded step.

        A ``suspended`` run (see :attr:`RunResult.pending`) continues once its
        calls are answered: here (``approvals``: :class:`Decision` values
        built from the pending calls; ``results``: outside results by call
        id, given by ``principal``), or earlier with ``toolwire runs
        approve/deny/answer`` or :func:`toolwire.journal.record_decision`.
        Answers are checked against the journal and recorded before the run
        goes on. With an approval key (``approval_key``, else
        ``$TOOLWIRE_APPROVAL_KEY``), every decision the run acts on, given
        here or recorded before, must be signed with it
        (:meth:`Decision.signed`): one that is not is refused and nothing
        runs; the run stays suspended. A call still unanswered suspends it again.

        A tool call whose outcome is recorded is not run again; one that
        started without a recorded outcome runs again only if the tool is
        ``read_only`` or ``idempotent=True`` (it gets the same
        ``ctx.idempotency_key`` as the first time), and is otherwise answered
        as interrupted. A turn whose answer
        was not recorded is requested again. A finished run returns its
        recorded result without any request.

        One process at a time may run or resume a given run: the run's lease
        is taken before its journal is read, and held to the end.

        Raises:
            UsageError: the agent has no journal.
            RunLeased: another live process (or task) is running this run.
            JournalError: the journal has no such run, or cannot be read.
            ApprovalRefused: an answer names another call, other arguments,
                expired, contradicts one already given, or (with a key) is not
                signed with the key; nothing of it runs.
            UsageLimitExceeded: as for :meth:`run`; the limits count the
                whole run, its earlier processes included.
            CostLimitUnpriced: as for :meth:`run`.
            ProviderError: as for :meth:`run` (also ``TransportError`` and
                ``ProtocolError``).
        """
        self._check_limits()
        answers = Answers(
            tuple(approvals), dict(results or {}), principal, resolve_approval_key(approval_key)
        )
        with self._resuming(run_id, answers) as (run_id, plan, finished):
            if finished is not None:
                return self._finished(plan, finished)
            return await self._run(
                list(plan.messages), run_id, None, None, plan=plan, spec=self._output
            )

    def resume_sync(
        self,
        run_id: str,
        *,
        approvals: Iterable[Decision] = (),
        results: Mapping[str, Any] | None = None,
        principal: str = "",
        approval_key: bytes | None = None,
    ) -> RunResult[OutputT]:
        """:meth:`resume` for synchronous code (its own event loop, as
        :meth:`run_sync`)."""

        return self._sync(
            lambda: self.resume(
                run_id,
                approvals=approvals,
                results=results,
                principal=principal,
                approval_key=approval_key,
            )
        )

    async def resume_stream(
        self,
        run_id: str,
        *,
        approvals: Iterable[Decision] = (),
        results: Mapping[str, Any] | None = None,
        principal: str = "",
        approval_key: bytes | None = None,
    ) -> AsyncGenerator[AgentEvent, None]:
        """:meth:`resume`, yielding the events of the rest of the run as
        :meth:`stream` does."""
        self._check_limits()
        answers = Answers(
            tuple(approvals), dict(results or {}), principal, resolve_approval_key(approval_key)
        )

        async def runner(
            emit: Callable[[AgentEvent], None], emit_many: Callable[[list[Event]], None]
        ) -> None:
            with self._resuming(run_id, answers) as (found, plan, finished):
                emit(RunStarted(run_id=found, resumed=True))
                if finished is not None:
                    result = self._finished(plan, finished)
                else:
                    messages = list(plan.messages)
                    result = await self._run(
                        messages, found, emit, emit_many, plan=plan, spec=self._output
                    )
            emit(RunFinished(result=result))

        # Closed in this task when the caller closes us: left to the garbage
        # collector, its task group would be exited from another task.
        async with contextlib.aclosing(run_events(runner)) as events:
            async for event in events:
                yield event

    def pending(self, run_id: str) -> tuple[WaitingCall, ...]:
        """The calls the suspended run ``run_id`` (an id or a unique prefix)
        still waits on: tool, arguments, digest and when the run suspended;
        empty when it waits for nothing (``toolwire runs pending`` in Python).

        Raises:
            UsageError: the agent has no journal.
            JournalError: the journal has no such run, or cannot be read.
        """
        journal = self.journal
        if journal is None:
            raise UsageError("pending() needs a journal, and this agent records none")
        return waiting_for(journal.load_run(journal.find_run(run_id)))

    def _check_limits(self) -> None:
        """Refuse, before the run starts, a cost limit on a model without a
        price (see :func:`~toolwire.cost.check_priced`)."""
        check_priced(
            model=self.model,
            prices=self.prices,
            provider=self.provider.name,
            base_url=self.provider.base_url,
            limits=self.limits,
            budget=self.budget,
        )

    def _sync(self, work: Callable[[], Awaitable[T]]) -> T:
        """``work()`` in an event loop of its own; the provider's own
        connections, which belong to that loop, closed before returning."""

        async def main() -> T:
            try:
                return await work()
            finally:
                await self.provider.aclose()

        return anyio.run(main)

    def _resuming(
        self, run_ref: str, answers: Answers
    ) -> contextlib.AbstractContextManager[tuple[str, ResumePlan, str | None]]:
        """Where the run ``run_ref`` names stands, its lease held (see
        :func:`~toolwire.agent._lifecycle.resume_point`)."""
        journal = self.journal
        if journal is None:
            raise UsageError("resume() needs a journal, and this agent records none")
        return resume_point(journal, run_ref, answers)

    @property
    def journal(self) -> Journal | None:
        """The journal this agent records to (opened on first use), or ``None``."""
        if self._journal is None and self._journal_path is not None:
            self._journal = open_journal(self._journal_path)
        return self._journal

    async def aclose(self) -> None:
        """Release the provider's connections."""
        await self.provider.aclose()

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
            **({"limits": self.limits.to_dict()} if self.limits is not None else {}),
        }

    def build_request(self, messages: Sequence[Message], turn: int) -> HttpRequest:
        """The HTTP request of model turn number ``turn`` for this conversation."""
        return self._config(self._output).build_request(messages, turn)

    def _spec(self, output_type: Any) -> OutputSpec[Any] | None:
        """The output a run asks for: ``output_type``'s, else the agent's."""
        if output_type is None:
            return self._output
        return output_spec(output_type, self.output_mode, strict=self.output_strict)

    def _finished(self, plan: ResumePlan, outcome: str) -> RunResult[Any]:
        """The result of a run its journal shows finished: a typed run's
        output validated again from the recorded answer, the same object."""
        result: RunResult[Any] = finished_result(plan, outcome)
        spec = self._output
        if spec is None or plan.response is None:
            return result
        mode = spec.mode_for(self.provider.dialect, self.model, self.native_output)
        verdict = judge(spec, mode, plan.response.choice())
        output = verdict.value if isinstance(verdict, Accepted) else None
        return dataclasses.replace(result, output=output)

    def _config(self, spec: OutputSpec[Any] | None = None) -> RunConfig:
        """This agent's settings, fixed for one run (asking ``spec``'s output)."""
        provider, toolbox = self.provider, self.toolbox
        tools = list(toolbox.schemas(provider.dialect)) if len(toolbox) else []
        mode: Literal["native", "tool"] = "tool"
        if spec is not None:
            mode = spec.mode_for(provider.dialect, self.model, self.native_output)
            if mode == "tool":
                shape = provider.wire.tool_schemas
                if shape is None:
                    raise UsageError(f"{provider.dialect}: toolwire writes no tools in it")
                tools += shape(list(spec.members), None)
        return RunConfig(
            provider=provider,
            transport=self.transport,
            toolbox=toolbox,
            metadata=dict(self.metadata),
            eager=self.eager,
            max_turns=self.max_turns,
            stream_retries=self.stream_retries,
            request=RequestOptions(
                model=self.model,
                tools=tuple(tools),
                tool_choice=self.tool_choice,
                max_tokens=self.max_tokens,
                temperature=self.temperature,
                extra=dict(self.extra) or None,
            ),
            prices=self.prices,
            limits=self.limits,
            budget=self.budget,
            output=spec,
            output_mode=mode,
            output_retries=self.output_retries,
        )

    # -- one run ----------------------------------------------------------------------

    async def _run(
        self,
        messages: list[Message],
        run_id: str,
        emit: Callable[[AgentEvent], None] | None,
        emit_many: Callable[[list[Event]], None] | None,
        *,
        plan: ResumePlan | None = None,
        spec: OutputSpec[Any] | None = None,
        partial_output: bool = False,
    ) -> RunResult[Any]:
        """One run to its end; its events go to ``emit`` and ``emit_many``
        (``None`` when nobody reads them: they are not even made)."""
        observers = self._observers.bind(self.observers, self.journal, self.provider._secrets)
        config = self._config(spec)
        if partial_output:
            config = dataclasses.replace(config, partial_output=True)
        settings = self.settings()
        if config.output is not None:  # what the run asks for, and how
            settings["output_type"] = config.output.schema_name
            settings["output_mode"] = config.output_mode

        def info() -> RunInfo:
            return RunInfo(
                run_id=run_id,
                model=self.model,
                provider=self.provider.name,
                dialect=self.provider.dialect,
                tools=self.toolbox.names,
                settings=settings,
                messages=tuple(messages),
                resumed=plan is not None,
            )

        driver = RunDriver(config, run_id, messages, observers, emit, emit_many)

        def drive() -> Awaitable[RunResult]:
            return driver.drive(plan)

        meter = driver.meter
        return await self._observers.observe(observers, run_id, info, plan, drive, meter.totals)
