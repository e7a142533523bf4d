"""Media the model makes is a ``PartReceived`` event as it arrives, over
constructed streams (Gemini ``inlineData``, a Responses
``image_generation_call``), and the same part is on the answer."""

from __future__ import annotations

import base64
import json

import toolwire
from toolwire import PartReceived, StreamDecoder

PNG = b"\x89PNG\r\n\x1a\n" + b"drawn" * 8
B64 = base64.b64encode(PNG).decode()
IMAGE = toolwire.Image.from_bytes(PNG, media_type="image/png")


def sse(*payloads: dict[str, object], named: bool = False) -> bytes:
    out = b""
    for payload in payloads:
        event = f"event: {payload['type']}\n" if named else ""
        out += (event + "data: " + json.dumps(payload) + "\n\n").encode()
    return out


def decode(dialect: str, body: bytes) -> list[toolwire.events.Event]:
    decoder = StreamDecoder(dialect)
    events = [*decoder.feed(body), *decoder.close()]
    assert decoder.result().error is None
    return events


def test_a_gemini_inline_image_is_an_event_between_the_text_and_the_finish() -> None:
    parts = [{"text": "Here it is."}, {"inlineData": {"mimeType": "image/png", "data": B64}}]
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 7},
    }
    events = decode("gemini", sse(chunk))
    kinds = [e.kind for e in events]
    assert kinds.index("text_delta") < kinds.index("part_received") < kinds.index("choice_finished")
    (received,) = [e for e in events if isinstance(e, PartReceived)]
    assert received.part == IMAGE and received.choice == 0


def test_a_responses_generated_image_is_an_event() -> None:
    item = {
        "type": "image_generation_call",
        "id": "ig_1",
        "status": "completed",
        "output_format": "png",
        "result": B64,
    }
    response = {"id": "resp_1", "object": "response", "model": "gpt-5", "status": "completed"}
    body = sse(
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**item, "result": None}},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {**response, "output": [item]}},
        named=True,
    )
    events = decode("openai-responses", body)
    received = [e for e in events if isinstance(e, PartReceived)]
    assert [e.part for e in received] == [IMAGE]


def test_state_that_is_not_media_gives_no_event() -> None:
    chunk = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [{"text": "ok", "thoughtSignature": "c2ln"}],
                },
                "finishReason": "STOP",
            }
        ]
    }
    events = decode("gemini", sse(chunk))
    assert not [e for e in events if isinstance(e, PartReceived)]
