"""Unit tests of scenarios, templates, ids and request parsing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolwire.errors import UsageError
from toolwire.testing import (
    Fault,
    Scenario,
    ScenarioError,
    ScriptedToolCall,
    Turn,
    builtin_names,
)
from toolwire.testing._parse import BadRequest, parse_request
from toolwire.testing.scenario import ResultLookup, substitute, substitute_value, token

from ._wire import CONFORMANCE


def test_builtin_weather_scenario() -> None:
    scenario = Scenario.builtin("weather")
    assert "weather" in builtin_names()
    first, second = scenario.turns
    assert [(c.name, c.arguments) for c in first.tool_calls] == [
        ("get_weather", {"city": "杭州"}),
        ("get_current_time", {"timezone": "Asia/Shanghai"}),
    ]
    assert first.delay > 0 and first.chunk_size < 10
    assert "{result:get_weather.condition_zh}" in second.text
    assert "{result:get_current_time.time}" in second.text


def test_result_references_pick_fields_of_json_results() -> None:
    from toolwire.testing.scenario import ResultLookup, ScenarioError, substitute

    lookup = ResultLookup(
        [("get_weather", '{"now": {"temp": 24, "sky": "小雨"}, "days": ["a", "b"]}'), ("t", "x")],
        [("get_weather", '{"now": {"temp": 24, "sky": "小雨"}, "days": ["a", "b"]}'), ("t", "x")],
    )
    text = "{result:get_weather.now.sky} {result:0.now.temp}° {result:get_weather.days.1}"
    assert substitute(text, lookup) == "小雨 24° b"
    with pytest.raises(ScenarioError, match="no field 'wind'"):
        substitute("{result:get_weather.now.wind}", lookup)
    with pytest.raises(ScenarioError, match="not JSON"):
        substitute("{result:t.field}", lookup)


def test_unknown_builtin_is_a_typed_error() -> None:
    with pytest.raises(ScenarioError, match=r"no built-in scenario 'nope'.*weather"):
        Scenario.builtin("nope")
    assert issubclass(ScenarioError, UsageError)


def test_from_file_and_replay(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps({"turns": [{"text": "hi", "faults": [{"status": 429, "retry_after": 1}]}]})
    )
    scenario = Scenario.from_file(path)
    assert scenario.name == "s"
    assert scenario.turns[0].faults == [Fault(status=429, retry_after=1)]

    trace = CONFORMANCE / "openai" / "chat_single_call_usage.sse"
    replay = Scenario.replay_file(trace)
    assert replay.replay == trace and replay.turns == []
    # A recorded body is never taken for a scenario, whatever its name
    with pytest.raises(ScenarioError, match=r"recorded response body.*--replay"):
        Scenario.from_file(trace)

    relative = tmp_path / "r.json"
    (tmp_path / "body.sse").write_bytes(b"data: [DONE]\n\n")
    relative.write_text(json.dumps({"replay": "body.sse"}))
    assert Scenario.from_file(relative).replay == tmp_path / "body.sse"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"turns": [{"txet": "typo"}]}), "txet"),
        (json.dumps({"turns": []}), "needs turns or a replay"),
        (json.dumps({"turns": [{"faults": [{}]}]}), "a fault needs one of"),
        (json.dumps({"turns": [{"chunk_size": 0}]}), "chunk_size"),
        (json.dumps({"replay": "missing.sse"}), "replay file not found"),
    ],
)
def test_invalid_scenarios_are_rejected_clearly(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ScenarioError, match=message):
        Scenario.from_file(path)


def test_missing_file_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot read"):
        Scenario.from_file(tmp_path / "absent.json")
    with pytest.raises(ScenarioError, match="not found"):
        Scenario.replay_file(tmp_path / "absent.sse")


YAML_SCENARIO = """\
# The same conversation as a JSON scenario, in YAML.
turns:
  - tool_calls:
      - name: get_weather
        arguments: {city: 杭州}
    faults:
      - status: 429
        retry_after: 0.5
  - text: "天气:{result:get_weather}"
"""


@pytest.mark.parametrize("name", ["s.yaml", "s.yml", "s.txt", "scenario"])
def test_yaml_by_content_whatever_the_name(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(YAML_SCENARIO, encoding="utf-8")
    scenario = Scenario.from_file(path)
    assert scenario.turns[0].tool_calls[0].arguments == {"city": "杭州"}
    assert scenario.turns[0].faults == [Fault(status=429, retry_after=0.5)]
    assert scenario.turns[1].text == "天气:{result:get_weather}"


def test_json_by_content_whatever_the_name(tmp_path: Path) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(json.dumps({"name": "j", "turns": [{"text": "hi"}]}), encoding="utf-8")
    assert Scenario.from_file(path).turns[0].text == "hi"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"  \n", "is empty"),
        (b"\x89PNG\r\n\x1a\n\x00\xff\xfe", "binary file"),
        (b'data: {"choices": []}\n\ndata: [DONE]\n\n', "recorded response body"),
        (b"event: message_start\ndata: {}\n\n", "recorded response body"),
        (b'[{"candidates": []}]', "recorded response body"),
        (b"turns: [unclosed", "neither JSON nor YAML"),
        (b"- just\n- a list\n", "not a mapping"),
        (b"plain words", "not a mapping"),
    ],
)
def test_files_that_are_not_scenarios(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "input.json"
    path.write_bytes(content)
    with pytest.raises(ScenarioError, match=message):
        Scenario.from_file(path)


def test_a_fault_written_on_the_turn_says_where_it_goes() -> None:
    with pytest.raises(ScenarioError, match=r"'status' belongs to a fault.*\"faults\": \["):
        Scenario.from_dict({"turns": [{"text": "x", "status": 429, "retry_after": 1}]})


def test_unknown_name_lists_the_builtins(tmp_path: Path) -> None:
    from toolwire.testing.server import load_scenario

    with pytest.raises(ScenarioError, match=r"no scenario 'wether'.*built-in: quickstart, weather"):
        load_scenario("wether")
    assert load_scenario("quickstart").name == "quickstart"


def test_turn_selection_and_if_error() -> None:
    fixed = Turn(tool_calls=[ScriptedToolCall(name="f", arguments={"x": 1})])
    scenario = Scenario(
        turns=[
            Turn(tool_calls=[ScriptedToolCall(name="f", arguments="{bad")]),
            Turn(text="done", if_error=fixed),
            Turn(text="done after correction"),
        ]
    )
    assert scenario.turn_for(0, last_results_have_error=False).tool_calls[0].arguments == "{bad"
    assert scenario.turn_for(1, last_results_have_error=False).text == "done"
    assert scenario.turn_for(1, last_results_have_error=True) == fixed
    assert scenario.turn_for(2, last_results_have_error=True).text == "done after correction"
    with pytest.raises(ScenarioError, match="has 3 turn"):
        scenario.turn_for(3, last_results_have_error=False)


def test_templates() -> None:
    lookup = ResultLookup(
        latest=[("get_weather", "晴 22°C"), ("get_time", "10:00")],
        all_results=[("get_weather", "old"), ("get_weather", "晴 22°C"), ("get_time", "10:00")],
    )
    assert substitute("{result:0} / {result:1}", lookup) == "晴 22°C / 10:00"
    assert substitute("{result:get_weather}!", lookup) == "晴 22°C!"
    assert substitute("no refs {x}", lookup) == "no refs {x}"
    value = {"q": ["{result:get_time}", 3], "{result:1}": None}
    assert substitute_value(value, lookup) == {"q": ["10:00", 3], "10:00": None}
    with pytest.raises(ScenarioError, match="carries 2 tool result"):
        substitute("{result:2}", lookup)
    with pytest.raises(ScenarioError, match=r"no result of tool 'nope'.*get_time, get_weather"):
        substitute("{result:nope}", lookup)


def test_tokens_are_deterministic() -> None:
    assert token("a", 24) == token("a", 24)
    assert token("a", 24) != token("b", 24)
    assert len(token("a", 100)) == 100 and token("a", 100).isalnum()


def _body(value: object) -> bytes:
    return json.dumps(value).encode()


def test_parse_openai_chat_history() -> None:
    body = {
        "model": "gpt-4o",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "a", "arguments": "{}"}},
                    {"id": "c2", "type": "function", "function": {"name": "b", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "1"},
            {"role": "tool", "tool_call_id": "c2", "content": '{"error": "invalid_arguments"}'},
        ],
    }
    parsed = parse_request("openai-chat", _body(body))
    assert parsed.assistant_turns == 1 and parsed.stream and parsed.include_usage
    assert [(r.name, r.content) for r in parsed.latest_results] == [
        ("a", "1"),
        ("b", '{"error": "invalid_arguments"}'),
    ]
    assert parsed.latest_has_error
    # The conversation key depends only on the history before the first answer.
    shorter = dict(body, messages=body["messages"][:2])
    assert parse_request("openai-chat", _body(shorter)).conversation == parsed.conversation
    other = dict(body, messages=[{"role": "user", "content": "other"}])
    assert parse_request("openai-chat", _body(other)).conversation != parsed.conversation


def test_parse_responses_counts_a_run_of_items_as_one_turn() -> None:
    body = {
        "model": "gpt-5",
        "input": [
            {"role": "user", "content": "q"},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "call_id": "c1", "name": "a", "arguments": "{}"},
            {"type": "function_call", "call_id": "c2", "name": "b", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "one"},
            {"type": "function_call_output", "call_id": "c2", "output": "two"},
        ],
    }
    parsed = parse_request("openai-responses", _body(body))
    assert parsed.assistant_turns == 1
    assert [(r.name, r.content) for r in parsed.latest_results] == [("a", "one"), ("b", "two")]
    assert not parsed.latest_has_error
    assert (
        parse_request("openai-responses", _body({"model": "m", "input": "hi"})).assistant_turns == 0
    )


def test_parse_anthropic_tool_results() -> None:
    body = {
        "model": "claude",
        "messages": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "a", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "bad"}],
                        "is_error": True,
                    }
                ],
            },
        ],
    }
    parsed = parse_request("anthropic-messages", _body(body))
    assert parsed.assistant_turns == 1
    assert [(r.name, r.content, r.is_error) for r in parsed.latest_results] == [("a", "bad", True)]


def test_parse_gemini_function_responses() -> None:
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "q"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}}]},
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "a", "response": {"result": "sunny"}}},
                    {"functionResponse": {"name": "b", "response": {"error": "boom"}}},
                ],
            },
        ]
    }
    parsed = parse_request("gemini", _body(body), model="gemini-2.0-flash", stream=True)
    assert parsed.model == "gemini-2.0-flash" and parsed.assistant_turns == 1
    assert [(r.name, r.content) for r in parsed.latest_results] == [
        ("a", "sunny"),
        ("b", '{"error":"boom"}'),
    ]
    assert parsed.latest_has_error


@pytest.mark.parametrize(
    ("dialect", "body", "message"),
    [
        ("openai-chat", b"{", "not valid JSON"),
        ("openai-chat", b"[]", "must be a JSON object"),
        ("openai-chat", _body({"model": "m"}), "'messages' must be an array"),
        ("openai-chat", _body({"model": "m", "messages": [3]}), r"messages\[0\] must be an object"),
        ("openai-chat", _body({"messages": []}), "'model'"),
        (
            "openai-chat",
            _body({"model": "m", "messages": [{"role": "tool", "content": "x"}]}),
            "tool_call_id",
        ),
        ("openai-chat", _body({"model": "m", "messages": [], "stream": "yes"}), "'stream'"),
        ("openai-responses", _body({"model": "m", "input": 3}), "'input'"),
        (
            "openai-responses",
            _body({"model": "m", "input": "x", "previous_response_id": "r"}),
            "previous_response_id",
        ),
        ("anthropic-messages", _body({"model": "m", "messages": [{"role": "bot"}]}), "role"),
        ("gemini", _body({"contents": "x"}), "'contents' must be an array"),
        ("nope", _body({}), "unknown dialect"),
    ],
)
def test_bad_requests_are_typed_errors(dialect: str, body: bytes, message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        parse_request(dialect, body)
