"""Parts in Ollama's native ``/api/chat`` (a message's ``images``) and in
Cohere v2 (``image_url`` blocks, tool results as documents): in prompts,
in tool results (a user message after them, naming the call), and kinds
neither takes refused before anything is sent."""

from __future__ import annotations

import base64
import json

import pytest

import toolwire
from toolwire import ContentLimitExceeded, ContentNotSupported, StreamDecoder
from toolwire.errors import UsageError
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from toolwire.stream.codecs import cohere_request, ollama_request, wire_dialect
from toolwire.types import ToolCall

PNG = b"\x89PNG\r\n\x1a\n" + b"chart" * 4
JPEG = b"\xff\xd8\xff\xe0" + b"photo" * 4
IMAGE = toolwire.Image.from_bytes(PNG, media_type="image/png")
PHOTO = toolwire.Image.from_bytes(JPEG, media_type="image/jpeg")
SHOT = toolwire.Image.from_bytes(PNG + b"shot", media_type="image/png")
PDF = toolwire.Document.from_bytes(b"%PDF-1.7", media_type="application/pdf")
WAV = toolwire.Audio.from_bytes(b"RIFF0000WAVE", media_type="audio/wav")


def b64(part: toolwire.Image) -> str:
    return base64.b64encode(part.data or b"").decode()


def conversation() -> list[Message]:
    call = ToolCall(id="call_1", name="screenshot", arguments={"url": "https://a.example"})
    return [
        SystemMessage("You look at pictures."),
        UserMessage(content=["Compare these.", IMAGE, "and", PHOTO]),
        AssistantMessage(text="", reasoning="I need the page.", tool_calls=(call,)),
        ToolResultMessage("call_1", "screenshot", "the page", parts=(SHOT, "the page")),
        UserMessage("So?"),
    ]


def test_ollama_sends_images_beside_the_text_and_after_the_tool_results() -> None:
    body = ollama_request.encode_request(
        model="llava", messages=conversation(), max_tokens=50, temperature=0
    )
    system, user, assistant, result, follow_up, last = body["messages"]
    assert system == {"role": "system", "content": "You look at pictures."}
    assert user == {
        "role": "user",
        "content": "Compare these.\nand",
        "images": [b64(IMAGE), b64(PHOTO)],
    }
    assert assistant == {
        "role": "assistant",
        "content": "",
        "thinking": "I need the page.",
        "tool_calls": [
            {"function": {"name": "screenshot", "arguments": {"url": "https://a.example"}}}
        ],
    }
    assert result == {"role": "tool", "tool_name": "screenshot", "content": "the page"}
    assert follow_up == {
        "role": "user",
        "content": "The result of the screenshot call call_1: image 1",
        "images": [b64(SHOT)],
    }
    assert last == {"role": "user", "content": "So?"}
    assert body["options"] == {"num_predict": 50, "temperature": 0}
    assert body["stream"] is True
    # A text-only user message has no images member.
    plain = ollama_request.encode_request(model="m", messages=[UserMessage("hi")])
    assert plain["messages"] == [{"role": "user", "content": "hi"}]


def test_cohere_sends_image_url_blocks_and_results_as_documents() -> None:
    body = cohere_request.encode_request(model="command-a-vision-07-2025", messages=conversation())
    system, user, assistant, result, follow_up, last = body["messages"]
    assert system == {"role": "system", "content": "You look at pictures."}
    assert user["content"] == [
        {"type": "text", "text": "Compare these."},
        {"type": "image_url", "image_url": {"url": IMAGE.data_url()}},
        {"type": "text", "text": "and"},
        {"type": "image_url", "image_url": {"url": PHOTO.data_url()}},
    ]
    assert assistant == {
        "role": "assistant",
        "tool_plan": "I need the page.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "screenshot", "arguments": '{"url":"https://a.example"}'},
            }
        ],
    }
    assert result == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": [{"type": "document", "document": {"data": "the page"}}],
    }
    assert follow_up == {
        "role": "user",
        "content": [
            {"type": "text", "text": "The result of the screenshot call call_1:"},
            {"type": "image_url", "image_url": {"url": SHOT.data_url()}},
        ],
    }
    assert last == {"role": "user", "content": "So?"}
    # Cohere fetches http(s) image URLs itself: the URL is sent as it is.
    remote = toolwire.Image.from_url("https://example.com/chart.png")
    sent = cohere_request.encode_request(model="m", messages=[UserMessage(content=[remote])])
    assert sent["messages"][0]["content"] == [
        {"type": "image_url", "image_url": {"url": "https://example.com/chart.png"}}
    ]


@pytest.mark.parametrize("encode", [ollama_request.encode_request, cohere_request.encode_request])
@pytest.mark.parametrize("part", [PDF, WAV], ids=["document", "audio"])
def test_documents_and_audio_are_refused_in_both_places(encode: object, part: object) -> None:
    for message in (
        UserMessage(content=["read this", part]),  # type: ignore[list-item]
        ToolResultMessage("c1", "t", "", parts=(part,)),  # type: ignore[arg-type]
    ):
        with pytest.raises(ContentNotSupported, match="does not take") as got:
            encode(model="m", messages=[message])  # type: ignore[operator]
        assert got.value.part == f"{part.kind} {part.media_type}"  # type: ignore[attr-defined]


def test_ollama_refuses_urls_and_types_it_does_not_read() -> None:
    remote = toolwire.Image.from_url("https://example.com/chart.png")
    with pytest.raises(ContentNotSupported, match="ollama-ndjson does not fetch image"):
        ollama_request.encode_request(model="m", messages=[UserMessage(content=[remote])])
    gif = toolwire.Image.from_bytes(b"GIF89a", media_type="image/gif")
    with pytest.raises(ContentNotSupported, match="takes image/jpeg, image/png"):
        ollama_request.encode_request(model="m", messages=[UserMessage(content=[gif])])


def test_cohere_limits_are_checked_before_sending() -> None:
    with pytest.raises(ContentLimitExceeded, match=r"images_per_request limit is 20, .* 21"):
        cohere_request.encode_request(model="m", messages=[UserMessage(content=[IMAGE] * 21)])


def test_tool_choices_each_dialect_has_and_the_ones_it_lacks() -> None:
    tools = [ollama_request.tool_schema("screenshot", "A page.", {"type": "object"})]
    ask = [UserMessage("hi")]
    assert "tools" not in ollama_request.encode_request(
        model="m", messages=ask, tools=tools, tool_choice="none"
    )
    with pytest.raises(UsageError, match="ollama-ndjson has no tool choice"):
        ollama_request.encode_request(model="m", messages=ask, tools=tools, tool_choice="required")
    body = cohere_request.encode_request(
        model="m", messages=ask, tools=tools, tool_choice="required"
    )
    assert body["tool_choice"] == "REQUIRED" and body["tools"] == tools
    with pytest.raises(UsageError, match="cannot force one tool"):
        cohere_request.encode_request(
            model="m", messages=ask, tools=tools, tool_choice={"name": "screenshot"}
        )


def test_the_dialects_write_requests_from_what_they_decode() -> None:
    # Ollama's answer, decoded, goes back as the next request's history.
    line = {
        "model": "llava",
        "message": {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "screenshot", "arguments": {"url": "u"}}}],
        },
        "done": True,
        "done_reason": "stop",
    }
    decoder = StreamDecoder("ollama-ndjson")
    decoder.feed((json.dumps(line) + "\n").encode())
    decoder.close()
    (call,) = decoder.result().tool_calls
    history: list[Message] = [
        UserMessage(content=["Look.", IMAGE]),
        AssistantMessage(tool_calls=(call,)),
        ToolResultMessage(call.id, call.name, "", parts=(SHOT,)),
    ]
    dialect = wire_dialect("ollama-ndjson")
    assert dialect.encode_request is not None and dialect.request_path is not None
    body = dialect.encode_request(model="llava", messages=history)
    assert dialect.request_path("llava", True) == "/api/chat"
    assert body["messages"][1]["tool_calls"][0]["function"]["arguments"] == {"url": "u"}
    assert body["messages"][2]["content"] == "(the result's images follow in the next message)"
    assert body["messages"][3]["images"] == [b64(SHOT)]
    assert wire_dialect("cohere-v2").request_path("m", True) == "/v2/chat"  # type: ignore[misc]
