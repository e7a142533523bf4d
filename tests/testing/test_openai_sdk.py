"""The official openai SDK against the emulation server: chat completions and responses."""

from __future__ import annotations

import json
from typing import Any

import openai
from openai.lib.streaming.chat import ChatCompletionStreamState

from tests.testing.conftest import quoting_weather
from toolwire.testing import EmulationServer, Scenario
from toolwire.testing.pytest_plugin import ServerFactory

QUESTION = "杭州天气怎么样?现在几点?"
WEATHER = {"city": "杭州", "temperature_c": 22, "condition": "多云"}
TIME = {"timezone": "Asia/Shanghai", "time": "2025-05-01 10:30"}


def _client(server: EmulationServer, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url_for("openai-chat"), api_key="test", **options)


def _results(calls: list[tuple[str, str]]) -> dict[str, str]:
    table = {"get_weather": WEATHER, "get_current_time": TIME}
    return {call_id: json.dumps(table[name], ensure_ascii=False) for call_id, name in calls}


def test_chat_stream_helper_reassembles_parallel_calls(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(quoting_weather())
    client = _client(server)
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    with client.chat.completions.stream(
        model="gpt-4o", messages=messages, stream_options={"include_usage": True}
    ) as stream:
        chunks = [event.chunk for event in stream if event.type == "chunk"]
        completion = stream.get_final_completion()
    # Arguments really arrive in several fragments, and usage comes last.
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.tool_calls) > 6
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls or []
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("get_weather", {"city": "杭州"}),
        ("get_current_time", {"timezone": "Asia/Shanghai"}),
    ]
    assert all(c.id.startswith("call_") and len(c.id) == 29 for c in calls)
    assert len({c.id for c in calls}) == 2

    # Second turn: the tool results go back; the answer quotes them.
    messages.append(choice.message.model_dump(exclude_none=True, exclude={"parsed"}))
    for call_id, content in _results([(c.id, c.function.name) for c in calls]).items():
        messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
    state = ChatCompletionStreamState()
    for chunk in client.chat.completions.create(model="gpt-4o", messages=messages, stream=True):
        state.handle_chunk(chunk)
    answer = state.get_final_completion().choices[0]
    assert answer.finish_reason == "stop"
    text = answer.message.content or ""
    assert json.dumps(WEATHER, ensure_ascii=False) in text
    assert json.dumps(TIME, ensure_ascii=False) in text
    assert text.startswith("杭州现在的天气")
    assert server.requests[1]["messages"][-1]["role"] == "tool"


def test_chat_ids_are_deterministic_per_conversation(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(quoting_weather())
    client = _client(server)

    def ids(question: str) -> list[str]:
        completion = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": question}]
        )
        return [c.id for c in completion.choices[0].message.tool_calls or []]

    assert ids(QUESTION) == ids(QUESTION)
    assert set(ids(QUESTION)).isdisjoint(ids("another question"))


def test_chat_non_streaming_and_usage(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(quoting_weather())
    completion = _client(server).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": QUESTION}]
    )
    assert completion.object == "chat.completion" and completion.model == "gpt-4o-mini"
    calls = completion.choices[0].message.tool_calls or []
    assert [json.loads(c.function.arguments) for c in calls] == [
        {"city": "杭州"},
        {"timezone": "Asia/Shanghai"},
    ]
    assert completion.usage is not None and completion.usage.total_tokens > 0


def test_chat_text_reasoning_and_raw_arguments(toolwire_server: ServerFactory) -> None:
    scenario = Scenario.from_dict(
        {
            "turns": [
                {
                    "reasoning": "先想一想。",
                    "text": "好的,我来查。",
                    "tool_calls": [{"name": "lookup", "arguments": '{"q": "未闭合'}],
                    "chunk_size": 3,
                }
            ]
        }
    )
    server = toolwire_server(scenario)
    stream = _client(server).chat.completions.create(
        model="deepseek-reasoner", messages=[{"role": "user", "content": "x"}], stream=True
    )
    reasoning, text, arguments = "", "", ""
    for chunk in stream:
        delta = chunk.choices[0].delta
        reasoning += getattr(delta, "reasoning_content", None) or ""
        text += delta.content or ""
        for call in delta.tool_calls or []:
            arguments += (call.function.arguments if call.function else None) or ""
    assert reasoning == "先想一想。"
    assert text == "好的,我来查。"
    # Raw arguments go out exactly as scripted, invalid JSON included.
    assert arguments == '{"q": "未闭合'


def test_responses_stream_and_second_turn(toolwire_server: ServerFactory) -> None:
    server = toolwire_server(quoting_weather())
    client = _client(server)
    events = list(client.responses.create(model="gpt-5", input=QUESTION, stream=True))
    types = [e.type for e in events]
    assert types[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert types.count("response.function_call_arguments.delta") > 4
    assert [e.sequence_number for e in events] == list(range(len(events)))
    completed = events[-1]
    assert completed.type == "response.completed"
    assert completed.response.usage is not None and completed.response.usage.total_tokens > 0
    calls = [item for item in completed.response.output if item.type == "function_call"]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("get_weather", {"city": "杭州"}),
        ("get_current_time", {"timezone": "Asia/Shanghai"}),
    ]
    # The deltas, joined, give the same arguments as the final items.
    joined: dict[str, str] = {}
    for e in events:
        if e.type == "response.function_call_arguments.delta":
            joined[e.item_id] = joined.get(e.item_id, "") + e.delta
    assert joined == {c.id: c.arguments for c in calls}

    history: list[Any] = [{"role": "user", "content": QUESTION}]
    history += [
        {"type": "function_call", "call_id": c.call_id, "name": c.name, "arguments": c.arguments}
        for c in calls
    ]
    for call_id, content in _results([(c.call_id, c.name) for c in calls]).items():
        history.append({"type": "function_call_output", "call_id": call_id, "output": content})
    with client.responses.stream(model="gpt-5", input=history) as stream:
        final = stream.get_final_response()
    assert json.dumps(WEATHER, ensure_ascii=False) in final.output_text
    assert json.dumps(TIME, ensure_ascii=False) in final.output_text


def test_responses_non_streaming_with_reasoning(toolwire_server: ServerFactory) -> None:
    scenario = Scenario.from_dict(
        {"turns": [{"reasoning": "think", "text": "hello", "tool_calls": [{"name": "f"}]}]}
    )
    server = toolwire_server(scenario)
    response = _client(server).responses.create(model="gpt-5", input="hi")
    assert [item.type for item in response.output] == ["reasoning", "message", "function_call"]
    assert response.output_text == "hello"
    call = response.output[2]
    assert call.type == "function_call" and call.arguments == "{}" and call.name == "f"
    assert call.call_id.startswith("call_") and call.id.startswith("fc_")


def test_background_stream_resumed_with_the_sdk(toolwire_server: ServerFactory) -> None:
    """The official SDK's background mode against the emulation server: its
    typed events parse, and ``responses.retrieve(id, stream=True,
    starting_after=N)`` continues the stream after event N."""
    server = toolwire_server(quoting_weather())
    client = openai.OpenAI(base_url=server.url_for("openai-responses"), api_key="test")
    stream = client.responses.create(
        model="gpt-4.1", input=QUESTION, background=True, stream=True, tools=[]
    )
    first = []
    for event in stream:
        first.append(event)
        if len(first) == 6:
            break
    stream.close()
    assert [e.type for e in first[:3]] == [
        "response.created",
        "response.queued",
        "response.in_progress",
    ]
    assert first[0].response.background is True and first[0].response.status == "queued"
    rest = list(
        client.responses.retrieve(
            first[0].response.id, stream=True, starting_after=first[-1].sequence_number
        )
    )
    numbers = [e.sequence_number for e in first + rest]
    assert numbers == list(range(len(numbers)))
    assert rest[-1].type == "response.completed"
    whole = client.responses.retrieve(first[0].response.id)
    assert whole.status == "completed" and whole.output == rest[-1].response.output
    assert [r["after"] for r in server.continuations] == [5]
