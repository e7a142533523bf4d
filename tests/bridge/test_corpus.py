"""Every complete recording of the public corpus, as the upstream of one bridge,
streamed to the official SDKs of the other dialects: the calls each SDK
reassembles are the sidecar's expected calls, ids included, and so is the text.

Each recording is replayed by its own emulation server (``toolwire serve
--replay``), all in this process, and one bridge routes model ``<trace>`` to
the replay of that trace, in the trace's dialect.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types as genai_types

from tests.conftest import CORPUS, TRACES, Trace
from toolwire.bridge import SERVED, BridgeServer
from toolwire.testing import EmulationServer, Scenario, ServerLimits

UPSTREAMS = (
    "openai-chat",
    "openai-responses",
    "anthropic-messages",
    "gemini",
    "bedrock-converse",
    "bedrock-invoke",
)
LEFT_OUT = ("cut", "error", "invalid_tool_calls", "incomplete_tool_calls", "incomplete_names")
"""Recordings that do not end in a complete answer (the bridge ends those with
the served dialect's error event: tests/bridge/test_app.py)."""

BRIDGED = [
    t for t in TRACES if t.dialect in UPSTREAMS and not any(k in t.expected for k in LEFT_OUT)
]
assert len(BRIDGED) >= 140, "the conformance corpus is incomplete"

TOOLS = {"name": "lookup", "description": "d", "parameters": {"type": "object"}}
"""One tool, for the clients that send none otherwise (the replay answers as recorded)."""


def model_of(trace: Trace) -> str:
    return trace.name.replace("/", "--")


@pytest.fixture(scope="module")
def bridge() -> Iterator[BridgeServer]:
    replays: list[EmulationServer] = []
    try:
        models: dict[str, Any] = {}
        for trace in BRIDGED:
            server = EmulationServer(Scenario.replay_file(CORPUS / f"{trace.name}.sse")).start()
            replays.append(server)
            models[model_of(trace)] = f"{trace.dialect}:m@{server.url_for(trace.dialect)}"
        # The clients come back after other tests of their worker: connections
        # kept as long as the module runs (a reused one the server was closing
        # would be reset).
        with BridgeServer(models, limits=ServerLimits(idle_timeout=600)) as running:
            yield running
    finally:
        with ThreadPoolExecutor(max_workers=len(replays) or 1) as pool:
            list(pool.map(lambda s: s.stop(), replays))


@pytest.fixture(scope="module")
def clients(bridge: BridgeServer) -> Iterator[dict[str, Any]]:
    with (
        openai.OpenAI(base_url=bridge.url_for("openai-chat"), api_key="k", max_retries=0) as oa,
        anthropic.Anthropic(
            base_url=bridge.url_for("anthropic-messages"), api_key="k", max_retries=0
        ) as an,
    ):
        google = genai.Client(
            api_key="k",
            http_options=genai_types.HttpOptions(base_url=bridge.base_url, api_version="v1beta"),
        )
        yield {"openai": oa, "anthropic": an, "google": google}


Call = tuple[str | None, str, dict[str, Any]]


def through_chat(client: openai.OpenAI, model: str) -> tuple[list[Call], str]:
    stream = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": "x"}],
        tools=[{"type": "function", "function": TOOLS}],
        stream=True,
    )
    calls: dict[int, dict[str, Any]] = {}
    text, finish = [], None
    for chunk in stream:
        choice = chunk.choices[0]
        text.append(choice.delta.content or "")
        for delta in choice.delta.tool_calls or []:
            call = calls.setdefault(delta.index, {"id": None, "name": "", "arguments": ""})
            call["id"] = call["id"] or delta.id
            if delta.function is not None:
                call["name"] += delta.function.name or ""
                call["arguments"] += delta.function.arguments or ""
        finish = choice.finish_reason or finish
    assert finish == ("tool_calls" if calls else "stop")
    got = [(c["id"], c["name"], json.loads(c["arguments"])) for _, c in sorted(calls.items())]
    return got, "".join(text)


def through_responses(client: openai.OpenAI, model: str) -> tuple[list[Call], str]:
    stream = client.responses.create(
        model=model, input="x", tools=[{"type": "function", **TOOLS}], stream=True
    )
    done = None
    for event in stream:
        if event.type == "response.completed":
            done = event.response
    assert done is not None
    calls = [
        (item.call_id, item.name, json.loads(item.arguments))
        for item in done.output
        if item.type == "function_call"
    ]
    return calls, done.output_text


def through_anthropic(client: anthropic.Anthropic, model: str) -> tuple[list[Call], str]:
    tool = {"name": "lookup", "description": "d", "input_schema": {"type": "object"}}
    with client.messages.stream(
        model=model, max_tokens=64, messages=[{"role": "user", "content": "x"}], tools=[tool]
    ) as stream:
        message = stream.get_final_message()
    calls = [(b.id, b.name, dict(b.input)) for b in message.content if b.type == "tool_use"]
    assert message.stop_reason == ("tool_use" if calls else "end_turn")
    text = "".join(b.text for b in message.content if b.type == "text")
    return calls, text


def through_gemini(client: genai.Client, model: str) -> tuple[list[Call], str]:
    calls: list[Call] = []
    text: list[str] = []
    config = genai_types.GenerateContentConfig(
        tools=[
            genai_types.Tool(function_declarations=[genai_types.FunctionDeclaration(name="lookup")])
        ],
        automatic_function_calling=genai_types.AutomaticFunctionCallingConfig(disable=True),
    )
    for chunk in client.models.generate_content_stream(model=model, contents="x", config=config):
        for candidate in chunk.candidates or []:
            for part in (candidate.content.parts if candidate.content else None) or []:
                if part.function_call is not None:
                    call = part.function_call
                    calls.append((call.id, call.name or "", dict(call.args or {})))
                elif part.text and not part.thought:
                    text.append(part.text)
    return calls, "".join(text)


def through(served: str, clients: dict[str, Any], model: str) -> tuple[list[Call], str]:
    if served == "openai-chat":
        return through_chat(clients["openai"], model)
    if served == "openai-responses":
        return through_responses(clients["openai"], model)
    if served == "anthropic-messages":
        return through_anthropic(clients["anthropic"], model)
    return through_gemini(clients["google"], model)


@pytest.mark.parametrize("trace", BRIDGED, ids=lambda t: t.name)
def test_each_sdk_gets_the_recorded_calls(trace: Trace, clients: dict[str, Any]) -> None:
    want = trace.expected.get("tool_calls", [])
    for served in SERVED:
        if served == trace.dialect:
            continue
        calls, text = through(served, clients, model_of(trace))
        assert [(name, args) for _, name, args in calls] == [
            (c["name"], c["arguments"]) for c in want
        ], served
        for (got_id, _, _), expected in zip(calls, want, strict=True):
            assert got_id, served
            if expected["id"] is not None:
                assert got_id == expected["id"], served
        assert text == trace.expected["text"], served
