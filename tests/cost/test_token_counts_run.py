"""A run against a provider whose usage counts are not counts.

The review's case: every answer calls a tool and reports
``completion_tokens: -100000``. Taken as it came, the negative count kept
the run's output total below its 100-token budget, and the run went on for
all its turns. Decoded through the real emulation server now, the first
answer fails with ``TokenCountInvalid``: nothing of it runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolwire import TokenCountInvalid
from toolwire.cost import UsageLimits
from toolwire.testing import EmulationServer, Scenario

from .test_limits import Tools, agent_for, stream_until_error

pytestmark = pytest.mark.anyio


def hostile_body(completion_tokens: int) -> bytes:
    """An OpenAI stream that calls ``lookup`` and reports ``completion_tokens``."""
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4.1-mini"}
    call = {"index": 0, "id": "call_1", "type": "function"}
    call["function"] = {"name": "lookup", "arguments": '{"key": "a"}'}
    chunks = [
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {
            **head,
            "choices": [],
            "usage": {
                "prompt_tokens": 20,
                "completion_tokens": completion_tokens,
                "total_tokens": 20 + completion_tokens,
            },
        },
    ]
    frames = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
    return "".join(frames).encode()


async def test_a_negative_output_count_fails_the_turn_and_nothing_runs(tmp_path: Path) -> None:
    body = tmp_path / "hostile.sse"
    body.write_bytes(hostile_body(-100_000))
    tools = Tools()
    with EmulationServer(Scenario.replay_file(body)) as server:
        agent = agent_for(
            server,
            "openai-chat",
            tools,
            max_turns=22,
            stream_retries=1,
            limits=UsageLimits(output_tokens=100),
        )
        _, error = await stream_until_error(agent)
        requests = len(server.requests)
    assert isinstance(error, TokenCountInvalid), error
    assert error.field == "completion_tokens" and error.value == -100_000
    assert tools.ran == [], "no call of a stream with a broken usage runs"
    assert requests == 2, "the turn was asked again once (stream_retries=1), then the run failed"


async def test_a_true_output_count_still_stops_the_run_at_its_budget(tmp_path: Path) -> None:
    # The same stream with an honest count: the budget holds after one turn.
    body = tmp_path / "honest.sse"
    body.write_bytes(hostile_body(60))
    tools = Tools()
    with EmulationServer(Scenario.replay_file(body)) as server:
        agent = agent_for(
            server, "openai-chat", tools, max_turns=22, limits=UsageLimits(output_tokens=100)
        )
        _, error = await stream_until_error(agent)
    assert type(error).__name__ == "UsageLimitExceeded", error
    assert len(tools.ran) <= 2
