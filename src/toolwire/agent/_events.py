"""A run's events, handed from the task that runs it to the caller that reads them."""

from __future__ import annotations

import math
from collections.abc import AsyncGenerator, Awaitable, Callable

import anyio

from toolwire.events import Event
from toolwire.run import AgentEvent

__all__ = ["Runner", "run_events"]

Runner = Callable[[Callable[[AgentEvent], None], Callable[[list[Event]], None]], Awaitable[None]]
"""Runs a run, given where to emit its events one at a time and a read's at once."""


async def run_events(runner: Runner) -> AsyncGenerator[AgentEvent, None]:
    """The events ``runner`` emits, as it emits them: it runs in a task of
    its own, and what it raises is raised here after its last event. Closing
    this early cancels the run (and every tool it started).

    The events of one network read travel as one list: one hop between the
    tasks per read, not per event."""
    send, receive = anyio.create_memory_object_stream[AgentEvent | list[Event]](math.inf)
    failure: list[BaseException] = []

    async def produce() -> None:
        async with send:
            try:
                await runner(send.send_nowait, send.send_nowait)
            except Exception as exc:  # handed to the consumer below
                failure.append(exc)

    closed = False
    async with anyio.create_task_group() as tg:
        tg.start_soon(produce)
        async with receive:
            try:
                async for item in receive:
                    if type(item) is list:
                        for event in item:
                            yield event
                    else:
                        yield item  # type: ignore[misc]
            except GeneratorExit:
                # The caller closed us early: cancel the run here, and
                # end normally, so that the task group does not report
                # the GeneratorExit as one of its errors.
                closed = True
                tg.cancel_scope.cancel()
    if failure and not closed:
        raise failure[0]
