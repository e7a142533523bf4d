"""Images, documents and audio through the bridge: a part in a served
dialect's request reaches the upstream in the upstream's own shape, bytes
unchanged, in prompts and in tool results; malformed media are refused with
400 in the served dialect, before anything is sent upstream."""

from __future__ import annotations

import base64
from typing import Any

import anthropic
import httpx
import openai
import pytest

from toolwire import Audio, Document, Image
from toolwire.bridge import BridgeServer
from toolwire.errors import BadRequest
from toolwire.messages import ToolResultMessage, UserMessage
from toolwire.stream.codecs.bridge import read_request
from toolwire.stream.jsonio import dumps_bytes
from toolwire.testing import EmulationServer, Scenario

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
B64 = base64.b64encode(PNG).decode()
PDF = b"%PDF-1.7\n" + bytes(range(200))
WAV = b"RIFF" + bytes(64)
DATA_URL = f"data:image/png;base64,{B64}"
LOOKED = Scenario.from_dict(
    {"name": "bridge-media", "turns": [{"text": "Taking it."}, {"text": "A bar chart."}]}
)
SHOT = {"name": "shot", "description": "A screenshot.", "input_schema": {"type": "object"}}


def _parts(value: Any) -> list[dict[str, Any]]:
    """Every block of a request body that carries media, in order."""
    found: list[dict[str, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop(0)
        if isinstance(item, list):
            stack[:0] = item
        elif isinstance(item, dict):
            if item.get("type") in ("image_url", "image") or "inlineData" in item:
                found.append(item)
            else:
                stack[:0] = list(item.values())
    return found


def test_anthropic_image_blocks_reach_a_chat_upstream_as_data_urls() -> None:
    """In the prompt as ``image_url``; in a tool result (Chat tool messages
    are text only) in the user message after the results, naming the call."""
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64}}
    with EmulationServer(LOOKED) as upstream:
        target = f"openai-chat:m@{upstream.url_for('openai-chat')}"
        with BridgeServer({"claude-bridged": target}, serve="anthropic-messages") as bridge:
            client = anthropic.Anthropic(
                base_url=bridge.url_for("anthropic-messages"), api_key="k", max_retries=0
            )
            answer = client.messages.create(
                model="claude-bridged",
                max_tokens=64,
                tools=[SHOT],  # type: ignore[list-item]
                messages=[
                    {"role": "user", "content": [{"type": "text", "text": "Look."}, image]},
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t1", "name": "shot", "input": {}}],
                    },
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": "t1",
                                "content": [{"type": "text", "text": "after"}, image],
                            }
                        ],
                    },
                ],  # type: ignore[list-item]
            )
        (asked,) = upstream.requests
    assert answer.content[0].type == "text" and answer.content[0].text == "A bar chart."
    roles = [m["role"] for m in asked["messages"]]
    assert roles == ["user", "assistant", "tool", "user"]
    assert asked["messages"][2]["content"] == "after"
    assert "t1" in asked["messages"][3]["content"][0]["text"]
    urls = [p["image_url"]["url"] for p in _parts(asked["messages"])]
    assert urls == [DATA_URL, DATA_URL]


def test_a_chat_image_reaches_an_anthropic_upstream_as_a_base64_block() -> None:
    with EmulationServer(LOOKED) as upstream:
        target = f"anthropic-messages:claude@{upstream.url_for('anthropic-messages')}"
        with BridgeServer({"gpt-bridged": target}, serve="openai-chat") as bridge:
            client = openai.OpenAI(
                base_url=bridge.url_for("openai-chat"), api_key="k", max_retries=0
            )
            answer = client.chat.completions.create(
                model="gpt-bridged",
                messages=[
                    {"role": "user", "content": "Take a screenshot."},
                    {"role": "assistant", "content": "Taking it."},
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "And this one?"},
                            {"type": "image_url", "image_url": {"url": DATA_URL}},
                            {"type": "image_url", "image_url": {"url": "https://x.test/c.png"}},
                        ],
                    },
                ],
            )
        (asked,) = upstream.requests
    assert answer.choices[0].message.content == "A bar chart."
    sources = [p["source"] for p in _parts(asked["messages"])]
    assert sources == [
        {"type": "base64", "media_type": "image/png", "data": B64},
        {"type": "url", "url": "https://x.test/c.png"},
    ]


def test_a_responses_image_and_image_tool_output_reach_a_gemini_upstream() -> None:
    output = [
        {"type": "input_text", "text": "after"},
        {"type": "input_image", "image_url": DATA_URL},
    ]
    with EmulationServer(LOOKED) as upstream:
        target = f"gemini:gemini-3-flash@{upstream.url_for('gemini')}"
        with BridgeServer({"gpt-bridged": target}, serve="openai-responses") as bridge:
            client = openai.OpenAI(
                base_url=bridge.url_for("openai-responses"), api_key="k", max_retries=0
            )
            answer = client.responses.create(
                model="gpt-bridged",
                input=[
                    {
                        "role": "user",
                        "content": [
                            {"type": "input_text", "text": "Look."},
                            {"type": "input_image", "image_url": DATA_URL, "detail": "auto"},
                        ],
                    },
                    {"type": "function_call", "call_id": "c1", "name": "shot", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "c1", "output": output},
                ],  # type: ignore[list-item]
            )
        (asked,) = upstream.requests
    assert answer.output_text == "A bar chart."
    inline = [p["inlineData"] for p in _parts(asked["contents"])]
    assert inline == [{"mimeType": "image/png", "data": B64}] * 2


def test_a_gemini_inline_image_reaches_an_anthropic_upstream() -> None:
    body = {
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"text": "Look."},
                    {"inlineData": {"mimeType": "image/png", "data": B64}},
                ],
            },
            {"role": "model", "parts": [{"text": "Taking it."}]},
            {"role": "user", "parts": [{"text": "Well?"}]},
        ]
    }
    with EmulationServer(LOOKED) as upstream:
        target = f"anthropic-messages:claude@{upstream.url_for('anthropic-messages')}"
        with BridgeServer({"gemini-bridged": target}, serve="gemini") as bridge:
            url = bridge.url_for("gemini") + "/models/gemini-bridged:generateContent"
            reply = httpx.post(url, json=body, headers={"x-goog-api-key": "k"}, timeout=30)
        (asked,) = upstream.requests
    assert reply.status_code == 200, reply.text
    sources = [p["source"] for p in _parts(asked["messages"])]
    assert sources == [{"type": "base64", "media_type": "image/png", "data": B64}]


def test_a_malformed_image_is_refused_in_the_served_shape_and_nothing_is_sent() -> None:
    broken = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "@@"},
    }
    with EmulationServer(LOOKED) as upstream:
        target = f"openai-chat:m@{upstream.url_for('openai-chat')}"
        with BridgeServer({"claude-bridged": target}, serve="anthropic-messages") as bridge:
            client = anthropic.Anthropic(
                base_url=bridge.url_for("anthropic-messages"), api_key="k", max_retries=0
            )
            with pytest.raises(anthropic.BadRequestError) as raised:
                client.messages.create(
                    model="claude-bridged",
                    max_tokens=64,
                    messages=[{"role": "user", "content": [broken]}],  # type: ignore[list-item]
                )
        assert upstream.requests == []
    assert "messages[0].content[0]" in str(raised.value) and "base64" in str(raised.value)


def _read(dialect: str, body: dict[str, Any]) -> tuple[Any, ...]:
    return read_request(dialect, dumps_bytes({"model": "m", **body}), None, None).messages


def test_each_dialect_s_media_shapes_read_into_parts() -> None:
    pdf = base64.b64encode(PDF).decode()
    wav = base64.b64encode(WAV).decode()
    chat = _read(
        "openai-chat",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_audio", "input_audio": {"data": wav, "format": "wav"}},
                        {
                            "type": "file",
                            "file": {
                                "file_data": f"data:application/pdf;base64,{pdf}",
                                "filename": "r.pdf",
                            },
                        },
                    ],
                }
            ]
        },
    )
    anthropic_text = _read(
        "anthropic-messages",
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "document", "source": {"type": "text", "data": "plain words"}},
                        {
                            "type": "document",
                            "source": {"type": "url", "url": "https://x.test/a.pdf"},
                        },
                    ],
                }
            ]
        },
    )
    responses = _read(
        "openai-responses",
        {
            "input": [
                {
                    "role": "user",
                    "content": [{"type": "input_file", "file_url": "https://x.test/b.pdf"}],
                }
            ]
        },
    )
    gemini = _read(
        "gemini",
        {
            "contents": [
                {
                    "role": "user",
                    "parts": [
                        {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/c.pdf"}}
                    ],
                }
            ]
        },
    )
    assert chat == (
        UserMessage(
            content=[
                Audio.from_bytes(WAV, media_type="audio/wav"),
                Document.from_bytes(PDF, media_type="application/pdf", name="r.pdf"),
            ]
        ),
    )
    assert anthropic_text == (
        UserMessage(
            content=[
                Document.from_bytes(b"plain words", media_type="text/plain"),
                Document.from_url("https://x.test/a.pdf"),
            ]
        ),
    )
    assert responses == (
        UserMessage(
            content=[Document.from_url("https://x.test/b.pdf", media_type="application/pdf")]
        ),
    )
    assert gemini == (
        UserMessage(content=[Document(media_type="application/pdf", url="gs://b/c.pdf")]),
    )


def test_a_gemini_function_response_keeps_its_parts() -> None:
    (_, result) = _read(
        "gemini",
        {
            "contents": [
                {"role": "model", "parts": [{"functionCall": {"name": "shot", "args": {}}}]},
                {
                    "role": "user",
                    "parts": [
                        {
                            "functionResponse": {
                                "name": "shot",
                                "response": {"ok": True},
                                "parts": [{"inlineData": {"mimeType": "image/png", "data": B64}}],
                            }
                        }
                    ],
                },
            ]
        },
    )
    assert isinstance(result, ToolResultMessage)
    assert result.call_id == "call_shot_0" and result.content == '{"ok":true}'
    assert result.parts == ('{"ok":true}', Image.from_bytes(PNG, media_type="image/png"))


@pytest.mark.parametrize(
    ("dialect", "block", "said"),
    [
        ("anthropic-messages", {"type": "image", "source": "x"}, "source must be an object"),
        (
            "anthropic-messages",
            {"type": "image", "source": {"type": "file", "file_id": "f"}},
            "source.type 'file'",
        ),
        (
            "anthropic-messages",
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/tiff", "data": B64},
            },
            "image/tiff",
        ),
        (
            "anthropic-messages",
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": 7}},
            "must be base64 text",
        ),
        (
            "openai-chat",
            {"type": "image_url", "image_url": {"url": "data:image/png,raw"}},
            "base64 data: URL",
        ),
        ("openai-chat", {"type": "image_url", "image_url": {}}, "needs a URL"),
        ("openai-chat", {"type": "input_audio", "input_audio": "x"}, "must be an object"),
        (
            "openai-chat",
            {"type": "image_url", "image_url": {"url": "ftp://x/y.png"}},
            "must be https://",
        ),
    ],
)
def test_malformed_media_are_bad_requests(dialect: str, block: dict[str, Any], said: str) -> None:
    with pytest.raises(BadRequest, match=r"messages\[0\]\.content\[0\]") as raised:
        _read(dialect, {"messages": [{"role": "user", "content": [block]}]})
    assert said in str(raised.value)
