"""vLLM's and SGLang's tool parsers under speculative decoding: the whole
arguments repeated at the end of a call (vLLM #51697: the finalizer appends
what it thinks is unstreamed, ``{"city": "X"}{"city": "X"}``), and one call's
rest sent under the next index (vLLM PR #37070, SGLang's reports). Handled
where unambiguous; two genuinely parallel calls are never merged."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolwire import StreamDecoder
from toolwire.stream._repair import parse_arguments
from toolwire.types import StreamResult

WHOLE = '{"city": "Paris"}'


def chunk(tool_calls: list[dict[str, Any]] | None, finish: str | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {} if tool_calls is None else {"tool_calls": tool_calls}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "model": "Qwen/Qwen3-Coder",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def opened(index: int, call_id: str, name: str, args: str = "") -> dict[str, Any]:
    function = {"name": name, "arguments": args}
    return {"index": index, "id": call_id, "type": "function", "function": function}


def more(index: int, args: str) -> dict[str, Any]:
    return {"index": index, "function": {"arguments": args}}


def decode(*chunks: dict[str, Any]) -> StreamResult:
    decoder = StreamDecoder("openai-chat")
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    for i in range(0, len(body), 7):  # small reads: fragments cross every boundary
        decoder.feed(body[i : i + 7].encode())
    decoder.close()
    return decoder.result()


def calls(result: StreamResult) -> list[tuple[str, dict[str, Any], bool]]:
    return [(c.name, c.arguments, c.repaired) for c in result.tool_calls]


def test_the_whole_arguments_again_after_a_complete_call_are_a_repeat() -> None:
    result = decode(
        chunk([opened(0, "call_1", "get_weather")]),
        chunk([more(0, '{"city": ')]),
        chunk([more(0, '"Paris"}')]),
        chunk([more(0, WHOLE)]),  # the finalizer's "unstreamed" remainder
        chunk(None, "tool_calls"),
    )
    assert result.error is None
    assert calls(result) == [("get_weather", {"city": "Paris"}, False)]


def test_the_whole_arguments_again_in_the_last_delta_are_one_object() -> None:
    result = decode(
        chunk([opened(0, "call_1", "get_weather", '{"city": ')]),
        chunk([more(0, '"Paris"}' + WHOLE)]),
        chunk(None, "tool_calls"),
    )
    assert calls(result) == [("get_weather", {"city": "Paris"}, True)]


def test_two_different_objects_are_not_one() -> None:
    result = decode(
        chunk([opened(0, "call_1", "get_weather", '{"city": "Paris"}{"city": "Rome"}')]),
        chunk(None, "tool_calls"),
    )
    assert result.tool_calls == ()
    (invalid,) = result.choices[0].invalid_tool_calls
    assert "unexpected data" in invalid.error


def test_more_text_after_a_complete_call_is_still_an_error() -> None:
    result = decode(
        chunk([opened(0, "call_1", "get_weather", WHOLE)]),
        chunk([more(0, '{"city": "Rome"}')]),
        chunk(None, "tool_calls"),
    )
    assert result.error is not None or result.tool_calls == ()


def test_one_call_split_across_two_indices_is_one_call() -> None:
    result = decode(
        chunk([opened(0, "call_1", "get_weather", '{"city": "Pa')]),
        chunk([more(1, 'ris", "unit": ')]),  # the rest, under the next index
        chunk([more(1, '"C"}')]),
        chunk(None, "tool_calls"),
    )
    assert calls(result) == [("get_weather", {"city": "Paris", "unit": "C"}, False)]
    assert result.choices[0].invalid_tool_calls == ()


def test_parallel_calls_are_never_merged() -> None:
    interleaved = decode(
        chunk([opened(0, "call_1", "get_weather", '{"city": "Pa')]),
        chunk([opened(1, "call_2", "get_time", '{"tz": "UTC"}')]),  # its own id and name
        chunk([more(0, 'ris"}')]),
        chunk(None, "tool_calls"),
    )
    assert calls(interleaved) == [
        ("get_weather", {"city": "Paris"}, False),
        ("get_time", {"tz": "UTC"}, False),
    ]
    # A new index that opens its own object stays its own call (its name may come later).
    nameless = decode(
        chunk([opened(0, "call_1", "get_weather", '{"city": "Pa')]),
        chunk([more(1, '{"tz": "UTC"}')]),
        chunk(None, "tool_calls"),
    )
    assert len(nameless.tool_calls) + len(nameless.choices[0].invalid_tool_calls) == 2


def test_a_stray_piece_after_a_complete_call_is_not_merged() -> None:
    result = decode(
        chunk([opened(0, "call_1", "get_weather", WHOLE)]),
        chunk([more(1, '"stray"')]),
        chunk(None, "tool_calls"),
    )
    assert calls(result) == [("get_weather", {"city": "Paris"}, False)]
    (stray,) = result.choices[0].invalid_tool_calls
    assert stray.name == ""


@pytest.mark.parametrize(
    ("text", "value", "repaired"),
    [
        (WHOLE + WHOLE, {"city": "Paris"}, True),
        (" " + WHOLE + WHOLE + "\n", {"city": "Paris"}, True),
        ("{}{}", {}, True),
        (WHOLE, {"city": "Paris"}, False),
    ],
)
def test_the_repair_of_an_object_written_twice(text: str, value: Any, repaired: bool) -> None:
    assert parse_arguments(text, at_end=True) == (value, repaired)
