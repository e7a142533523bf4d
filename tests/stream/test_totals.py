"""Caps hold per response and per process, not only per choice and per call:
many choices, calls spread over choices and text spread over choices all
meet one total, and the responses a process decodes at once share one more."""

from __future__ import annotations

import json

import pytest

from toolwire.errors import RemoteProtocolError
from toolwire.stream import _assembly, _budget, _calls
from toolwire.stream.decoder import StreamDecoder

MIB = 1024 * 1024


def sse(*chunks: dict[str, object]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)


def text(choice: int, content: str) -> dict[str, object]:
    return {"choices": [{"index": choice, "delta": {"content": content}}]}


def call(choice: int, index: int) -> dict[str, object]:
    delta = {
        "tool_calls": [
            {
                "index": index,
                "id": f"c{choice}_{index}",
                "function": {"name": "f", "arguments": "{}"},
            }
        ]
    }
    return {"choices": [{"index": choice, "delta": delta}]}


def test_a_response_has_at_most_128_choices() -> None:
    decoder = StreamDecoder("openai-chat")
    decoder.feed(sse(*(text(i, "x") for i in range(200))))
    assert isinstance(decoder.error, RemoteProtocolError)
    assert "more than 128 choices" in str(decoder.error)


def test_text_spread_over_choices_meets_one_total(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_budget, "MAX_RESPONSE_CHARS", 10_000)
    decoder = StreamDecoder("openai-chat")
    decoder.feed(sse(*(text(i, "x" * 1000) for i in range(16))))  # 1,000 each, 16,000 in all
    assert decoder.error is not None and "more than 10000 characters" in str(decoder.error)


def test_arguments_spread_over_calls_meet_one_total(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_budget, "MAX_RESPONSE_CHARS", 10_000)
    decoder = StreamDecoder("openai-chat")
    chunks = []
    for i in range(20):
        chunks.append(
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": i,
                                    "id": f"c{i}",
                                    "function": {"name": "f", "arguments": '{"a": "'},
                                }
                            ]
                        },
                    }
                ]
            }
        )
        chunks.append(
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [{"index": i, "function": {"arguments": "y" * 900}}]
                        },
                    }
                ]
            }
        )
    decoder.feed(sse(*chunks))
    assert decoder.error is not None and "more than 10000 characters" in str(decoder.error)


def test_calls_spread_over_choices_meet_one_total(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_assembly, "MAX_TOOL_CALLS", 10)
    decoder = StreamDecoder("openai-chat")
    decoder.feed(sse(*(call(c, i) for c in range(4) for i in range(3))))  # 12 calls
    assert decoder.error is not None
    assert "more than 10 tool calls, all choices together" in str(decoder.error)


def test_the_responses_of_a_process_share_one_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_budget, "MAX_PROCESS_CHARS", 4 * MIB + _budget.process_held())
    first = StreamDecoder("openai-chat")
    first.feed(sse(*(text(0, "x" * 100_000) for _ in range(25))))  # 2.5 MB
    assert first.error is None
    second = StreamDecoder("openai-chat")
    second.feed(sse(*(text(0, "z" * 100_000) for _ in range(15))))
    assert second.error is not None and "in this process" in str(second.error)
    held = _budget.process_held()
    first.feed(b"data: [DONE]\n\n")
    first.close()
    assert _budget.process_held() < held  # given back when decoding ended
    third = StreamDecoder("openai-chat")
    third.feed(sse(*(text(0, "z" * 100_000) for _ in range(15))))
    assert third.error is None
    third.close()


def _anthropic_deltas(fragments: list[str]) -> bytes:
    """A call whose argument deltas have the exact shape the short path reads."""

    def event(name: str, obj: dict[str, object]) -> bytes:
        return f"event: {name}\ndata: {json.dumps(obj, separators=(',', ':'))}\n\n".encode()

    block = {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}
    out = [
        event("message_start", {"type": "message_start", "message": {"id": "msg_1"}}),
        event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
    ]
    for fragment in fragments:
        delta = {"type": "input_json_delta", "partial_json": fragment}
        out.append(
            event(
                "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
            )
        )
    out += [
        event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        event("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        event("message_stop", {"type": "message_stop"}),
    ]
    return b"".join(out)


@pytest.mark.parametrize(
    ("cap", "fragments", "outcome"),
    [
        ("call", ['{"a": "', *["xyz12"] * 20, '"}'], "the arguments exceed 40 characters"),
        ("response", ['{"a": "', *["xyz12"] * 20, '"}'], "more than 40 characters"),
        (None, ['{"a": 1}', "x", "y"], "ToolCallReady"),
    ],
)
def test_runs_of_matched_deltas_meet_the_caps_as_the_general_path_does(
    monkeypatch: pytest.MonkeyPatch, cap: str | None, fragments: list[str], outcome: str
) -> None:
    if cap == "call":
        monkeypatch.setattr(_calls, "MAX_ARGUMENTS_CHARS", 40)
    elif cap == "response":
        monkeypatch.setattr(_budget, "MAX_RESPONSE_CHARS", 40)
    body = _anthropic_deltas(fragments)
    seen = []
    for short_path in (True, False):
        decoder = StreamDecoder("anthropic-messages", short_path=short_path)
        events = decoder.feed(body) + decoder.close()
        seen.append((repr(events), repr(decoder.result()), decoder.short_path_deltas))
    (fast, fast_result, taken), (slow, slow_result, untaken) = seen
    assert fast == slow and fast_result == slow_result
    assert taken >= 1 and untaken == 0
    assert outcome in fast + fast_result
