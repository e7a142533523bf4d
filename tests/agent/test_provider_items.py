"""Items a provider needs to see again, end to end: the Agent against the
emulation server, which streams them as the provider does, and the next
request, which must carry them back in place.

Anthropic: server-tool blocks and their results, text between them, a
``tool_use`` called from code execution (``caller``), the message's
``container``, ``compaction``, and ``pause_turn`` continued by the Agent.
Gemini: built-in tools' parts (``toolCall`` / ``toolResponse``,
``executableCode`` / ``codeExecutionResult``) and every ``thoughtSignature``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from toolwire import (
    Agent,
    Anthropic,
    AssistantMessage,
    Gemini,
    RunFinished,
    ServerToolCallReady,
    StreamDecoder,
    ToolResultMessage,
    UserMessage,
    tool,
)
from toolwire.journal import JournalObserver, SQLiteJournal
from toolwire.run import AgentEvent, RunResult
from toolwire.testing import EmulationServer, Scenario

from ..journal._support import CrashAt, expect_crash, make_agent

pytestmark = pytest.mark.anyio

ANTHROPIC = "anthropic-messages"
CODE_TOOL = "srvtoolu_01CodeExecution000000"
CALLER = {"type": "code_execution_20250825", "tool_id": CODE_TOOL}
CONTAINER = {"id": "container_011CWHPPTDTn1XufeRB9uHeH", "expires_at": "2026-12-20T05:33:35Z"}
SEARCH = {
    "type": "server_tool_use",
    "id": "srvtoolu_01WebSearch0000000000",
    "name": "web_search",
    "input": {"query": "weather in Hangzhou"},
}
SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_01WebSearch0000000000",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://example.com/hangzhou",
            "title": "Hangzhou weather",
            "encrypted_content": "EqgfCioIARgBIiQ3YTAw",
            "page_age": None,
        }
    ],
}
CITATION = {
    "type": "web_search_result_location",
    "url": "https://example.com/hangzhou",
    "title": "Hangzhou weather",
    "encrypted_index": "Eo8BCioIAhgBIiQ3",
    "cited_text": "Light rain in Hangzhou today.",
}
CITED = {"type": "text", "text": "It rains, says the web; now in code.", "citations": [CITATION]}
CODE = {
    "type": "server_tool_use",
    "id": CODE_TOOL,
    "name": "code_execution",
    "input": {"code": "print(await get_weather({'city': 'Hangzhou'}))"},
}
CODE_RESULT = {
    "type": "code_execution_tool_result",
    "tool_use_id": CODE_TOOL,
    "content": {
        "type": "code_execution_result",
        "stdout": "light rain",
        "stderr": "",
        "return_code": 0,
        "content": [],
    },
}


def anthropic_items(after: str, *items: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"dialect": ANTHROPIC, "after": after, "item": item} for item in items]


@tool(read_only=True)
def get_weather(city: str) -> dict[str, str]:
    """Current weather of a city.

    Args:
        city: the city name.
    """
    return {"city": city, "condition": "light rain"}


async def run(server: EmulationServer, **options: Any) -> tuple[list[AgentEvent], RunResult]:
    provider = Anthropic(api_key="test-key", base_url=server.url_for(ANTHROPIC))
    agent = Agent(provider, model="claude-sonnet-4-5", tools=[get_weather], **options)
    events: list[AgentEvent] = []
    try:
        async for event in agent.stream("What is the weather in Hangzhou?"):
            events.append(event)
    finally:
        await agent.aclose()
    last = events[-1]
    assert isinstance(last, RunFinished)
    return events, last.result


def types(blocks: list[dict[str, Any]]) -> list[str]:
    return [block["type"] for block in blocks]


async def test_anthropic_server_blocks_caller_and_container_go_back_in_place() -> None:
    scenario = Scenario.from_dict(
        {
            "turns": [
                {
                    "text": "Let me look that up.",
                    "provider_items": anthropic_items(
                        "text",
                        SEARCH,
                        SEARCH_RESULT,
                        CITED,
                        CODE,
                    ),
                    "tool_calls": [
                        {
                            "name": "get_weather",
                            "arguments": {"city": "Hangzhou"},
                            "provider_fields": {ANTHROPIC: {"caller": CALLER}},
                        }
                    ],
                    "provider_fields": {ANTHROPIC: {"container": CONTAINER}},
                    "chunk_size": 7,
                },
                {
                    "provider_items": anthropic_items("reasoning", CODE_RESULT),
                    "text": "Hangzhou: {result:get_weather.condition}.",
                },
            ]
        }
    )
    with EmulationServer(scenario) as server:
        events, result = await run(server)
        requests = list(server.requests)
    assert result.outcome == "answered" and result.output == "Hangzhou: light rain."
    servers = [e.call for e in events if isinstance(e, ServerToolCallReady)]
    assert [(c.name, c.arguments) for c in servers] == [
        ("web_search", SEARCH["input"]),
        ("code_execution", CODE["input"]),
    ]
    second = requests[1]
    assert second["container"] == CONTAINER["id"]
    assistant = second["messages"][1]
    assert assistant["role"] == "assistant"
    blocks = assistant["content"]
    assert types(blocks) == [
        "text",
        "server_tool_use",
        "web_search_tool_result",
        "text",
        "server_tool_use",
        "tool_use",
    ]
    assert blocks[0] == {"type": "text", "text": "Let me look that up."}
    assert blocks[1:4] == [SEARCH, SEARCH_RESULT, CITED]
    assert blocks[4] == CODE
    assert blocks[5]["caller"] == CALLER and blocks[5]["input"] == {"city": "Hangzhou"}
    assert second["messages"][2]["content"][0]["tool_use_id"] == blocks[5]["id"]
    # The answer's own code-execution result is kept for a later turn too.
    final = result.messages[-1]
    assert [item["type"] for item in final.provider_state] == ["code_execution_tool_result"]


async def test_anthropic_pause_turn_is_continued_by_the_agent() -> None:
    scenario = Scenario.from_dict(
        {
            "turns": [
                {
                    "text": "Searching.",
                    "provider_items": anthropic_items("text", SEARCH, SEARCH_RESULT),
                    "provider_finish": {ANTHROPIC: "pause_turn"},
                },
                {"text": "It rains in Hangzhou."},
            ]
        }
    )
    with EmulationServer(scenario) as server:
        _, result = await run(server)
        requests = list(server.requests)
    assert result.outcome == "answered" and result.output == "It rains in Hangzhou."
    assert result.turns == 2 and len(requests) == 2
    # The paused content goes back as it is, last, with no user message after it.
    roles = [m["role"] for m in requests[1]["messages"]]
    assert roles == ["user", "assistant"]
    paused = requests[1]["messages"][1]["content"]
    assert types(paused) == ["text", "server_tool_use", "web_search_tool_result"]
    assert paused[1:] == [SEARCH, SEARCH_RESULT]


async def test_a_paused_turn_is_continued_after_a_crash_from_the_journal(tmp_path: Path) -> None:
    scenario = Scenario.from_dict(
        {
            "turns": [
                {
                    "text": "Searching.",
                    "provider_items": anthropic_items("text", SEARCH, SEARCH_RESULT),
                    "provider_finish": {ANTHROPIC: "pause_turn"},
                },
                {"text": "It rains in Hangzhou."},
            ]
        }
    )
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    with EmulationServer(scenario) as server:
        # The process dies as it is about to continue the paused turn.
        first = make_agent(
            server,
            [get_weather],
            journal=False,
            observers=[JournalObserver(journal), CrashAt("model_request", nth=2)],
            provider="anthropic",
        )
        await expect_crash(first.run("Weather in Hangzhou?", run_id="run-1"))
        await first.aclose()
        second = make_agent(server, [get_weather], journal=journal, provider="anthropic")
        try:
            result = await second.resume("run-1")
        finally:
            await second.aclose()
        requests = list(server.requests)
    assert result.outcome == "answered" and result.output == "It rains in Hangzhou."
    assert len(requests) == 2
    paused = requests[1]["messages"][-1]
    assert paused["role"] == "assistant"
    assert types(paused["content"]) == ["text", "server_tool_use", "web_search_tool_result"]


async def test_anthropic_pause_turn_stops_at_the_turn_limit() -> None:
    turn = {
        "text": "Searching.",
        "provider_items": anthropic_items("text", SEARCH, SEARCH_RESULT),
        "provider_finish": {ANTHROPIC: "pause_turn"},
    }
    with EmulationServer(Scenario.from_dict({"turns": [turn, turn]})) as server:
        _, result = await run(server, max_turns=1)
        requests = list(server.requests)
    assert result.outcome == "max_turns" and len(requests) == 1


async def test_anthropic_compaction_goes_back_first() -> None:
    compaction = {
        "type": "compaction",
        "content": "The user asked about Hangzhou's weather.",
        "encrypted_content": "opaque-compaction-payload",
    }
    scenario = Scenario.from_dict(
        {
            "turns": [
                {
                    "provider_items": anthropic_items("reasoning", compaction),
                    "text": "Checking.",
                    "tool_calls": [{"name": "get_weather", "arguments": {"city": "Hangzhou"}}],
                    "chunk_size": 5,
                },
                {"text": "Light rain."},
            ]
        }
    )
    with EmulationServer(scenario) as server:
        _, result = await run(server)
        requests = list(server.requests)
    assert result.output == "Light rain."
    blocks = requests[1]["messages"][1]["content"]
    assert types(blocks) == ["compaction", "text", "tool_use"]
    assert blocks[0] == compaction


@tool(anthropic_eager_input_streaming=True)
def write_file(path: str, text: str) -> str:
    """Write a file.

    Args:
        path: where.
        text: what.
    """
    return f"wrote {len(text)} characters to {path}"


async def test_anthropic_eager_input_streaming_is_a_tool_option() -> None:
    scenario = Scenario.from_dict(
        {
            "turns": [
                {"tool_calls": [{"name": "write_file", "arguments": {"path": "a", "text": "x"}}]},
                {"text": "{result:0}"},
            ]
        }
    )
    with EmulationServer(scenario) as server:
        provider = Anthropic(api_key="test-key", base_url=server.url_for(ANTHROPIC))
        agent = Agent(provider, model="claude-sonnet-4-5", tools=[get_weather, write_file])
        try:
            result = await agent.run("Write it.")
        finally:
            await agent.aclose()
        requests = list(server.requests)
    assert result.output == "wrote 1 characters to a"
    tools = {entry["name"]: entry for entry in requests[0]["tools"]}
    assert tools["write_file"]["eager_input_streaming"] is True
    assert "eager_input_streaming" not in tools["get_weather"]


# -- Gemini ----------------------------------------------------------------------------

GEMINI = "gemini"
SEARCH_CALL = {
    "toolCall": {
        "id": "g7k2p0qa",
        "toolType": "GOOGLE_SEARCH_WEB",
        "args": {"queries": ["weather in Hangzhou"]},
    },
    "thoughtSignature": "CpwBAY89a1/search==",
}
SEARCH_RESPONSE = {
    "toolResponse": {
        "id": "g7k2p0qa",
        "toolType": "GOOGLE_SEARCH_WEB",
        "response": {"results": [{"title": "Hangzhou weather", "snippet": "light rain"}]},
    }
}
EXECUTABLE = {"executableCode": {"language": "PYTHON", "code": "print(24 * 9 / 5 + 32)"}}
EXECUTED = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "75.2\n"}}


def gemini_items(after: str, *items: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"dialect": GEMINI, "after": after, "item": item} for item in items]


async def test_gemini_built_in_tool_parts_and_signatures_go_back_in_place() -> None:
    scenario = Scenario.from_dict(
        {
            "turns": [
                {
                    "reasoning": "Search, compute, then ask the tool.",
                    "provider_items": [
                        *gemini_items("reasoning", SEARCH_CALL, SEARCH_RESPONSE),
                        *gemini_items("text", EXECUTABLE, EXECUTED),
                    ],
                    "text": "It is 75.2°F.",
                    "tool_calls": [
                        {
                            "name": "get_weather",
                            "arguments": {"city": "Hangzhou"},
                            "provider_fields": {GEMINI: {"thoughtSignature": "CiQBcall=="}},
                        }
                    ],
                },
                {"text": "Hangzhou: {result:get_weather.condition}."},
            ]
        }
    )
    with EmulationServer(scenario) as server:
        provider = Gemini(api_key="test-key", base_url=server.url_for(GEMINI))
        agent = Agent(provider, model="gemini-3-pro", tools=[get_weather])
        try:
            result = await agent.run("What is the weather in Hangzhou?")
        finally:
            await agent.aclose()
        requests = list(server.requests)
    assert result.output == "Hangzhou: light rain."
    model, answers = requests[1]["contents"][1:3]
    assert model["role"] == "model"
    assert model["parts"] == [
        SEARCH_CALL,
        SEARCH_RESPONSE,
        {"text": "It is 75.2°F."},
        EXECUTABLE,
        EXECUTED,
        {
            "functionCall": {
                "name": "get_weather",
                "args": {"city": "Hangzhou"},
                "id": model["parts"][5]["functionCall"]["id"],
            },
            "thoughtSignature": "CiQBcall==",
        },
    ]
    assert answers["parts"][0]["functionResponse"]["name"] == "get_weather"


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("signed", [0, 1, 2])
def test_gemini_signature_on_any_part_of_a_streamed_call_goes_back_on_it(
    anyio_backend: str, signed: int
) -> None:
    chunks: list[dict[str, Any]] = [
        {"functionCall": {"name": "get_weather", "willContinue": True}},
        {
            "functionCall": {
                "partialArgs": [{"jsonPath": "$.city", "stringValue": "Hang"}],
                "willContinue": True,
            }
        },
        {"functionCall": {"partialArgs": [{"jsonPath": "$.city", "stringValue": "zhou"}]}},
    ]
    chunks[signed]["thoughtSignature"] = "CiQBvertex=="
    body = b"".join(
        b"data: "
        + json.dumps({"candidates": [{"content": {"role": "model", "parts": [part]}}]}).encode()
        + b"\r\n\r\n"
        for part in chunks
    )
    body += b'data: {"candidates": [{"finishReason": "STOP"}]}\r\n\r\n'
    decoder = StreamDecoder(GEMINI)
    decoder.feed(body)
    decoder.close()
    result = decoder.result()
    assert [c.arguments for c in result.tool_calls] == [{"city": "Hangzhou"}]
    assistant = AssistantMessage.from_choice(result.choices[0])
    call = result.tool_calls[0]
    history = [UserMessage("q"), assistant, ToolResultMessage(call.id, call.name, "ok")]
    contents = Gemini(api_key="k").build_request(model="m", messages=history).json["contents"]
    assert contents[1]["parts"] == [
        {
            "functionCall": {"name": "get_weather", "args": {"city": "Hangzhou"}},
            "thoughtSignature": "CiQBvertex==",
        }
    ]


# -- streamed and whole answers keep the same items ---------------------------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("dialect", [ANTHROPIC, GEMINI])
def test_streamed_and_whole_answers_keep_the_same_items(anyio_backend: str, dialect: str) -> None:
    items = (
        anthropic_items("text", SEARCH, SEARCH_RESULT, CITED, CODE)
        if dialect == ANTHROPIC
        else gemini_items("text", SEARCH_CALL, SEARCH_RESPONSE, EXECUTABLE, EXECUTED)
    )
    turn = {
        "text": "Looking.",
        "provider_items": items,
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Hangzhou"}}],
        "provider_fields": {ANTHROPIC: {"container": CONTAINER}},
        "chunk_size": 3,
    }
    provider = (
        Anthropic(api_key="k", base_url="http://unused")
        if dialect == ANTHROPIC
        else Gemini(api_key="k", base_url="http://unused")
    )
    results = []
    with EmulationServer(Scenario.from_dict({"turns": [turn]})) as server, httpx.Client() as http:
        base = server.url_for(dialect)
        for stream in (True, False):
            request = provider.build_request(model="m", messages=[UserMessage("q")], stream=stream)
            url = request.url.replace("http://unused", base)
            response = http.post(url, headers=dict(request.headers), content=request.content())
            if stream:
                decoder = StreamDecoder(dialect)
                decoder.feed(response.content)
                decoder.close()
                results.append(decoder.result())
            else:
                results.append(provider.parse_response(response.json()))
    streamed, whole = (r.choices[0] for r in results)
    assert streamed.provider_state == whole.provider_state != ()
    assert streamed.text == whole.text
    assert [c.arguments for c in streamed.tool_calls] == [{"city": "Hangzhou"}]
