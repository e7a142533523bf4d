"""toolwire's Agent against two real llama.cpp servers, end to end over HTTP.

The model has random weights, so it has no will of its own: the servers'
grammars and ``logit_bias`` give it one (see :class:`Steering`), and the
tests check what must hold whatever it writes: every call is complete, parses
and matches its tool's schema (bounded by enums, so the output stays short);
every complete call runs exactly once and an incomplete one never; the second
request sends the calls back with their ids, each result under its call's id;
and the second turn is answered.

- llama-cpp-python's server (``--chat_format chatml-function-calling``): a
  named ``tool_choice`` constrains the arguments with a grammar built from the
  schema. It makes one call per streamed turn (``"auto"`` can choose calls only
  unstreamed), and repeats each piece as a legacy ``function_call``.
- llama.cpp's ``llama-server --jinja``: the model's own Qwen2.5 template
  renders the tools and ``<tool_call>`` blocks are parsed into parallel calls.
  A named ``tool_choice`` is read as ``"auto"``, and ``"required"`` still lets
  text come first, hence the bias towards ``<tool_call>``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal

import jsonschema
import pytest

import toolwire
from tests.realservers.cache import Tokens
from tests.realservers.servers import Server
from toolwire import ChoiceFinished, ToolCall, ToolCallInvalid, ToolCallReady
from toolwire.http import ErrorParser, HttpRequest, HttpResponse, StreamResponse
from toolwire.http.transport import HttpxTransport, Timeouts
from toolwire.providers import OpenAIChat, ToolChoice

pytestmark = pytest.mark.anyio

QUESTION = "杭州天气怎么样?现在几点?"
City = Literal["杭州", "Paris", "New York"]
Executed = list[tuple[str, dict[str, Any]]]


def make_tools(executed: Executed) -> list[toolwire.Tool]:
    @toolwire.tool(read_only=True)
    def get_weather(city: City, unit: Literal["celsius", "fahrenheit"]) -> dict[str, Any]:
        """Current weather of a city.

        Args:
            city: the city.
            unit: the temperature unit.
        """
        executed.append(("get_weather", {"city": city, "unit": unit}))
        return {"city": city, "condition": "light rain", "temperature": 24, "unit": unit}

    @toolwire.tool(read_only=True)
    def get_time(city: City) -> dict[str, Any]:
        """Current local time in a city.

        Args:
            city: the city.
        """
        executed.append(("get_time", {"city": city}))
        return {"city": city, "time": "16:05"}

    return [get_weather, get_time]


class Steering:
    """The transport under test, with the model's will added to each request.

    Random weights never choose to call a tool or to stop: this sets
    ``logit_bias`` per request, ``calls`` while the conversation ends with the
    user's question and ``answer`` once it ends with tool results. Nothing else
    in the request changes; every body sent is kept for the assertions.
    """

    def __init__(self, *, calls: Mapping[int, int], answer: Mapping[int, int]) -> None:
        self.inner = HttpxTransport(timeouts=Timeouts(total=90.0))
        self.calls = {str(token): bias for token, bias in calls.items()}
        self.answer = {str(token): bias for token, bias in answer.items()}
        self.bodies: list[dict[str, Any]] = []

    def steer(self, request: HttpRequest) -> HttpRequest:
        body = dict(request.json)
        answering = body["messages"][-1]["role"] == "tool"
        bias = self.answer if answering else self.calls
        if bias:
            body["logit_bias"] = bias
        self.bodies.append(body)
        return dataclasses.replace(request, json=body)

    async def send(
        self, request: HttpRequest, *, parse_error: ErrorParser | None = None
    ) -> HttpResponse:
        return await self.inner.send(self.steer(request), parse_error=parse_error)

    def stream(
        self, request: HttpRequest, *, parse_error: ErrorParser | None = None
    ) -> AbstractAsyncContextManager[StreamResponse]:
        return self.inner.stream(self.steer(request), parse_error=parse_error)

    async def aclose(self) -> None:
        await self.inner.aclose()


def tool_call_bias(tokens: Tokens) -> dict[int, int]:
    """llama-server's calls: ``<tool_call>`` and "\\n" up, whitespace-only tokens
    down (or the JSON fills with blanks), and nothing that favours ending: the
    model writes calls until ``max_tokens``."""
    bias = dict.fromkeys(tokens.whitespace, -100)
    return bias | {tokens.tool_call: 100, tokens.newline: 100}


@dataclasses.dataclass
class Run:
    """What an Agent run produced, turn by turn, and the tools it ran."""

    result: toolwire.RunResult
    text: dict[int, str]
    finish: dict[int, str | None]
    executed: Executed


async def run_agent(
    provider: OpenAIChat, steering: Steering, *, tool_choice: ToolChoice, max_tokens: int
) -> Run:
    """Two turns at most on :data:`QUESTION`; the Agent and its transport are closed."""
    executed: Executed = []
    agent = toolwire.Agent(
        provider,
        model="tiny",
        tools=make_tools(executed),
        tool_choice=tool_choice,
        max_turns=2,
        max_tokens=max_tokens,
        temperature=0,
        transport=steering,
        journal=False,
    )
    text: dict[int, str] = {}
    finish: dict[int, str | None] = {}
    turn, result = 0, None
    try:
        async for event in agent.stream(QUESTION):
            if isinstance(event, toolwire.TurnStarted):
                turn = event.turn
            elif isinstance(event, toolwire.TextDelta):
                text[turn] = text.get(turn, "") + event.text
            elif isinstance(event, toolwire.TurnFinished):
                finish[event.turn] = event.finish_reason
            elif isinstance(event, toolwire.RunFinished):
                result = event.result
    finally:
        await agent.aclose()
        await steering.aclose()
    assert result is not None
    return Run(result, text, finish, executed)


def assert_round_trip(run: Run, steering: Steering) -> list[ToolCall]:
    """Every turn-1 call went back with its id and result; the second turn answered.

    Returns the complete calls of the first turn."""
    result = run.result
    assert result.outcome == "answered", result.to_dict()
    assert result.turns == 2 and len(steering.bodies) == 2
    records = result.tool_calls
    assert records and all(record.turn == 1 for record in records)
    calls = [record.call for record in records]
    complete = [call for call in calls if isinstance(call, ToolCall)]
    ids = [call.id for call in calls]
    assert all(ids) and len(set(ids)) == len(ids), ids

    schemas = {
        t["function"]["name"]: t["function"]["parameters"] for t in steering.bodies[0]["tools"]
    }
    for call in complete:
        jsonschema.validate(call.arguments, schemas[call.name])
    # Each complete call ran once (in parallel: in any order), the others never.
    ran = sorted(json.dumps(item, sort_keys=True) for item in run.executed)
    assert ran == sorted(json.dumps((c.name, c.arguments), sort_keys=True) for c in complete)
    for record in records:
        assert record.result.ok == isinstance(record.call, ToolCall), record.result

    sent = steering.bodies[1]["messages"]
    assistant, results = sent[1], sent[2:]
    assert sent[0] == {"role": "user", "content": QUESTION}
    assert assistant["role"] == "assistant" and assistant["content"] == ""
    assert [c["id"] for c in assistant["tool_calls"]] == ids
    back = {c["id"]: json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"]}
    assert [back[call.id] for call in complete] == [call.arguments for call in complete]
    assert [(m["role"], m["tool_call_id"]) for m in results] == [("tool", i) for i in ids]
    assert [m["content"] for m in results] == [record.result.content for record in records]

    assert run.finish[2] in ("stop", "length")
    assert result.output == run.text.get(2, "")
    return complete


async def test_llama_cpp_python_calls_a_tool_then_answers(
    llama_cpp_python: Server, tokens: Tokens
) -> None:
    # A named choice: the server constrains the arguments with the schema's
    # grammar. The answer turn gets "auto", which streams only when the model
    # picks "message:" over "functions.<name>:".
    steering = Steering(calls={}, answer={tokens.message: 100})
    provider = OpenAIChat(base_url=llama_cpp_python.base_url, api_key="sk-local")
    run = await run_agent(provider, steering, tool_choice={"name": "get_weather"}, max_tokens=64)
    complete = assert_round_trip(run, steering)
    # Each piece comes twice (tool_calls and the legacy function_call): one call.
    assert [call.name for call in complete] == ["get_weather"]
    assert len(run.result.tool_calls) == 1
    assert run.finish[1] == "tool_calls"


async def test_llama_server_runs_parallel_calls_then_answers(
    llama_server: Server, tokens: Tokens
) -> None:
    steering = Steering(calls=tool_call_bias(tokens), answer={tokens.tool_call: -100})
    provider = OpenAIChat(
        base_url=llama_server.base_url, api_key="sk-local", openai_parallel_tool_calls=True
    )
    run = await run_agent(provider, steering, tool_choice="required", max_tokens=200)
    complete = assert_round_trip(run, steering)
    assert len(complete) >= 2, run.result.to_dict()
    assert run.result.output  # 200 tokens of noise: the answer is never empty
    usage = run.result.usage  # stream_options.include_usage is honoured here
    assert usage.input_tokens and usage.output_tokens


def summary_of_stream(events: list[toolwire.Event]) -> dict[str, Any]:
    started = {e.index: e.name for e in events if isinstance(e, toolwire.ToolCallStarted)}
    ended = {e.call.index for e in events if isinstance(e, (ToolCallReady, ToolCallInvalid))}
    return {
        "calls": [(e.call.name, e.call.arguments) for e in events if isinstance(e, ToolCallReady)],
        "invalid": [e.call.name for e in events if isinstance(e, ToolCallInvalid)],
        "incomplete": [name for index, name in started.items() if index not in ended],
        "text": "".join(e.text for e in events if isinstance(e, toolwire.TextDelta)),
        "finish": [e.reason for e in events if isinstance(e, ChoiceFinished)],
    }


def summary_of_whole(result: toolwire.StreamResult) -> dict[str, Any]:
    choice = result.choices[0]
    return {
        "calls": [(call.name, call.arguments) for call in choice.tool_calls],
        "invalid": [call.name for call in choice.invalid_tool_calls],
        "incomplete": [call.name for call in choice.incomplete_tool_calls],
        "text": choice.text,
        "finish": [choice.finish_reason],
    }


async def streamed_and_whole(provider: OpenAIChat, **options: Any) -> list[dict[str, Any]]:
    """The same request twice, streamed then whole (the servers sample with a fixed seed)."""
    question = [toolwire.UserMessage(QUESTION)]
    tools = toolwire.Toolbox(make_tools([])).schemas("openai-chat")
    streamed = provider.build_request(messages=question, tools=tools, stream=True, **options)
    whole = provider.build_request(messages=question, tools=tools, stream=False, **options)
    async with HttpxTransport(timeouts=Timeouts(total=90.0)) as transport:
        events = [event async for event in provider.stream(streamed, transport=transport)]
        result = await provider.complete(whole, transport=transport)
    return [summary_of_stream(events), summary_of_whole(result)]


async def test_llama_cpp_python_streamed_and_whole_agree(llama_cpp_python: Server) -> None:
    provider = OpenAIChat(base_url=llama_cpp_python.base_url, api_key="sk-local")
    streamed, whole = await streamed_and_whole(
        provider, model="tiny", tool_choice={"name": "get_weather"}, max_tokens=64, temperature=0
    )
    assert streamed == whole
    assert [name for name, _ in streamed["calls"]] == ["get_weather"]


async def test_llama_server_streamed_and_whole_agree(llama_server: Server, tokens: Tokens) -> None:
    # max_tokens cuts the last call short: an incomplete call both ways,
    # never one whose arguments were completed by guesswork.
    bias = {str(token): value for token, value in tool_call_bias(tokens).items()}
    provider = OpenAIChat(base_url=llama_server.base_url, api_key="sk-local")
    streamed, whole = await streamed_and_whole(
        provider,
        model="tiny",
        tool_choice="required",
        max_tokens=200,
        temperature=0,
        extra={"logit_bias": bias},
    )
    assert streamed == whole
    assert len(streamed["calls"]) >= 2


async def overflow(server: Server, *, api_key: str) -> toolwire.ToolwireError:
    """The error of a run whose prompt is past the server's 2048-token context."""
    agent = toolwire.Agent(
        OpenAIChat(base_url=server.base_url, api_key=api_key),
        model="tiny",
        max_tokens=8,
        journal=False,
    )
    with pytest.raises(toolwire.ToolwireError) as caught:
        try:
            await agent.run("hello " * 3000)
        finally:
            await agent.aclose()
    return caught.value


async def test_llama_server_error_reaches_the_caller_whole(llama_server: Server) -> None:
    # A one-character key (local servers take any key) must not garble the
    # server's message: redaction replaces the key, not every "x" in the text.
    error = await overflow(llama_server, api_key="x")
    assert isinstance(error, toolwire.ProviderError), repr(error)
    assert error.status_code == 400
    assert "exceeds the available context size" in str(error)


async def test_llama_cpp_python_failure_after_200_is_a_typed_error(
    llama_cpp_python: Server,
) -> None:
    # This server sends 200 and its headers before it runs the model; when
    # the prompt then overflows the context, the body stays empty.
    error = await overflow(llama_cpp_python, api_key="sk-local")
    assert isinstance(error, toolwire.StreamTruncated), repr(error)
