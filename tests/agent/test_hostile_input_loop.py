"""One hostile response does not stall the event loop: a ticker every 100 ms
keeps ticking through an ``Agent.run`` that receives 1 MB of hostile text in
each of the shapes that used to be quadratic (an unterminated string of
escaped quotes to repair, a tool error quoting a 1 MB ``a.a.a.`` argument to
scrub, a result of shared references to cut to its budget), and a tool error
quoting a 320 KB ``eyJ-eyJ-...`` argument, whose traceback is kept redacted."""

from __future__ import annotations

import time
from itertools import pairwise
from typing import Any

import anyio
import pytest
import yaml

from tests._linear import cpu_guard
from tests.agent.test_agent_http import agent_for, close
from toolwire import tool
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

MB = 1_000_000
LAUGHS = "\n".join(
    ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)]
)


@tool(read_only=True)
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: the key.
    """
    raise KeyError(key)


@tool(read_only=True)
def document() -> Any:
    """A YAML document."""
    return yaml.safe_load(LAUGHS)


def hostile() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "hostile",
            "turns": [
                {
                    "tool_calls": [
                        {"name": "lookup", "arguments": '{"key": "' + '\\"' * (MB // 2)},
                        {"name": "lookup", "arguments": {"key": "a." * (MB // 2)}},
                        {"name": "document", "arguments": {}},
                        {"name": "lookup", "arguments": {"key": "eyJ-" * 80_000}},
                    ],
                    "chunk_size": 65536,
                },
                {"text": "done"},
            ],
        }
    )


async def test_a_ticker_keeps_ticking_through_a_run_fed_hostile_text() -> None:
    # The ticks are timed in the event loop thread's own CPU time: a step that
    # holds the loop shows as a long gap, while a loaded machine (which only
    # stretches the wall clock) does not.
    ticks: list[float] = []

    async def ticker() -> None:
        while True:
            ticks.append(time.thread_time())
            await anyio.sleep(0.1)

    with EmulationServer(hostile()) as server:
        agent = agent_for(server, "openai-chat", [lookup, document], journal=False)
        with cpu_guard(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(ticker)
                try:
                    result = await agent.run("go")
                finally:
                    await close(agent)
                ticks.append(time.thread_time())
                tg.cancel_scope.cancel()
    assert result.output == "done"
    first, second, third, fourth = (r.result for r in result.tool_calls)
    assert first.error == "invalid_arguments" and not first.ok
    assert second.error == "failed" and len(second.content) < 1000
    assert third.ok and third.truncated
    assert fourth.error == "failed" and fourth.traceback is not None
    assert len(fourth.traceback) < 10_000
    gaps = [b - a for a, b in pairwise(ticks)]
    # Linear work on 1 MB costs a few tenths of a second at most; a quadratic
    # path held the loop for tens of seconds.
    assert max(gaps) < 1.0, f"the loop was blocked for {max(gaps):.2f} CPU-s"
