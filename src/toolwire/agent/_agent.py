"""The agent: model -> tool calls -> execute -> results -> model, until the
model answers or the turn limit is reached.

This module is the public face: configuration, :meth:`Agent.run`,
:meth:`Agent.stream` and :meth:`Agent.resume`; the package's docstring
(:mod:`toolwire.agent`) tells how a run goes.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, overload

import anyio
from typing_extensions import TypeVar

from toolwire.agent._config import (
    agent_toolbox,
    journal_setting,
    start_messages,
    system_message,
)
from toolwire.agent._events import run_events
from toolwire.agent._lifecycle import AgentObservers, run_lease
from toolwire.agent._output import OutputMode, OutputSpec, output_spec
from toolwire.agent._runs import (
    check_limits,
    new_run,
    resume_to_end,
    resumed_run,
    run_config,
    run_settings,
    run_to_end,
)
from toolwire.agent._steering import LiveRuns
from toolwire.agent._suspend import Answers
from toolwire.content import CachePoint
from toolwire.cost import Budget, Prices, UsageLimits, default_prices
from toolwire.errors import UsageError
from toolwire.journal import (
    Decision,
    Journal,
    WaitingCall,
    open_journal,
    waiting_for,
)
from toolwire.messages import Message, Prompt
from toolwire.observe import RunObserver, check_observers
from toolwire.run import (
    AgentEvent,
    ModelRetrying,
    OutputDelta,
    OutputT,
    RunFinished,
    RunResult,
    RunStarted,
    Steer,
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
        system: the system prompt: text, or ``[text, CachePoint()]`` to
            cache it (see :class:`~toolwire.CachePoint`).
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
        system: str | Sequence[str | CachePoint] | None = None,
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
        system_message(system)  # a malformed system prompt fails here, not mid-run
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
        self.live_runs = LiveRuns()
        """The runs this agent drives now, which :meth:`steer` reaches."""

    def __repr__(self) -> str:
        return (
            f"Agent(provider={self.provider!r}, model={self.model!r}, "
            f"tools={list(self.toolbox.names)!r}, max_turns={self.max_turns})"
        )

    # -- public API -----------------------------------------------------------------

    @overload
    async def run(self, prompt: Prompt, *, run_id: str | None = None) -> RunResult[OutputT]: ...
    @overload
    async def run(
        self, prompt: Prompt, *, run_id: str | None = None, output_type: type[U]
    ) -> RunResult[U]: ...
    async def run(
        self, prompt: Prompt, *, run_id: str | None = None, output_type: Any = None
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
        check_limits(self)
        spec = self._spec(output_type)
        messages = await start_messages(self.system, prompt)
        chosen = run_id or secrets.token_hex(16)
        with run_lease(self.journal, chosen):
            return await run_to_end(self, self._observers, messages, chosen, None, None, spec=spec)

    @overload
    def run_sync(self, prompt: Prompt, *, run_id: str | None = None) -> RunResult[OutputT]: ...
    @overload
    def run_sync(
        self, prompt: Prompt, *, run_id: str | None = None, output_type: type[U]
    ) -> RunResult[U]: ...
    def run_sync(
        self, prompt: Prompt, *, run_id: str | None = None, output_type: Any = None
    ) -> RunResult[Any]:
        """:meth:`run` for synchronous code.

        It starts its own event loop, and closes the provider's own
        connections before returning: they belong to that loop.
        """

        return self._sync(lambda: self.run(prompt, run_id=run_id, output_type=output_type))

    async def stream_output(
        self, prompt: Prompt, *, run_id: str | None = None, output_type: Any = None
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
        prompt: Prompt,
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
        check_limits(self)
        spec = self._spec(output_type)
        messages = await start_messages(self.system, prompt)
        chosen = run_id or secrets.token_hex(16)

        runner = new_run(
            self, self._observers, messages, chosen, spec, partial_output=partial_output
        )

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
        check_limits(self)
        answers = Answers.given(approvals, results, principal, approval_key)
        return await resume_to_end(self, self._observers, run_id, answers, self._output)

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
        check_limits(self)
        answers = Answers.given(approvals, results, principal, approval_key)

        runner = resumed_run(self, self._observers, run_id, answers, self._output)

        # Closed in this task when the caller closes us: left to the garbage
        # collector, its task group would be exited from another task.
        async with contextlib.aclosing(run_events(runner)) as events:
            async for event in events:
                yield event

    def steer(self, run_id: str, text: str) -> Steer:
        """Give ``text`` to the run ``run_id`` while this agent drives it: said
        at the run's next safe point (see docs/agent.md, "Steering"), each
        steer that takes effect a :class:`TurnSteered` event and a ``steer``
        journal record. Call it from the run's event loop, not another thread.

        Raises:
            UsageError: no run of that id is running in this agent, or
                ``text`` is empty or too long.
        """
        return self.live_runs.steer(run_id, text)

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

    def _sync(self, work: Callable[[], Awaitable[T]]) -> T:
        """``work()`` in an event loop of its own; the provider's own
        connections, which belong to that loop, closed before returning."""

        async def main() -> T:
            try:
                return await work()
            finally:
                await self.provider.aclose()

        return anyio.run(main)

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
        return run_settings(self)

    def build_request(self, messages: Sequence[Message], turn: int) -> HttpRequest:
        """The HTTP request of model turn number ``turn`` for this conversation."""
        return run_config(self, self._output).build_request(messages, turn)

    def _spec(self, output_type: Any) -> OutputSpec[Any] | None:
        """The output a run asks for: ``output_type``'s, else the agent's."""
        if output_type is None:
            return self._output
        return output_spec(output_type, self.output_mode, strict=self.output_strict)
