"""Provider state goes back to the dialect that decoded it, and to no other.

Item types repeat across dialects (``compaction`` is an Anthropic block and
a Responses item): each item is tagged with its dialect when it is decoded,
and a dialect sends back its own items, and the untagged items recorded
before tags existed.
"""

from __future__ import annotations

import json
from typing import Any

from toolwire import StreamDecoder
from toolwire.messages import AssistantMessage, Message, UserMessage
from toolwire.stream.codecs import anthropic, openai_responses
from toolwire.stream.decoder import decode_response
from toolwire.stream.parts import DIALECT_KEY


def _sse(frames: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {f['type']}\ndata: {json.dumps(f)}\n\n" for f in frames).encode()


ANTHROPIC_COMPACTION = {"type": "compaction", "content": "the story so far"}
RESPONSES_COMPACTION = {"type": "compaction", "id": "cmp_1", "encrypted_content": "opaque"}


def test_items_are_tagged_with_their_dialect_when_streamed() -> None:
    decoder = StreamDecoder("anthropic-messages")
    decoder.feed(
        _sse(
            [
                {"type": "message_start", "message": {"id": "m", "model": "c", "content": []}},
                {"type": "content_block_start", "index": 0, "content_block": ANTHROPIC_COMPACTION},
                {"type": "content_block_stop", "index": 0},
                {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
                {"type": "message_stop"},
            ]
        )
    )
    decoder.close()
    (item,) = decoder.result().choices[0].provider_state
    assert item == {**ANTHROPIC_COMPACTION, DIALECT_KEY: "anthropic-messages"}


def _both_compactions() -> list[Message]:
    """A conversation holding one turn of each dialect (a switch of provider)."""
    anthropic_turn = decode_response(
        "anthropic-messages",
        {"id": "m", "model": "c", "content": [ANTHROPIC_COMPACTION], "stop_reason": "end_turn"},
    )
    responses_turn = decode_response(
        "openai-responses",
        {"id": "r", "model": "g", "status": "completed", "output": [RESPONSES_COMPACTION]},
    )
    return [
        UserMessage("hi"),
        AssistantMessage.from_choice(anthropic_turn.choices[0]),
        UserMessage("again"),
        AssistantMessage.from_choice(responses_turn.choices[0]),
        UserMessage("and again"),
    ]


def test_each_dialect_sends_back_only_its_own_items() -> None:
    messages = _both_compactions()
    _, anthropic_wire = anthropic.encode_messages(messages)
    sent = [b for m in anthropic_wire if m["role"] == "assistant" for b in m["content"]]
    assert sent == [ANTHROPIC_COMPACTION]
    _, responses_wire = openai_responses.encode_input(messages)
    assert [i for i in responses_wire if i.get("type") == "compaction"] == [RESPONSES_COMPACTION]
    assert DIALECT_KEY not in json.dumps([anthropic_wire, responses_wire])


def test_untagged_items_recorded_before_are_still_sent_back() -> None:
    thinking = {"type": "thinking", "thinking": "hm", "signature": "c2ln"}
    old = AssistantMessage(text="ok", provider_state=(thinking,))
    _, wire = anthropic.encode_messages([UserMessage("hi"), old])
    assert wire[-1]["content"][0] == thinking
