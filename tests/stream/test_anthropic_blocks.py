"""Every content block and delta type of anthropic-sdk-python's beta unions
that is kept goes back in the next request, in its place (where each type
lands is ``test_nothing_dropped``'s table). A type a future SDK adds fails
here until the codec handles it.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.types import beta

from toolwire import Anthropic, AssistantMessage, StreamDecoder, ToolResultMessage, UserMessage
from toolwire.stream.codecs.request import interleave

from .test_nothing_dropped import union_types

BLOCKS = union_types(beta.BetaContentBlock)
DELTAS = union_types(beta.BetaRawContentBlockDelta)


def sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def stream(*blocks: tuple[dict[str, Any], list[dict[str, Any]]]) -> bytes:
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "m", "content": []}}
    ]
    for index, (start, deltas) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}})
    events.append({"type": "message_stop"})
    return sse(*events)


def decode(body: bytes) -> Any:
    decoder = StreamDecoder("anthropic-messages")
    decoder.feed(body)
    decoder.close()
    result = decoder.result()
    assert result.error is None, result.error
    return result


def sent_back(result: Any) -> list[dict[str, Any]]:
    assistant = AssistantMessage.from_choice(result.choices[0])
    history: list[Any] = [UserMessage("q"), assistant]
    history += [ToolResultMessage(c.id, c.name, "ok") for c in result.tool_calls]
    body = Anthropic(api_key="k").build_request(model="m", messages=history).json
    blocks: list[dict[str, Any]] = body["messages"][1]["content"]
    return blocks


def block_of(kind: str) -> dict[str, Any]:
    if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
        return {"type": kind, "id": f"{kind}_1", "name": "f", "input": {"a": 1}}
    if kind == "text":
        return {"type": "text", "text": "hello"}
    if kind == "thinking":
        return {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": "EmwKAhgB"}
    return {"type": kind, "payload": {"opaque": [1, 2]}}


@pytest.mark.parametrize("kind", BLOCKS)
def test_every_sdk_content_block_lands_and_goes_back(kind: str) -> None:
    result = decode(stream((block_of(kind), [])))
    choice = result.choices[0]
    if kind == "text":
        assert choice.text == "hello"
    elif kind == "tool_use":
        assert [c.arguments for c in choice.tool_calls] == [{"a": 1}]
    else:
        assert kind in [item["type"] for item in choice.provider_state]
    if kind in ("server_tool_use", "mcp_tool_use"):
        assert [c.type for c in choice.server_tool_calls] == [kind]
    assert [b["type"] for b in sent_back(result)] == [kind]
    if kind not in ("text", "tool_use", "thinking"):
        assert sent_back(result) == [block_of(kind)]


DELTA_CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "text_delta": ({"type": "text", "text": ""}, {"type": "text_delta", "text": "hi"}),
    "input_json_delta": (
        {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
        {"type": "input_json_delta", "partial_json": '{"a": 1}'},
    ),
    "citations_delta": (
        {"type": "text", "text": "x", "citations": []},
        {"type": "citations_delta", "citation": {"type": "char_location", "cited_text": "x"}},
    ),
    "thinking_delta": (
        {"type": "thinking", "thinking": "", "signature": ""},
        {"type": "thinking_delta", "thinking": "hmm"},
    ),
    "signature_delta": (
        {"type": "thinking", "thinking": "", "signature": ""},
        {"type": "signature_delta", "signature": "EqQB"},
    ),
    "compaction_delta": (
        {"type": "compaction", "content": None},
        {"type": "compaction_delta", "content": "summary", "encrypted_content": "opaque"},
    ),
}


@pytest.mark.parametrize("kind", DELTAS)
def test_every_sdk_delta_lands_and_goes_back(kind: str) -> None:
    assert kind in DELTA_CASES, f"{kind}: a delta type the codec does not handle yet"
    start, delta = DELTA_CASES[kind]
    # A text delta after the block makes citations and thinking land somewhere visible.
    result = decode(stream((start, [delta]), ({"type": "text", "text": ""}, [])))
    blocks = sent_back(result)
    if kind == "text_delta":
        assert blocks == [{"type": "text", "text": "hi"}]
    elif kind == "input_json_delta":
        assert blocks[0]["input"] == {"a": 1}
    elif kind == "citations_delta":
        assert blocks == [{"type": "text", "text": "x", "citations": [delta["citation"]]}]
    elif kind == "thinking_delta":
        assert blocks[0]["thinking"] == "hmm"
    elif kind == "signature_delta":
        assert blocks[0]["signature"] == "EqQB"
    else:
        assert blocks == [
            {"type": "compaction", "content": "summary", "encrypted_content": "opaque"}
        ]


def test_cited_text_goes_back_as_its_own_block_between_the_others() -> None:
    citation = {"type": "web_search_result_location", "url": "u", "cited_text": "c"}
    result = decode(
        stream(
            ({"type": "text", "text": "Searching. "}, []),
            ({"type": "web_search_tool_result", "tool_use_id": "s", "content": []}, []),
            (
                {"type": "text", "text": "", "citations": []},
                [
                    {"type": "citations_delta", "citation": citation},
                    {"type": "text_delta", "text": "Rain."},
                ],
            ),
            ({"type": "text", "text": " Anything else?"}, []),
        )
    )
    assert result.choices[0].text == "Searching. Rain. Anything else?"
    assert sent_back(result) == [
        {"type": "text", "text": "Searching. "},
        {"type": "web_search_tool_result", "tool_use_id": "s", "content": []},
        {"type": "text", "text": "Rain.", "citations": [citation]},
        {"type": "text", "text": " Anything else?"},
    ]


def test_interleave_keeps_the_stream_order() -> None:
    items = [
        {"type": "a"},  # before everything
        {"type": "b", "after_tool_calls": 0, "after_text": 3},
        {"type": "c", "after_tool_calls": 1, "after_text": 5},
        {"type": "d", "after_tool_calls": 2},  # an older record: after all the text
    ]
    assert interleave("abcdefg", ["call0", "call1"], items) == [
        ("item", {"type": "a"}),
        ("text", "abc"),
        ("item", {"type": "b"}),
        ("text", "de"),
        ("call", "call0"),
        ("item", {"type": "c"}),
        ("text", "fg"),
        ("call", "call1"),
        ("item", {"type": "d"}),
    ]
    # Without items, the text comes before the calls, as the providers send it.
    assert interleave("hi", ["call0"], []) == [("text", "hi"), ("call", "call0")]


def test_another_dialects_compaction_item_is_not_sent() -> None:
    responses_item = {"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque"}
    ours = {"type": "compaction", "content": "summary", "encrypted_content": "opaque"}
    assistant = AssistantMessage(text="hi", provider_state=(responses_item, ours))
    body = (
        Anthropic(api_key="k").build_request(model="m", messages=[UserMessage("q"), assistant]).json
    )
    assert body["messages"][1]["content"] == [ours, {"type": "text", "text": "hi"}]
