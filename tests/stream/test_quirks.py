"""The codecs name the departures from their dialect's reference they notice."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from toolwire.cli import main
from toolwire.stream.decoder import StreamDecoder

from ..conftest import CORPUS, TRACES

NOTICED = {
    "qwen/dashscope_empty_id_and_trailing_empty_delta": ("empty-string id on continuations",),
    "mistral/whole_call_no_index_finish_same_chunk": ("tool call without an index",),
    "anthropic/tool_use_inside_message_start": ("complete blocks inside message_start",),
    "gemini/vertex_partial_args_two_calls": ("arguments as Vertex partialArgs",),
    "cohere/rubyllm_cohere_commanda_weather": ("[DONE] line after the dialect's own end event",),
    "openrouter/supp_openrouter_responses_ends_with_DONE": (
        "[DONE] line after the dialect's own end event",
    ),
    "llamacpp/lcp_named_weather": ("legacy function_call beside tool_calls",),
}


def _quirks(body: bytes, dialect: str, step: int | None = None) -> tuple[str, ...]:
    decoder = StreamDecoder(dialect)
    step = step or len(body)
    for start in range(0, len(body), step):
        decoder.feed(body[start : start + step])
    decoder.close()
    return decoder.quirks


@pytest.mark.parametrize("name", sorted(NOTICED))
def test_recorded_quirks_are_named_at_any_split(name: str) -> None:
    trace = next(t for t in TRACES if t.name == name)
    assert _quirks(trace.body, trace.decoder_api) == NOTICED[name]
    assert _quirks(trace.body, trace.decoder_api, step=1) == NOTICED[name]


def test_a_plain_stream_has_no_quirks() -> None:
    # OpenAI's own chat streams (a few Responses recordings under openai/ had
    # their framing reconstructed with a [DONE] line by the project they come from).
    plain = [t for t in TRACES if t.name.startswith("openai/") and t.dialect == "openai-chat"]
    assert plain
    for trace in plain:
        assert _quirks(trace.body, trace.decoder_api) == (), trace.name


def _chunk(delta: dict[str, object], finish: str | None = None) -> str:
    chunk = {
        "id": "c",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(chunk)}\n\n"


def test_legacy_function_call_beside_tool_calls_and_object_arguments() -> None:
    body = (
        _chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}
                ],
                "function_call": {"name": "f", "arguments": "{}"},
            }
        )
        + _chunk(
            {
                "tool_calls": [
                    {"index": 1, "id": "b", "function": {"name": "g", "arguments": {"x": 1}}}
                ]
            }
        )
        + _chunk({}, "tool_calls")
        + "data: [DONE]\n\n"
    ).encode()
    assert _quirks(body, "openai-chat") == (
        "arguments as a JSON object",
        "legacy function_call beside tool_calls",
    )


def test_inspect_prints_the_quirks() -> None:
    path = CORPUS / "qwen" / "dashscope_empty_id_and_trailing_empty_delta.sse"
    result = CliRunner().invoke(main, ["inspect", str(path)])
    assert "quirks: empty-string id on continuations" in result.output
