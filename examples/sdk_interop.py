"""Keep the official SDK, get toolwire's streaming tool calls.

An agent loop written with the ``openai`` and ``anthropic`` SDKs as usual;
``toolwire.adapters`` turns each SDK stream into toolwire events (text, tool
calls growing with their partial arguments, complete calls), and a
``toolwire.Toolbox`` runs the calls with validation and timeouts. Everything
talks to toolwire's emulation server on loopback, so no key is needed::

    python examples/sdk_interop.py
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import anthropic
import openai

import toolwire
import toolwire.adapters
from toolwire.examples import sample_toolbox
from toolwire.testing import EmulationServer, Scenario

QUESTION = "杭州天气怎么样?现在几点?"
TOOLBOX = sample_toolbox()


def show(event: toolwire.Event) -> None:
    """Print the answer as it streams, and each call as its arguments grow."""
    if isinstance(event, toolwire.TextDelta):
        print(event.text, end="", flush=True)
    elif isinstance(event, toolwire.ToolCallStarted):
        print(f"  -> {event.name} ", end="", flush=True)
    elif isinstance(event, toolwire.ToolCallDelta):
        print(".", end="", flush=True)  # event.partial holds the arguments so far
    elif isinstance(event, toolwire.ToolCallReady):
        print(f" {json.dumps(event.call.arguments, ensure_ascii=False)}")
    elif isinstance(event, toolwire.StreamFailed):
        print(f"\n  stream failed: {event.error}")


async def openai_chat_loop(base_url: str) -> str:
    """Chat completions with the async OpenAI client, until the model answers."""
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    async with openai.AsyncOpenAI(base_url=base_url, api_key="not-needed") as client:
        while True:
            stream = await client.chat.completions.create(
                model="gpt-4.1",
                messages=messages,
                tools=TOOLBOX.schemas("openai-chat"),
                stream=True,
            )
            events = toolwire.adapters.aopenai_chat(stream)
            async for event in events:
                show(event)
            result = events.result()
            result.raise_for_error()
            if not result.tool_calls:
                print()
                return result.text
            messages.append(
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": c.raw_arguments},
                        }
                        for c in result.tool_calls
                    ],
                }
            )
            for r in await TOOLBOX.execute(result.tool_calls):
                messages.append({"role": "tool", "tool_call_id": r.call_id, "content": r.content})


def anthropic_loop(base_url: str) -> str:
    """Anthropic Messages with the sync client and its ``messages.stream()`` helper."""
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    with anthropic.Anthropic(base_url=base_url, api_key="not-needed") as client:
        while True:
            with client.messages.stream(
                model="claude-sonnet-4",
                max_tokens=1024,
                messages=messages,
                tools=TOOLBOX.schemas("anthropic-messages"),
            ) as stream:
                events = toolwire.adapters.anthropic_messages(stream)
                for event in events:
                    show(event)
            result = events.result()
            result.raise_for_error()
            if not result.tool_calls:
                print()
                return result.text
            messages.append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                        for c in result.tool_calls
                    ],
                }
            )
            results = asyncio.run(TOOLBOX.execute(result.tool_calls))
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": r.call_id,
                            "content": r.content,
                            "is_error": not r.ok,
                        }
                        for r in results
                    ],
                }
            )


def main() -> dict[str, str]:
    """Run both loops against a local emulation server; return their answers."""
    with EmulationServer(Scenario.builtin("weather").with_delay(0)) as server:
        print(f"openai (chat completions) via {server.url_for('openai-chat')}")
        chat = asyncio.run(openai_chat_loop(server.url_for("openai-chat")))
        print(f"\nanthropic (messages.stream) via {server.url_for('anthropic-messages')}")
        messages = anthropic_loop(server.url_for("anthropic-messages"))
    return {"openai-chat": chat, "anthropic-messages": messages}


if __name__ == "__main__":
    main()
