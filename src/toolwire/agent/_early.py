"""Calls that start while the model is still streaming: eager and asynchronous.

Eager tools (``Agent(eager=True)``): a ``read_only`` tool starts as soon as
its call is provably complete, in a task group owned by the turn's stream;
if the stream then fails, that work is cancelled and discarded, exactly as
if it had never started.

Asynchronous calls: a call the provider marks asynchronous (a Responses
function tool declared ``async: true``, its call ``async: true``) starts as
soon as it is complete, whatever the tool, while the model keeps streaming.
Its intent is journaled before its body runs (as any call's), and it is
never cancelled by a failed stream: it runs to its end, its outcome is
journaled, and it stands for every later attempt of the turn that brings the
same call again (a stream sent again, or a run resumed in another process),
so its effect happens once: the same call id, or, for a provider that mints
new ids, a call of the same tool with the same arguments. An attempt that
finds a call of an earlier one started without an outcome settles it as a
resumed turn does (:func:`~toolwire.agent.loop.settlement`): run again only
where that is safe, else answered as interrupted. Its result goes back to
the model the way the API says: as the call's output item in the next
request. A tool that requires approval is not started early: it waits for
its turn's batch.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace

import anyio
import anyio.abc
from typing_extensions import assert_never

from toolwire.agent._config import RunConfig
from toolwire.agent._resumed import Results
from toolwire.agent._tool_steps import ToolSteps
from toolwire.agent.loop import Deny, Interrupt, Reuse, Run, interrupted_result, settlement
from toolwire.events import Event, ToolCallReady
from toolwire.observe import Observers
from toolwire.run import canonical_arguments
from toolwire.tools import ToolResult
from toolwire.types import ToolCall

__all__ = ["EarlyCalls"]


@dataclass
class EarlyCalls:
    """What of a turn started while the model streamed: one per run driver.

    ``outcomes`` and ``started`` are the asynchronous calls of the turn's
    earlier attempts (this process's, or an earlier one's, from the
    journal): they hold for the whole turn and are cleared by
    :meth:`new_turn`."""

    config: RunConfig
    run_id: str
    observe: Observers
    tools: ToolSteps
    turn: Callable[[], int]
    outcomes: Results = field(default_factory=Results)
    started: set[str] = field(default_factory=set[str])
    asynchronous_ids: set[str] = field(default_factory=set[str])
    """The calls of the attempt streaming that started asynchronously."""
    claimed: set[str] = field(default_factory=set[str])
    """Earlier outcomes taken by a call of another id (see :meth:`_same_call`)."""

    def new_turn(self) -> None:
        """A new turn: the calls of the last one are settled."""
        self.outcomes.clear()
        self.started.clear()
        self.claimed.clear()

    @property
    def wanted(self) -> bool:
        """Whether a call may start while the model streams (eager or asynchronous)."""
        return self.config.eager or self.config.toolbox.has_asynchronous

    @asynccontextmanager
    async def group(self) -> AsyncIterator[anyio.abc.TaskGroup | None]:
        """The task group of a stream's asynchronous calls (never cancelled by
        a failed stream: it waits for them), ``None`` when no tool is."""
        if not self.config.toolbox.has_asynchronous:
            yield None
            return
        async with anyio.create_task_group() as group:
            yield group

    def hand_on(
        self,
        events: list[Event],
        eager: anyio.abc.TaskGroup | None,
        asynchronous: anyio.abc.TaskGroup | None,
        early: dict[str, ToolResult],
    ) -> None:
        """Start what a read's events make ready: eager tools in ``eager``,
        asynchronous calls in ``asynchronous`` (each ``None`` when off)."""
        for event in events:
            if not isinstance(event, ToolCallReady) or event.choice != 0:
                continue
            call = event.call
            tool = self.config.toolbox.get(call.name)
            if tool is None or call.id in early:
                continue
            if asynchronous is not None and call.asynchronous and not tool.requires_approval:
                asynchronous.start_soon(self._settle_async, call, early)
            elif eager is not None and tool.read_only:
                eager.start_soon(self._run, call, early)

    def kept(self, early: dict[str, ToolResult]) -> None:
        """A failed attempt's asynchronous results: they stand for the next one."""
        for call_id, result in early.items():
            if call_id in self.asynchronous_ids:
                self.outcomes[call_id] = (result, True)
        self.asynchronous_ids.clear()

    def _same_call(self, call: ToolCall) -> ToolResult | None:
        """The outcome of an earlier attempt's call of the same tool with the
        same arguments, under another id (a provider that mints new call ids
        for a request sent again), each outcome claimed once."""
        try:
            wanted = canonical_arguments(call.arguments)
        except (TypeError, ValueError):
            return None
        for call_id, (result, _) in list(self.outcomes.items()):
            if call_id in self.claimed or result.name != call.name:
                continue
            try:
                same = canonical_arguments(result.arguments) == wanted
            except (TypeError, ValueError):
                continue
            if same:
                self.claimed.add(call_id)
                return replace(result, call_id=call.id)
        return None

    async def _settle_async(self, call: ToolCall, early: dict[str, ToolResult]) -> None:
        self.asynchronous_ids.add(call.id)
        if call.id not in self.outcomes and call.id not in self.started:
            found = self._same_call(call)
            if found is not None:  # journaled under this call's id too
                for finished in self.observe.tool_finished:
                    await finished(self.run_id, self.turn(), call, found, eager=True)
                early[call.id] = found
                return
        decision = settlement(
            call,
            outcomes=self.outcomes,
            denied={},
            started=self.started,
            approved=(),
            tool=self.config.toolbox.get,
        )
        match decision:
            case Reuse(result=result):
                early[call.id] = result
            case Interrupt():
                result = interrupted_result(call)
                for interrupted in self.observe.tool_interrupted:
                    await interrupted(self.run_id, self.turn(), call, result)
                early[call.id] = result
            case Run() | Deny():  # nothing denies an asynchronous call before it runs
                await self._run(call, early)
            case _:
                assert_never(decision)

    async def _run(self, call: ToolCall, early: dict[str, ToolResult]) -> None:
        ran = await self.tools.execute([call], self.turn(), eager=True)
        early[call.id] = ran[call.id]
