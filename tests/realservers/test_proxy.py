"""``toolwire proxy`` in front of the real llama.cpp servers.

The Agent's run through the proxy equals its run straight to the server (the
servers sample with a fixed seed at temperature 0); what a client receives
through the proxy is, byte for byte, what the cassette holds; and the same run
against the replay of that cassette gives the same result, ids included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.realservers.cache import Tokens
from tests.realservers.servers import Server
from tests.realservers.test_llamacpp import QUESTION, Run, Steering, run_agent, tool_call_bias
from toolwire.providers import OpenAIChat
from toolwire.testing import Cassette, CassetteServer, RecordingProxy

pytestmark = pytest.mark.anyio


def _setup(name: str, tokens: Tokens) -> tuple[dict[str, Any], Any]:
    """How each server is asked: its steering and the agent's options."""
    if name == "llama-cpp-python":
        return {"calls": {}, "answer": {tokens.message: 100}}, {
            "tool_choice": {"name": "get_weather"},
            "max_tokens": 64,
        }
    return {"calls": tool_call_bias(tokens), "answer": {tokens.tool_call: -100}}, {
        "tool_choice": "required",
        "max_tokens": 200,
    }


async def _run(base_url: str, name: str, tokens: Tokens) -> tuple[Run, Steering]:
    bias, options = _setup(name, tokens)
    steering = Steering(**bias)
    provider = OpenAIChat(base_url=base_url, api_key="sk-local-proxy-test")
    return await run_agent(provider, steering, **options), steering


def _seen(run: Run) -> dict[str, Any]:
    """What the run made of the model's answers (the servers mint random call ids)."""
    return {
        "calls": [(r.call.name, r.call.arguments) for r in run.result.tool_calls],
        "results": [r.result.content for r in run.result.tool_calls],
        "text": run.text,
        "finish": run.finish,
        "output": run.result.output,
        "executed": sorted(run.executed, key=repr),  # parallel tools finish in any order
    }


@pytest.mark.parametrize("name", ["llama-cpp-python", "llama-server"])
async def test_agent_through_the_proxy_and_from_the_replay(
    name: str, request: pytest.FixtureRequest, tokens: Tokens, tmp_path: Path
) -> None:
    server: Server = request.getfixturevalue(name.replace("-", "_"))
    straight, _ = await _run(server.base_url, name, tokens)
    cassette = tmp_path / "cassette"
    async with RecordingProxy(server.base_url, record=cassette) as proxy:
        proxied, steering = await _run(proxy.base_url, name, tokens)
    assert _seen(proxied) == _seen(straight)
    assert proxied.result.turns == 2 and proxied.result.tool_calls

    recorded = Cassette.load(cassette)
    assert len(recorded) == 2
    assert all(e.api == "openai-chat" and e.response.complete for e in recorded)
    assert [e.request.json() for e in recorded] == steering.bodies

    async with CassetteServer(cassette) as replay:
        replayed, _ = await _run(replay.base_url, name, tokens)
        assert replay.mismatches == []
    ids = [r.call for r in replayed.result.tool_calls]
    assert ids == [r.call for r in proxied.result.tool_calls]  # the server's ids included
    assert _seen(replayed) == _seen(proxied)


async def test_a_client_receives_through_the_proxy_the_bytes_recorded(
    llama_server: Server, tokens: Tokens, tmp_path: Path
) -> None:
    bias = {str(token): value for token, value in tool_call_bias(tokens).items()}
    body = {
        "model": "tiny",
        "stream": True,
        "max_tokens": 120,
        "temperature": 0,
        "logit_bias": bias,
        "messages": [{"role": "user", "content": QUESTION}],
    }
    async with RecordingProxy(llama_server.base_url, record=tmp_path) as proxy:
        async with httpx.AsyncClient(timeout=90) as client:
            async with client.stream("POST", proxy.base_url + "/chat/completions", json=body) as r:
                received = [chunk async for chunk in r.aiter_raw()]
    (exchange,) = Cassette.load(tmp_path)
    assert b"".join(received) == exchange.response.body()
    assert len(exchange.response.chunks) > 10  # streamed, token by token
    assert exchange.response.body().rstrip().endswith(b"data: [DONE]")
