"""The agent benchmark's conversation and its clients: toolwire, a bare-httpx floor, the peers.

Every client holds the same conversation with the emulation server (OpenAI
chat-completions format): the user asks; the model streams two parallel tool
calls in 4-character fragments; the client runs both tools and sends their
results back; the model streams an answer that quotes both results. The
answer is right only if both tools ran and their results reached the server
intact, so checking it checks the whole round trip.

* ``floor``: bare ``httpx`` (its connections in pools of 4, as toolwire's
  transport holds them) and a naive loop, no framework: read the SSE
  lines, ``json.loads`` each payload, join the argument fragments per call,
  run the tools, post the results, read the answer. What any framework is
  measured against.
* ``toolwire``, ``toolwire+journal``: one :class:`toolwire.Agent`, its
  ``run()`` (which streams and decodes every event), without and with the
  SQLite journal (a file in a temporary folder).
* ``openai-agents``: ``Runner.run_streamed`` over ``OpenAIChatCompletionsModel``,
  every streamed event consumed; tracing off (it would try to upload spans).
* ``pydantic-ai``: ``Agent.run`` with an ``event_stream_handler`` that
  consumes every streamed event, over ``OpenAIChatModel``.

The tools are ``async`` functions that return JSON text in every client, so
no client pays for a worker thread and the content sent back is the same.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["CLIENTS", "PROMPT", "VARIANTS", "Client", "Variant", "make_client", "scenario"]

PROMPT = "杭州天气怎么样?现在几点?"
MODEL = "gpt-4.1-mini"
API_KEY = "sk-bench-not-a-real-key"
PEER_TIMEOUT = 1800.0
"""The floor's and the peers' HTTP timeout: the OpenAI SDK's default gives a
connection 5 s, and the floor had 60 s between bytes, which 50 runs of 100 KB
at once on two busy cores exceed."""
POOLS = 25
"""The floor's connection pools: 100 connections in pools of 4, as toolwire's
default transport holds them."""


@dataclass(frozen=True)
class Variant:
    """One conversation shape."""

    name: str
    first_tool: str
    """``get_weather``, or ``write_file`` with ``note_bytes`` of content."""
    note_bytes: int = 0

    @property
    def expected(self) -> str:
        if self.first_tool == "get_weather":
            return "杭州:小雨, 24°C; 现在 14:05。"
        return f"wrote {self.note_bytes} characters; 现在 14:05。"


VARIANTS = {
    "small": Variant("small", "get_weather"),
    "100kb": Variant("100kb", "write_file", note_bytes=100_000),
}


def note(n: int) -> str:
    """``n`` characters of text with what JSON escapes (quotes, newlines, CJK)."""
    line = 'def f(x):\n    return "杭州" + str(x)  # 小雨\n'
    return (line * (n // len(line) + 1))[:n]


def scenario(variant: Variant) -> dict[str, Any]:
    """The emulation server's script for ``variant``."""
    if variant.first_tool == "get_weather":
        first = {"name": "get_weather", "arguments": {"city": "杭州"}}
        quote = "杭州:{result:get_weather.condition}, {result:get_weather.temperature_c}°C"
    else:
        first = {
            "name": "write_file",
            "arguments": {"path": "notes.py", "content": note(variant.note_bytes)},
        }
        quote = "wrote {result:write_file.chars} characters"
    second = {"name": "get_time", "arguments": {"timezone": "Asia/Shanghai"}}
    return {
        "name": f"bench-agent-{variant.name}",
        "turns": [
            {"tool_calls": [first, second], "chunk_size": 4},
            {"text": quote + "; 现在 {result:get_time.time}。", "chunk_size": 4},
        ],
    }


# -- the tools, the same for every client ------------------------------------------------


async def get_weather(city: str) -> str:
    """Current weather of a city.

    Args:
        city: the city's name.
    """
    return json.dumps({"city": city, "condition": "小雨", "temperature_c": 24})


async def get_time(timezone: str) -> str:
    """Current local time in a time zone.

    Args:
        timezone: an IANA time zone name.
    """
    return json.dumps({"timezone": timezone, "time": "14:05"})


async def write_file(path: str, content: str) -> str:
    """Write a text file.

    Args:
        path: where to write.
        content: the whole text.
    """
    return json.dumps({"path": path, "chars": len(content)})


TOOLS: dict[str, Callable[..., Awaitable[str]]] = {
    "get_weather": get_weather,
    "get_time": get_time,
    "write_file": write_file,
}


def _tools(variant: Variant) -> list[Callable[..., Awaitable[str]]]:
    return [TOOLS[variant.first_tool], get_time]


def _schema(name: str) -> dict[str, Any]:
    params = {
        "get_weather": {"city": {"type": "string"}},
        "get_time": {"timezone": {"type": "string"}},
        "write_file": {"path": {"type": "string"}, "content": {"type": "string"}},
    }[name]
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": (TOOLS[name].__doc__ or "").split("\n")[0],
            "parameters": {"type": "object", "properties": params, "required": list(params)},
        },
    }


# -- clients -----------------------------------------------------------------------------


@dataclass
class Client:
    """One framework, set up once, then run many times (concurrently too)."""

    run: Callable[[], Awaitable[str]]
    """One whole conversation; returns the answer text."""
    aclose: Callable[[], Awaitable[None]]


async def _floor(url: str, variant: Variant) -> Client:
    import httpx

    # Connections in pools of 4, each request to the least busy pool, as
    # toolwire's transport does: httpcore scans every connection of a pool
    # when a request starts or ends, which one pool of 50 makes the floor pay.
    tls = httpx.create_ssl_context()
    clients = [
        httpx.AsyncClient(
            base_url=url,
            headers={"authorization": f"Bearer {API_KEY}"},
            limits=httpx.Limits(max_connections=4, max_keepalive_connections=4),
            verify=tls,
            timeout=PEER_TIMEOUT,
        )
        for _ in range(POOLS)
    ]
    busy = [0] * POOLS
    tools = [_schema(tool.__name__) for tool in _tools(variant)]
    loads = json.loads

    async def turn(messages: list[dict[str, Any]]) -> tuple[str, dict[int, list[str]]]:
        pool = busy.index(min(busy))
        busy[pool] += 1
        try:
            return await read(clients[pool], messages)
        finally:
            busy[pool] -= 1

    async def read(
        client: httpx.AsyncClient, messages: list[dict[str, Any]]
    ) -> tuple[str, dict[int, list[str]]]:
        body = {"model": MODEL, "messages": messages, "tools": tools, "stream": True}
        text: list[str] = []
        calls: dict[int, list[str]] = {}
        async with client.stream("POST", "/chat/completions", json=body) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                for choice in loads(line[6:])["choices"]:
                    delta = choice["delta"]
                    if delta.get("content"):
                        text.append(delta["content"])
                    for call in delta.get("tool_calls") or ():
                        fn = call.get("function") or {}
                        parts = calls.setdefault(call["index"], ["", "", ""])
                        parts[0] = call.get("id") or parts[0]
                        parts[1] = fn.get("name") or parts[1]
                        parts[2] += fn.get("arguments") or ""
        return "".join(text), calls

    async def run() -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
        while True:
            text, calls = await turn(messages)
            if not calls:
                return text
            ordered = [calls[i] for i in sorted(calls)]
            messages.append(
                {
                    "role": "assistant",
                    "content": text or None,
                    "tool_calls": [
                        {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                        for i, n, a in ordered
                    ],
                }
            )
            for call_id, name, arguments in ordered:
                content = await TOOLS[name](**loads(arguments))
                messages.append({"role": "tool", "tool_call_id": call_id, "content": content})

    async def aclose() -> None:
        for client in clients:
            await client.aclose()

    return Client(run, aclose)


async def _toolwire(url: str, variant: Variant, *, journal: bool) -> Client:
    import toolwire
    from toolwire.providers import OpenAIChat

    folder = tempfile.mkdtemp(prefix="toolwire-bench-")
    agent = toolwire.Agent(
        OpenAIChat(base_url=url, api_key=API_KEY),
        model=MODEL,
        tools=[toolwire.tool(fn) for fn in _tools(variant)],
        journal=os.path.join(folder, "journal.sqlite3") if journal else False,
    )

    async def run() -> str:
        result = await agent.run(PROMPT)
        assert len(result.tool_calls) == 2 and all(r.result.ok for r in result.tool_calls)
        return result.output

    async def aclose() -> None:
        await agent.aclose()
        if agent.journal is not None:
            agent.journal.close()

    return Client(run, aclose)


async def _openai_agents(url: str, variant: Variant) -> Client:
    import agents
    from openai import AsyncOpenAI

    agents.set_tracing_disabled(True)
    openai_client = AsyncOpenAI(base_url=url, api_key=API_KEY, max_retries=0, timeout=PEER_TIMEOUT)
    agent = agents.Agent(
        name="bench",
        model=agents.OpenAIChatCompletionsModel(model=MODEL, openai_client=openai_client),
        tools=[agents.function_tool(fn) for fn in _tools(variant)],
    )

    async def run() -> str:
        streamed = agents.Runner.run_streamed(agent, PROMPT)
        async for _event in streamed.stream_events():
            pass
        return str(streamed.final_output)

    return Client(run, openai_client.close)


async def _pydantic_ai(url: str, variant: Variant) -> Client:
    import pydantic_ai
    from openai import AsyncOpenAI
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(
        openai_client=AsyncOpenAI(base_url=url, api_key=API_KEY, timeout=PEER_TIMEOUT)
    )
    agent = pydantic_ai.Agent(OpenAIChatModel(MODEL, provider=provider), tools=_tools(variant))

    async def handler(_ctx: Any, events: Any) -> None:
        async for _event in events:
            pass

    async def run() -> str:
        result = await agent.run(PROMPT, event_stream_handler=handler)
        return str(result.output)

    async def aclose() -> None:
        await provider.client.close()

    return Client(run, aclose)


CLIENTS: dict[str, Callable[[str, Variant], Awaitable[Client]]] = {
    "floor": _floor,
    "toolwire": lambda url, variant: _toolwire(url, variant, journal=False),
    "toolwire+journal": lambda url, variant: _toolwire(url, variant, journal=True),
    "openai-agents": _openai_agents,
    "pydantic-ai": _pydantic_ai,
}

PACKAGES = {"openai-agents": "agents", "pydantic-ai": "pydantic_ai"}
"""The peers' import names: a peer that is not installed is left out, and said so."""


async def make_client(name: str, url: str, variant: Variant) -> Client:
    """Set up client ``name`` against the server's OpenAI base URL."""
    return await CLIENTS[name](url, variant)
