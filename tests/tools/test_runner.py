"""The runner seam: where a tool function runs is the runner's business, the
rest stays the toolbox's (validation, retries, fallbacks, timeouts)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from toolwire import (
    LocalRunner,
    Toolbox,
    ToolCall,
    ToolContext,
    ToolInvocation,
    ToolRunner,
    UsageError,
    tool,
)
from toolwire.tools import is_transient

pytestmark = pytest.mark.anyio


class Recording:
    """A runner that records each invocation and delegates to LocalRunner."""

    def __init__(self) -> None:
        self.invocations: list[ToolInvocation] = []
        self.cancelled: list[str] = []
        self.local = LocalRunner()

    async def run(self, invocation: ToolInvocation) -> Any:
        self.invocations.append(invocation)
        try:
            return await self.local.run(invocation)
        except anyio.get_cancelled_exc_class():
            self.cancelled.append(invocation.tool.name)
            raise


async def no_sleep(seconds: float) -> None:
    return None


def test_default_runner_is_local() -> None:
    box = Toolbox()
    assert isinstance(box.runner, LocalRunner)
    assert isinstance(box.runner, ToolRunner)


def test_a_runner_needs_an_async_run_method() -> None:
    with pytest.raises(UsageError, match="runner must have"):
        Toolbox(runner=object())  # type: ignore[arg-type]


async def test_runner_gets_validated_arguments_and_context() -> None:
    @tool
    def scale(value: int, factor: float = 2.0, *, ctx: ToolContext) -> float:
        """Multiply.

        Args:
            value: the number.
            factor: by how much.
        """
        return value * factor

    runner = Recording()
    box = Toolbox([scale], runner=runner)
    (result,) = await box.execute(
        [ToolCall(id="c1", name="scale", arguments={"value": 3})],
        run_id="run-1",
        metadata={"user": "u1"},
    )
    assert result.ok and result.content == "6.0"
    (inv,) = runner.invocations
    assert inv.tool is scale and inv.function is scale.function and not inv.fallback
    assert inv.kwargs["value"] == 3  # validated and coerced before the runner sees it
    assert inv.kwargs["ctx"] is inv.context
    assert inv.context.run_id == "run-1" and inv.context.metadata["user"] == "u1"
    assert not inv.is_async


async def test_retries_and_fallback_go_through_the_runner() -> None:
    seen: list[int] = []

    def cached(city: str) -> str:
        return f"cached {city}"

    @tool(read_only=True, retries=2, fallback=cached)
    async def forecast(city: str, ctx: ToolContext) -> str:
        """Forecast.

        Args:
            city: where.
        """
        seen.append(ctx.attempt)
        raise ConnectionError("upstream down")

    runner = Recording()
    box = Toolbox([forecast], runner=runner, sleep=no_sleep)
    (result,) = await box.execute([ToolCall(id="c1", name="forecast", arguments={"city": "x"})])
    assert result.ok and result.content == "cached x" and result.fallback_used
    assert result.attempts == 3 and seen == [1, 2, 3]
    assert [i.fallback for i in runner.invocations] == [False, False, False, True]
    assert [i.context.attempt for i in runner.invocations] == [1, 2, 3, 4]
    keys = {i.context.idempotency_key for i in runner.invocations}
    assert len(keys) == 1  # one key for every attempt of a call


async def test_timeout_cancels_the_runner() -> None:
    @tool(timeout=0.2)
    async def stall() -> str:
        """Never finishes."""
        await anyio.sleep(30)
        return "late"

    runner = Recording()
    box = Toolbox([stall], runner=runner)
    (result,) = await box.execute([ToolCall(id="c1", name="stall", arguments={})])
    assert not result.ok and result.error == "timeout"
    assert runner.cancelled == ["stall"]


async def test_invalid_arguments_never_reach_the_runner() -> None:
    @tool
    def double(value: int) -> int:
        """Double.

        Args:
            value: the number.
        """
        return 2 * value

    runner = Recording()
    box = Toolbox([double], runner=runner)
    results = await box.execute(
        [
            ToolCall(id="c1", name="double", arguments={"value": "many"}),
            ToolCall(id="c2", name="nope", arguments={}),
        ]
    )
    assert [r.error for r in results] == ["invalid_arguments", "unknown_tool"]
    assert runner.invocations == []


class Flagged(Exception):
    def __init__(self, message: str, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


def test_an_error_can_declare_itself_transient() -> None:
    assert is_transient(Flagged("lost worker", True))
    assert not is_transient(Flagged("cannot pickle", False))
    # Without the flag, the usual rules apply.
    assert is_transient(ConnectionError()) and not is_transient(ValueError())
