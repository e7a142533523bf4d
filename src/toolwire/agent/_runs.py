"""One run of an agent, from the agent's settings: the :class:`RunConfig` it
is fixed to when it starts, the settings its journal records, the checks
made before its first request, and the run itself, from its start to its end.

The functions read an agent through :class:`AgentSettings`, the attributes
an :class:`~toolwire.Agent` has, so that this module does not import it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from toolwire.agent._config import RunConfig
from toolwire.agent._driver import RunDriver
from toolwire.agent._events import Runner
from toolwire.agent._lifecycle import AgentObservers, resume_point, run_lease
from toolwire.agent._output import OutputSpec
from toolwire.agent._resumed import finished_result
from toolwire.agent._steering import LiveRuns, sending_beside
from toolwire.agent._suspend import Answers
from toolwire.agent._typed import Accepted, judge
from toolwire.agent.loop import RequestOptions
from toolwire.cost import Budget, Prices, UsageLimits, check_priced
from toolwire.errors import UsageError
from toolwire.events import Event
from toolwire.journal import Journal, ResumePlan
from toolwire.messages import Message
from toolwire.observe import RunObserver
from toolwire.run import AgentEvent, RunFinished, RunInfo, RunResult, RunStarted
from toolwire.tools import Toolbox

if TYPE_CHECKING:
    from toolwire.http import Transport
    from toolwire.providers import Provider, ToolChoice

__all__ = [
    "AgentSettings",
    "check_limits",
    "finished_run",
    "new_run",
    "resume_to_end",
    "resumed_run",
    "run_config",
    "run_settings",
    "run_to_end",
]


class AgentSettings(Protocol):
    """What a run reads of its agent (see :class:`~toolwire.Agent`'s arguments)."""

    provider: Provider
    model: str
    toolbox: Toolbox
    max_turns: int
    tool_choice: ToolChoice | None
    eager: bool
    stream_retries: int
    max_tokens: int | None
    temperature: float | None
    transport: Transport | None
    metadata: dict[str, Any]
    extra: dict[str, Any]
    observers: list[RunObserver]
    prices: Prices | None
    limits: UsageLimits | None
    budget: Budget | None
    output_retries: int
    native_output: bool | None
    live_runs: LiveRuns

    @property
    def journal(self) -> Journal | None:
        """The agent's journal, or ``None``."""
        ...


def check_limits(agent: AgentSettings) -> None:
    """Refuse, before the run starts, a cost limit on a model without a
    price (see :func:`~toolwire.cost.check_priced`)."""
    check_priced(
        model=agent.model,
        prices=agent.prices,
        provider=agent.provider.name,
        base_url=agent.provider.base_url,
        limits=agent.limits,
        budget=agent.budget,
    )


def run_settings(agent: AgentSettings) -> dict[str, Any]:
    """The run settings an observer records (nothing secret)."""
    return {
        "max_turns": agent.max_turns,
        "tool_choice": agent.tool_choice,
        "eager": agent.eager,
        "stream_retries": agent.stream_retries,
        "max_tokens": agent.max_tokens,
        "temperature": agent.temperature,
        "base_url": agent.provider.base_url,
        **({"limits": agent.limits.to_dict()} if agent.limits is not None else {}),
        # The protocol version agreed with each MCP server whose tools it has.
        **({"tool_sources": sources} if (sources := agent.toolbox.sources) else {}),
    }


def run_config(agent: AgentSettings, spec: OutputSpec[Any] | None) -> RunConfig:
    """The agent's settings, fixed for one run (asking ``spec``'s output)."""
    provider, toolbox = agent.provider, agent.toolbox
    tools = list(toolbox.schemas(provider.dialect)) if len(toolbox) else []
    toolbox_schemas = len(tools)
    mode: Literal["native", "tool"] = "tool"
    if spec is not None:
        mode = spec.mode_for(provider.dialect, agent.model, agent.native_output)
        if mode == "tool":
            shape = provider.wire.tool_schemas
            if shape is None:
                raise UsageError(f"{provider.dialect}: toolwire writes no tools in it")
            tools += shape(list(spec.members), None)
    return RunConfig(
        provider=provider,
        transport=agent.transport,
        toolbox=toolbox,
        metadata=dict(agent.metadata),
        eager=agent.eager,
        max_turns=agent.max_turns,
        stream_retries=agent.stream_retries,
        toolbox_schemas=toolbox_schemas,
        request=RequestOptions(
            model=agent.model,
            tools=tuple(tools),
            tool_choice=agent.tool_choice,
            max_tokens=agent.max_tokens,
            temperature=agent.temperature,
            extra=dict(agent.extra) or None,
        ),
        prices=agent.prices,
        limits=agent.limits,
        budget=agent.budget,
        output=spec,
        output_mode=mode,
        output_retries=agent.output_retries,
    )


def finished_run(
    agent: AgentSettings, spec: OutputSpec[Any] | None, plan: ResumePlan, outcome: str
) -> RunResult[Any]:
    """The result of a run its journal shows finished: a typed run's
    output validated again from the recorded answer, the same object."""
    result: RunResult[Any] = finished_result(plan, outcome)
    if spec is None or plan.response is None:
        return result
    mode = spec.mode_for(agent.provider.dialect, agent.model, agent.native_output)
    verdict = judge(spec, mode, plan.response.choice())
    output = verdict.value if isinstance(verdict, Accepted) else None
    return dataclasses.replace(result, output=output)


async def run_to_end(
    agent: AgentSettings,
    observed: AgentObservers,
    messages: list[Message],
    run_id: str,
    emit: Callable[[AgentEvent], None] | None,
    emit_many: Callable[[list[Event]], None] | None,
    *,
    plan: ResumePlan | None = None,
    spec: OutputSpec[Any] | None = None,
    partial_output: bool = False,
) -> RunResult[Any]:
    """One run to its end, its observers (``observed``'s binding) told of
    every step; its events go to ``emit`` and ``emit_many`` (``None`` when
    nobody reads them: they are not even made)."""
    provider = agent.provider
    observers = observed.bind(agent.observers, agent.journal, provider._secrets)
    config = run_config(agent, spec)
    if partial_output:  # someone reads the partial objects (stream_output)
        config = dataclasses.replace(config, partial_output=True)
    settings = run_settings(agent)
    if config.output is not None:  # what the run asks for, and how
        settings["output_type"] = config.output.schema_name
        settings["output_mode"] = config.output_mode

    def info() -> RunInfo:
        return RunInfo(
            run_id=run_id,
            model=agent.model,
            provider=provider.name,
            dialect=provider.dialect,
            tools=agent.toolbox.names,
            settings=settings,
            messages=tuple(messages),
            resumed=plan is not None,
        )

    # Steerable while it runs; over the run's own transport where the
    # provider opens one (a WebSocket), closed when the run ends.
    with agent.live_runs.live(run_id) as inbox:
        async with (
            provider.run_transport(config.transport) as transport,
            sending_beside(inbox, transport),
        ):
            config = dataclasses.replace(config, transport=transport)
            driver = RunDriver(config, run_id, messages, observers, emit, emit_many, inbox)

            def drive() -> Awaitable[RunResult]:
                return driver.drive(plan)

            return await observed.observe(observers, run_id, info, plan, drive, driver.meter.totals)


def new_run(
    agent: AgentSettings,
    observed: AgentObservers,
    messages: list[Message],
    run_id: str,
    spec: OutputSpec[Any] | None,
    *,
    partial_output: bool = False,
) -> Runner:
    """A new run to stream (:meth:`~toolwire.Agent.stream`), its lease held
    from its start to its end."""

    async def runner(
        emit: Callable[[AgentEvent], None], emit_many: Callable[[list[Event]], None]
    ) -> None:
        with run_lease(agent.journal, run_id):
            emit(RunStarted(run_id=run_id))
            result = await run_to_end(
                agent,
                observed,
                messages,
                run_id,
                emit,
                emit_many,
                spec=spec,
                partial_output=partial_output,
            )
            emit(RunFinished(result=result))

    return runner


def _resuming(
    agent: AgentSettings, run_ref: str, answers: Answers, spec: OutputSpec[Any] | None
) -> contextlib.AbstractContextManager[tuple[str, ResumePlan, str | None]]:
    """Where the run ``run_ref`` names stands, its lease held (see
    :func:`~toolwire.agent._lifecycle.resume_point`)."""
    journal = agent.journal
    if journal is None:
        raise UsageError("resume() needs a journal, and this agent records none")
    output = spec.schema_name if spec is not None else None
    return resume_point(journal, run_ref, answers, output)


async def resume_to_end(
    agent: AgentSettings,
    observed: AgentObservers,
    run_ref: str,
    answers: Answers,
    spec: OutputSpec[Any] | None,
) -> RunResult[Any]:
    """Resume the run ``run_ref`` names to its end (:meth:`~toolwire.Agent.resume`);
    a finished one gives its recorded result."""
    with _resuming(agent, run_ref, answers, spec) as (run_id, plan, finished):
        if finished is not None:
            return finished_run(agent, spec, plan, finished)
        messages = list(plan.messages)
        return await run_to_end(agent, observed, messages, run_id, None, None, plan=plan, spec=spec)


def resumed_run(
    agent: AgentSettings,
    observed: AgentObservers,
    run_ref: str,
    answers: Answers,
    spec: OutputSpec[Any] | None,
) -> Runner:
    """The rest of the run ``run_ref`` names, to stream
    (:meth:`~toolwire.Agent.resume_stream`)."""

    async def runner(
        emit: Callable[[AgentEvent], None], emit_many: Callable[[list[Event]], None]
    ) -> None:
        with _resuming(agent, run_ref, answers, spec) as (run_id, plan, finished):
            emit(RunStarted(run_id=run_id, resumed=True))
            if finished is not None:
                result = finished_run(agent, spec, plan, finished)
            else:
                messages = list(plan.messages)
                result = await run_to_end(
                    agent, observed, messages, run_id, emit, emit_many, plan=plan, spec=spec
                )
        emit(RunFinished(result=result))

    return runner
