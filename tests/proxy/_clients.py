"""Conversations run by the official SDKs: two turns, calls then answer."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
from openai.lib.streaming.chat import ChatCompletionStreamState

from ._support import QUESTION, RESULTS

KEY = "sk-proxy-test-0123456789abcdef"
TOOL_NAMES = ("get_weather", "get_current_time")


def _result(name: str) -> str:
    return json.dumps(RESULTS[name], ensure_ascii=False)


def openai_chat(base_url: str, stream: bool) -> list[Any]:
    """Two turns of chat completions: the calls, then the answer."""
    tools = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in TOOL_NAMES]
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    turns: list[Any] = []
    with openai.OpenAI(base_url=base_url, api_key=KEY, max_retries=0) as client:
        for _ in range(2):
            if stream:
                state = ChatCompletionStreamState()
                chunks = client.chat.completions.create(
                    model="gpt-4o",
                    messages=messages,
                    tools=tools,
                    stream=True,  # type: ignore[arg-type]
                )
                for chunk in chunks:
                    state.handle_chunk(chunk)
                completion = state.get_final_completion()
            else:
                completion = client.chat.completions.create(
                    model="gpt-4o",
                    messages=messages,
                    tools=tools,  # type: ignore[arg-type]
                )
            turns.append(completion.model_dump())
            message = completion.choices[0].message
            messages.append(message.model_dump(exclude_none=True, exclude={"parsed"}))
            for call in message.tool_calls or []:
                name = call.function.name  # type: ignore[union-attr]
                messages.append({"role": "tool", "tool_call_id": call.id, "content": _result(name)})
    return turns


def openai_responses(base_url: str, stream: bool) -> list[Any]:
    """Two turns of the Responses API."""
    history: list[Any] = [{"role": "user", "content": QUESTION}]
    turns: list[Any] = []
    with openai.OpenAI(base_url=base_url, api_key=KEY, max_retries=0) as client:
        for _ in range(2):
            if stream:
                with client.responses.stream(model="gpt-5", input=history) as events:
                    response = events.get_final_response()
            else:
                response = client.responses.create(model="gpt-5", input=history)
            turns.append(response.model_dump())
            calls = [item for item in response.output if item.type == "function_call"]
            history += [
                {
                    "type": "function_call",
                    "call_id": c.call_id,
                    "name": c.name,
                    "arguments": c.arguments,
                }
                for c in calls
            ]
            history += [
                {"type": "function_call_output", "call_id": c.call_id, "output": _result(c.name)}
                for c in calls
            ]
    return turns


def anthropic_messages(base_url: str, stream: bool) -> list[Any]:
    """Two turns of the Messages API."""
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    turns: list[Any] = []
    with anthropic.Anthropic(base_url=base_url, api_key=KEY, max_retries=0) as client:
        for _ in range(2):
            if stream:
                with client.messages.stream(
                    model="claude-sonnet-4", max_tokens=512, messages=messages
                ) as events:
                    message = events.get_final_message()
            else:
                message = client.messages.create(
                    model="claude-sonnet-4", max_tokens=512, messages=messages
                )
            turns.append(message.model_dump())
            uses = [b for b in message.content if b.type == "tool_use"]
            if not uses:
                break
            messages.append({"role": "assistant", "content": [b.model_dump() for b in uses]})
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": b.id, "content": _result(b.name)}
                        for b in uses
                    ],
                }
            )
    return turns
