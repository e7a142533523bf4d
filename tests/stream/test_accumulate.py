"""The accumulator's rules, one test per provider quirk it survives."""

from __future__ import annotations

import json

import pytest

from tests.stream._chunks import DONE, calls, chunk, decode, tc
from toolwire import (
    ChoiceFinished,
    RemoteProtocolError,
    StreamErrorEvent,
    StreamFailed,
    StreamTruncated,
    ToolCallDelta,
    ToolCallInvalid,
    ToolCallReady,
    ToolCallStarted,
)


def test_parallel_calls_are_kept_apart_by_index() -> None:
    _, result = decode(
        chunk(tc(0, "call_a", "read_file", "")),
        chunk(tc(0, args='{"path": ')),
        chunk(tc(1, "call_b", "read_file", "")),  # opened before 0 is closed? no: 0 still growing
        chunk(tc(0, args='"a.txt"}')),
        chunk(tc(1, args='{"path": "b.txt"}')),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [
        ("call_a", "read_file", {"path": "a.txt"}),
        ("call_b", "read_file", {"path": "b.txt"}),
    ]


def test_new_id_at_an_index_in_use_starts_a_new_call() -> None:
    _, result = decode(
        chunk(tc(0, "call_a", "f", '{"x": 1}')),
        chunk(tc(0, "call_b", "g", '{"y": 2}')),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "f", {"x": 1}), ("call_b", "g", {"y": 2})]


def test_empty_string_id_never_overwrites_dashscope() -> None:
    _, result = decode(
        chunk(tc(0, "call_a", "get_weather", '{"location":')),
        chunk(tc(0, "", "", ' "杭州市"}')),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "get_weather", {"location": "杭州市"})]


def test_null_string_id_or_name_never_overwrites() -> None:
    _, result = decode(
        chunk(tc(0, "call_a", "f", '{"a"')),
        chunk(tc(0, "null", "null", ": 1}")),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "f", {"a": 1})]


def test_empty_name_never_overwrites_mistral_compatible() -> None:
    _, result = decode(
        chunk(tc(0, "call_a", "webSearch", "")),
        chunk(tc(0, None, "", '{"q": "x"}')),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "webSearch", {"q": "x"})]


def test_repeated_id_and_name_are_assigned_not_appended_openrouter_kimi() -> None:
    _, result = decode(
        chunk(tc(0, "0", "read_file", "")),
        chunk(tc(0, "0", "read_file", '{"path"')),
        chunk(tc(0, "0", "read_file", ': "a"}')),
        DONE,
    )
    assert calls(result) == [("0", "read_file", {"path": "a"})]


@pytest.mark.parametrize(
    "indexes", [(1, 2), (3, 7), (1, 0)], ids=["one-based", "sparse", "reversed"]
)
def test_sparse_and_one_based_indexes_are_keys_not_positions(indexes: tuple[int, int]) -> None:
    first, second = indexes
    events, result = decode(
        chunk(tc(first, "call_a", "f", "")),
        chunk(tc(first, args='{"n": 1}')),
        chunk(tc(second, "call_b", "g", "")),
        chunk(tc(second, args='{"n": 2}')),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "f", {"n": 1}), ("call_b", "g", {"n": 2})]
    started = [e.index for e in events if isinstance(e, ToolCallStarted)]
    assert started == [0, 1], "events number calls by position, whatever the raw index"


def test_no_index_at_all_uses_the_id_then_the_latest_call_mistral() -> None:
    _, result = decode(
        chunk(tc(None, "call_a", "f", '{"a": ')),
        chunk(tc(None, None, None, "1}")),
        chunk(tc(None, "call_b", "g", '{"b": 2}')),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "f", {"a": 1}), ("call_b", "g", {"b": 2})]


def test_whole_call_in_one_delta_groq() -> None:
    events, result = decode(
        chunk(tc(0, "call_a", "f", '{"a": 1}'), finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "f", {"a": 1})]
    assert sum(isinstance(e, ToolCallReady) for e in events) == 1


def test_name_arriving_after_the_arguments() -> None:
    events, result = decode(
        chunk(tc(0, "call_a", None, '{"a": 1}')),
        chunk(tc(0, None, "late_name", None)),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "late_name", {"a": 1})]
    ready = [e for e in events if isinstance(e, ToolCallReady)]
    assert [e.name for e in ready] == ["late_name"]


def test_arguments_as_a_json_object_ollama_v1() -> None:
    _, result = decode(
        chunk(tc(0, "call_a", "f", {"city": "Tokyo"})),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "f", {"city": "Tokyo"})]


@pytest.mark.parametrize("first", [None, "", "null"], ids=["missing", "empty", "null-literal"])
def test_null_missing_or_empty_arguments_mean_empty_object(first: str | None) -> None:
    _, result = decode(
        chunk(tc(0, "call_a", "now", first, omit_args=first is None)),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "now", {})]
    assert result.choices[0].tool_calls[0].repaired is False


def test_json_null_arguments_value_means_empty_object() -> None:
    body = {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {"index": 0, "id": "call_a", "function": {"name": "now", "arguments": None}}
                    ]
                },
            }
        ]
    }
    _, result = decode(
        b"data: " + json.dumps(body).encode() + b"\n\n", chunk(finish="tool_calls"), DONE
    )
    assert calls(result) == [("call_a", "now", {})]


def test_empty_arguments_then_empty_object() -> None:
    _, result = decode(
        chunk(tc(0, "call_a", "f", "")), chunk(tc(0, args="{}")), chunk(finish="tool_calls"), DONE
    )
    assert calls(result) == [("call_a", "f", {})]


def test_trailing_empty_delta_after_completion_changes_nothing_qwen_vllm() -> None:
    events, result = decode(
        chunk(tc(0, "call_a", "f", '{"a": 1}')),
        chunk(tc(0, "", "", "")),
        chunk(tc(0, args=""), finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "f", {"a": 1})]
    assert not any(isinstance(e, StreamFailed) for e in events)
    assert sum(isinstance(e, ToolCallStarted) for e in events) == 1


def test_n_greater_than_one_choices_are_kept_apart() -> None:
    _, result = decode(
        chunk(tc(0, "call_a", "f", '{"c": '), choice=0),
        chunk(tc(0, "call_b", "f", '{"c": '), choice=1),
        chunk(tc(0, args="0}"), choice=0),
        chunk(tc(0, args="1}"), choice=1),
        chunk(finish="tool_calls", choice=0),
        chunk(finish="tool_calls", choice=1),
        DONE,
    )
    assert calls(result, 0) == [("call_a", "f", {"c": 0})]
    assert calls(result, 1) == [("call_b", "f", {"c": 1})]


@pytest.mark.parametrize("empty", [[], None], ids=["empty-list", "null"])
def test_chunks_without_choices_are_skipped_usage_and_azure_filters(empty: object) -> None:
    _, result = decode(
        chunk(choices=empty),
        chunk(tc(0, "call_a", "f", '{"a": 1}')),
        chunk(finish="tool_calls"),
        chunk(choices=empty, usage={"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}),
        DONE,
    )
    assert calls(result) == [("call_a", "f", {"a": 1})]
    assert result.usage is not None and result.usage.total_tokens == 7


def test_stream_without_tool_calls_finish_reason_still_yields_calls() -> None:
    _, result = decode(chunk(tc(0, "call_a", "f", '{"a": 1}')), chunk(finish="stop"), DONE)
    assert calls(result) == [("call_a", "f", {"a": 1})]
    _, result = decode(chunk(tc(0, "call_a", "f", '{"a": 1}')), DONE)
    assert calls(result) == [("call_a", "f", {"a": 1})]


def test_ids_are_minted_where_the_provider_sends_none() -> None:
    line = (
        json.dumps(
            {
                "model": "m",
                "message": {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"function": {"name": "a", "arguments": {}}},
                        {"function": {"name": "b", "arguments": {"x": 1}}},
                    ],
                },
                "done": False,
            }
        ).encode()
        + b"\n"
    )
    end = (
        json.dumps(
            {
                "model": "m",
                "message": {"role": "assistant", "content": ""},
                "done": True,
                "done_reason": "stop",
            }
        ).encode()
        + b"\n"
    )
    _, result = decode(line, end, dialect="ollama-ndjson")
    got = result.choices[0].tool_calls
    assert [c.name for c in got] == ["a", "b"]
    assert all(c.minted_id and c.id.startswith("call_") for c in got)
    assert got[0].id != got[1].id


def test_a_call_is_ready_as_soon_as_its_json_closes() -> None:
    events, _ = decode(
        chunk(tc(0, "call_a", "f", '{"a": ')),
        chunk(tc(0, args="1}")),
        chunk(content=""),
        chunk(finish="tool_calls"),
        DONE,
    )
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ToolCallReady") < kinds.index("ChoiceFinished")


def test_a_call_whose_json_is_open_is_not_ready_at_the_next_call() -> None:
    """Calls may interleave: an unfinished JSON text is not cut by the next call."""
    events, result = decode(
        chunk(tc(0, "call_a", "f", '{"a": ')),
        chunk(tc(1, "call_b", "g", '{"b": 2}')),
        chunk(tc(0, args="1}")),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "f", {"a": 1}), ("call_b", "g", {"b": 2})]
    ready = [e.id for e in events if isinstance(e, ToolCallReady)]
    assert ready == ["call_b", "call_a"], "each is handed on when it is complete"


def test_unparseable_arguments_are_reported_invalid_never_empty() -> None:
    events, result = decode(
        chunk(tc(0, "call_a", "f", '{"a": 1 "b": 2}')), chunk(finish="tool_calls"), DONE
    )
    assert result.choices[0].tool_calls == ()
    (bad,) = result.choices[0].invalid_tool_calls
    assert bad.id == "call_a" and bad.raw_arguments == '{"a": 1 "b": 2}'
    assert "not valid JSON" in bad.error
    assert any(isinstance(e, ToolCallInvalid) for e in events)
    assert not any(isinstance(e, ToolCallReady) for e in events)


def test_arguments_that_are_not_an_object_are_invalid() -> None:
    _, result = decode(chunk(tc(0, "call_a", "f", "[1, 2]")), chunk(finish="tool_calls"), DONE)
    (bad,) = result.choices[0].invalid_tool_calls
    assert "JSON object" in bad.error and "array" in bad.error


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ('{"a": 1,}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('{"a": [1, 2,],}', {"a": [1, 2]}),
    ],
    ids=["trailing-comma", "markdown-fence", "nested-trailing-commas"],
)
def test_unambiguous_repairs_are_flagged_and_keep_the_raw_text(raw: str, value: object) -> None:
    _, result = decode(chunk(tc(0, "call_a", "f", raw)), chunk(finish="tool_calls"), DONE)
    (call,) = result.choices[0].tool_calls
    assert call.arguments == value
    assert call.repaired is True
    assert call.raw_arguments == raw


def test_missing_closing_brace_is_repaired_only_at_a_real_end() -> None:
    _, result = decode(chunk(tc(0, "call_a", "f", '{"a": {"b": 1}')), chunk(finish="stop"), DONE)
    (call,) = result.choices[0].tool_calls
    assert call.arguments == {"a": {"b": 1}} and call.repaired


def test_a_cut_stream_reports_incomplete_calls_and_never_ready() -> None:
    events, result = decode(
        chunk(tc(0, "call_a", "f", '{"a": 1}')),
        chunk(tc(1, "call_b", "write", '{"content": "hello wor')),
    )
    assert [c.id for c in result.choices[0].tool_calls] == ["call_a"]
    (cut,) = result.choices[0].incomplete_tool_calls
    assert (cut.id, cut.name, cut.raw_arguments) == ("call_b", "write", '{"content": "hello wor')
    assert isinstance(result.error, StreamTruncated)
    assert [c.id for c in result.error.incomplete_tool_calls] == ["call_b"]
    assert result.complete is False
    assert not any(isinstance(e, ToolCallReady) and e.id == "call_b" for e in events)


def test_a_cut_stream_does_not_repair_a_prefix_that_looks_closable() -> None:
    _, result = decode(chunk(tc(0, "call_a", "f", '{"a": {"b": 1}')))
    assert result.choices[0].tool_calls == ()
    assert [c.id for c in result.choices[0].incomplete_tool_calls] == ["call_a"]


def test_finish_reason_length_leaves_a_truncated_call_incomplete() -> None:
    _, result = decode(chunk(tc(0, "call_a", "f", '{"a": {"b": 1}')), chunk(finish="length"), DONE)
    assert result.choices[0].tool_calls == ()
    assert [c.id for c in result.choices[0].incomplete_tool_calls] == ["call_a"]
    assert result.choices[0].finish_reason == "length"


def test_error_event_after_200_becomes_a_typed_error() -> None:
    error = {"error": {"message": "boom", "type": "server_error", "code": "internal"}}
    events, result = decode(
        chunk(tc(0, "call_a", "f", '{"a": ')),
        b"event: error\ndata: " + json.dumps(error).encode() + b"\n\n",
    )
    assert isinstance(result.error, StreamErrorEvent)
    assert result.error.message == "boom" and result.error.code == "internal"
    assert result.choices[0].tool_calls == ()
    assert [c.id for c in result.choices[0].incomplete_tool_calls] == ["call_a"]
    assert isinstance(events[-1], StreamFailed)


def test_more_arguments_after_a_call_is_complete_is_a_protocol_error() -> None:
    _, result = decode(chunk(tc(0, "call_a", "f", '{"a": 1}')), chunk(tc(0, args='{"b": 2}')), DONE)
    assert isinstance(result.error, RemoteProtocolError)
    assert "already complete" in result.error.message


def test_malformed_chunk_json_is_a_protocol_error_with_the_raw_text() -> None:
    _, result = decode(chunk(tc(0, "call_a", "f", '{"a": ')), b"data: {not json\n\n", DONE)
    assert isinstance(result.error, RemoteProtocolError)
    assert result.error.raw == "{not json"
    assert result.choices[0].tool_calls == ()


def test_partial_values_grow_with_each_delta() -> None:
    events, _ = decode(
        chunk(tc(0, "call_a", "write", "")),
        chunk(tc(0, args='{"path": "a.py", "con')),
        chunk(tc(0, args='tent": "print(1)\\nprint')),
        chunk(tc(0, args='(2)", "mode": 7')),
        chunk(tc(0, args="55}")),
        chunk(finish="tool_calls"),
        DONE,
    )
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    seen = [dict(d.partial) for d in deltas]  # copied: the view is live
    assert seen == [
        {"path": "a.py"},
        {"path": "a.py", "content": "print(1)\nprint"},
        {"path": "a.py", "content": "print(1)\nprint(2)"},
        {"path": "a.py", "content": "print(1)\nprint(2)", "mode": 755},
    ]
    # An older delta read after a newer one still shows its own moment.
    assert deltas[1].partial == {"path": "a.py", "content": "print(1)\nprint"}


def test_finish_events_are_normalized() -> None:
    events, result = decode(chunk(tc(0, "c", "f", "{}")), chunk(finish="function_call"), DONE)
    finish = [e for e in events if isinstance(e, ChoiceFinished)]
    assert [(f.reason, f.raw_reason) for f in finish] == [("tool_calls", "function_call")]
    assert result.choices[0].finish_reason == "tool_calls"


BIG = 123456789012345678901234567890


def test_big_integers_in_streamed_arguments_stay_exact() -> None:
    _, result = decode(
        chunk(tc(0, "call_a", "f", '{"id": 1234567890123456')),
        chunk(tc(0, args='78901234567890, "neg": -9223372036854775809}')),
        chunk(finish="tool_calls"),
        DONE,
    )
    assert calls(result) == [("call_a", "f", {"id": BIG, "neg": -9223372036854775809})]


def test_big_integers_in_object_arguments_stay_exact() -> None:
    _, result = decode(chunk(tc(0, "call_a", "f", {"id": BIG})), chunk(finish="tool_calls"), DONE)
    assert calls(result) == [("call_a", "f", {"id": BIG})]
    line = json.dumps(
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [{"functionCall": {"name": "g", "args": {"id": BIG}}}],
                    },
                    "finishReason": "STOP",
                }
            ]
        }
    )
    _, result = decode(b"data: " + line.encode() + b"\r\n\r\n", dialect="gemini")
    assert [c.arguments for c in result.choices[0].tool_calls] == [{"id": BIG}]


def test_a_delta_built_on_the_hot_path_is_the_dataclass_built_the_usual_way() -> None:
    import copy
    import dataclasses
    import pickle

    from toolwire.events import ToolCallDelta, new_tool_call_delta

    fast = new_tool_call_delta(1, 2, "call_1", "get_weather", '{"city"', None, 3)
    usual = ToolCallDelta(
        choice=1, index=2, id="call_1", name="get_weather", delta='{"city"', mark=3
    )
    assert type(fast) is ToolCallDelta
    assert fast == usual and hash(fast) == hash(usual) and repr(fast) == repr(usual)
    assert dataclasses.asdict(fast) == dataclasses.asdict(usual)
    assert pickle.loads(pickle.dumps(fast)) == usual and copy.copy(fast) == usual
    assert (fast.kind, fast.mark, fast.partial) == ("tool_call_delta", 3, {})
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.delta = "x"  # type: ignore[misc]
