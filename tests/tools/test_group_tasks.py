"""How the calls of a batch are scheduled: the first in the calling task,
each other in a task of its own, all of them at once."""

from __future__ import annotations

import contextvars
from typing import Any

import anyio
import pytest

from toolwire import Toolbox, ToolCall, tool

pytestmark = pytest.mark.anyio

WHO = contextvars.ContextVar("WHO", default="caller")


def call(name: str, call_id: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments)


async def test_the_first_call_runs_in_the_calling_task_the_others_in_their_own() -> None:
    tasks: list[int] = []

    @tool(dedupe=False)
    async def at_once(n: int) -> int:
        """Answers without waiting."""
        tasks.append(anyio.get_current_task().id)
        return n

    results = await Toolbox([at_once]).execute([call("at_once", f"c{n}", n=n) for n in range(3)])
    assert [r.content for r in results] == ["0", "1", "2"]
    here = anyio.get_current_task().id
    assert tasks[0] == here
    assert here not in tasks[1:] and tasks[1] != tasks[2]


async def test_the_calls_run_alongside_each_other() -> None:
    # The second call waits for the third: run one after the other, it would
    # wait alone and time out.
    third_ran = anyio.Event()
    tasks: dict[str, int] = {}

    @tool(dedupe=False)
    async def step(who: str) -> str:
        """Waits for the third call when told to."""
        tasks[who] = anyio.get_current_task().id
        if who == "second":
            with anyio.fail_after(5):
                await third_ran.wait()
        if who == "third":
            third_ran.set()
        return who

    calls = [call("step", who, who=who) for who in ("first", "second", "third")]
    results = await Toolbox([step]).execute(calls)
    assert [r.content for r in results] == ["first", "second", "third"]
    here = anyio.get_current_task().id
    assert tasks["first"] == here
    assert here not in (tasks["second"], tasks["third"])


async def test_a_call_that_waits_in_the_calling_task_still_times_out() -> None:
    # The timeout's cancellation reaches the call where it waits.
    @tool(timeout=0.05)
    async def forever() -> str:
        """Never answers."""
        await anyio.sleep_forever()
        return "never"

    @tool
    async def at_once() -> str:
        """Answers without waiting."""
        return "now"

    results = await Toolbox([at_once, forever]).execute(
        [call("at_once", "a"), call("forever", "b")]
    )
    assert results[0].content == "now"
    assert (results[1].ok, results[1].error) == (False, "timeout")


async def test_a_batch_cancelled_from_outside_cancels_the_waiting_call() -> None:
    cancelled: list[str] = []

    @tool(dedupe=False)
    async def waits(who: str) -> str:
        """Waits until cancelled."""
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(who)
            raise
        return who

    with anyio.move_on_after(0.05) as scope:
        await Toolbox([waits]).execute([call("waits", "a", who="a"), call("waits", "b", who="b")])
    assert scope.cancelled_caught
    assert sorted(cancelled) == ["a", "b"]


async def test_each_call_after_the_first_has_a_context_of_its_own() -> None:
    seen: dict[str, str] = {}

    @tool(dedupe=False)
    async def sets(who: str) -> str:
        """Reads, then sets, a context variable."""
        seen[who] = WHO.get()
        WHO.set(who)
        return who

    calls = [call("sets", who, who=who) for who in ("first", "second", "third")]
    try:
        await Toolbox([sets]).execute(calls)
    finally:
        WHO.set("caller")  # the first call ran in this context
    # As when the others ran in tasks started before the first ran: none
    # sees what another set.
    assert seen == {"first": "caller", "second": "caller", "third": "caller"}
