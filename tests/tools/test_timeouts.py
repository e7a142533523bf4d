"""What a timeout can stop. A synchronous tool that ignores its deadline is
reported as timed out at the deadline, is not retried (its thread runs on),
and the event loop keeps serving everything else meanwhile. A CPU-bound tool
in a :class:`ProcessRunner` is killed at its deadline."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolwire import ProcessRunner, Toolbox, ToolCall, ToolResult, tool

from . import _process_tools

pytestmark = pytest.mark.anyio


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at the end of a test, so that abandoned threads finish."""
    event = threading.Event()
    yield event
    event.set()


async def execute_while_ticking(
    box: Toolbox, calls: list[ToolCall]
) -> tuple[list[ToolResult], int]:
    """Run a batch while another task counts how often the event loop served it."""
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(0.01)
            ticks += 1

    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        results = await box.execute(calls)
        tg.cancel_scope.cancel()
    return results, ticks


async def test_a_sync_tool_that_ignores_its_timeout_is_abandoned_not_retried(
    release: threading.Event,
) -> None:
    started: list[int] = []

    @tool(read_only=True, timeout=0.2)  # read-only: transient errors retried twice
    def stuck(n: int) -> str:
        """Never returns before the test ends."""
        started.append(n)
        release.wait()
        return "late"

    results, ticks = await execute_while_ticking(
        Toolbox([stuck]), [ToolCall(id="c1", name="stuck", arguments={"n": 1})]
    )
    [result] = results
    assert (result.ok, result.error, result.attempts) == (False, "timeout", 1)
    assert started == [1], "a timeout that could not stop the work is not tried again"
    assert "could not be stopped and may still finish" in result.message
    assert ticks > 0, "the event loop kept serving other tasks"


async def test_an_async_tool_is_cancelled_and_may_be_retried() -> None:
    attempts: list[int] = []

    @tool(read_only=True, timeout=0.05)
    async def slow(n: int) -> str:
        """Waits forever, cancellably."""
        attempts.append(n)
        await anyio.sleep_forever()
        return "never"

    box = Toolbox([slow], sleep=lambda _: anyio.lowlevel.checkpoint())
    [result] = await box.execute([ToolCall(id="c1", name="slow", arguments={"n": 1})])
    assert (result.error, result.attempts) == ("timeout", 3)
    assert "it was cancelled" in result.message


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_a_cpu_bound_tool_in_a_process_runner_is_killed_at_its_deadline(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "pid"
    box = Toolbox([_process_tools.burn], runner=ProcessRunner())
    call = ToolCall(id="c1", name="burn", arguments={"pid_file": str(pid_file), "exponent": 10**8})
    results, ticks = await execute_while_ticking(box, [call])
    [result] = results
    assert (result.ok, result.error, result.attempts) == (False, "timeout", 1)
    assert "it was cancelled" in result.message
    assert ticks > 0
    assert _gone(int(pid_file.read_text())), "the child was killed and reaped"


async def test_a_process_runner_keeps_the_toolbox_semantics() -> None:
    def local_only(x: int) -> int:  # a closure cannot travel to a child
        return x

    closure = tool(name="closure")(local_only)
    box = Toolbox(
        [
            _process_tools.where,
            _process_tools.async_where,
            _process_tools.picky,
            _process_tools.flaky,
            closure,
        ],
        runner=ProcessRunner(),
        sleep=lambda _: anyio.lowlevel.checkpoint(),
    )
    results = await box.execute(
        [
            ToolCall(id="a", name="where", arguments={}),
            ToolCall(id="b", name="async_where", arguments={}),
            ToolCall(id="c", name="picky", arguments={"n": -1}),
            ToolCall(id="d", name="flaky", arguments={}),
            ToolCall(id="e", name="closure", arguments={"x": 1}),
        ],
        run_id="run-1",
        metadata={"user": "u1"},
    )
    by_id: dict[str, Any] = {r.call_id: r for r in results}
    payload = by_id["a"].content
    assert by_id["a"].ok and '"metadata":{"user":"u1"}' in payload
    assert f'"pid":{os.getpid()}' not in payload, "it ran in another process"
    assert by_id["b"].ok and int(by_id["b"].content) != os.getpid()
    assert (by_id["c"].error, by_id["c"].model_retry) == ("invalid_arguments", True)
    assert "n must be positive" in by_id["c"].content
    assert (by_id["d"].error, by_id["d"].attempts) == ("failed", 2)  # retried once, as local
    assert "ConnectionError" in by_id["d"].content
    assert (
        by_id["e"].error == "failed" and "cannot be sent to a child process" in by_id["e"].message
    )


def _dead(pid: int) -> bool:
    """Gone, or a zombie waiting for its new parent to reap it."""
    if _gone(pid):
        return True
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


async def test_a_process_runner_kills_the_grandchildren_at_the_deadline(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    box = Toolbox([_process_tools.spawn], runner=ProcessRunner())
    [result] = await box.execute(
        [ToolCall(id="c1", name="spawn", arguments={"pid_file": str(pid_file)})]
    )
    assert result.error == "timeout"
    grandchild = int(pid_file.read_text())
    for _ in range(500):  # a guard of 10 s: the kill is at once
        if _dead(grandchild):
            break
        await anyio.sleep(0.02)
    assert _dead(grandchild), "the grandchild outlived the deadline"


async def test_an_outcome_too_large_is_a_clear_error() -> None:
    box = Toolbox([_process_tools.huge], runner=ProcessRunner(max_output_bytes=1000))
    [result] = await box.execute([ToolCall(id="c1", name="huge", arguments={})])
    assert result.error == "failed"
    assert "larger than 1000 bytes" in result.message
    assert "ExceptionGroup" not in result.message and "TaskGroup" not in result.message
