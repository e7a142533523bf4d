"""Parts in the dialects beyond the five of the agent test: Gemini
Interactions, Bedrock Invoke (Claude's body), a Responses computer call
answered with a screenshot image."""

from __future__ import annotations

import base64

import pytest

import toolwire
from toolwire.messages import AssistantMessage, ToolResultMessage, UserMessage
from toolwire.stream.codecs import bedrock_invoke, gemini_interactions_request
from toolwire.stream.codecs.openai_responses_request import encode_input
from toolwire.types import ToolCall

PNG = b"\x89PNG\r\n\x1a\n"
B64 = base64.b64encode(PNG).decode()
IMAGE = toolwire.Image.from_bytes(PNG, media_type="image/png")


def test_interactions_user_input_holds_image_content() -> None:
    body = gemini_interactions_request.encode_request(
        model="m", messages=[UserMessage(content=["look", IMAGE])]
    )
    assert body["input"] == [
        {
            "type": "user_input",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image", "data": B64, "mime_type": "image/png"},
            ],
        }
    ]
    with pytest.raises(toolwire.ContentNotSupported, match=r"gemini-interactions .* tool result"):
        gemini_interactions_request.encode_request(
            model="m", messages=[ToolResultMessage("c", "t", "", parts=(IMAGE,))]
        )


def test_bedrock_invoke_sends_claude_image_blocks() -> None:
    body = bedrock_invoke.encode_request(messages=[UserMessage(content=[IMAGE])])
    source = {"type": "base64", "media_type": "image/png", "data": B64}
    assert body["messages"][0]["content"] == [{"type": "image", "source": source}]


def test_a_computer_call_is_answered_with_its_screenshot_image() -> None:
    call = ToolCall(id="cu_1", name="computer", arguments={})
    state = {"type": "call_item", "call_id": "cu_1", "item_type": "computer_call", "item": {}}
    messages = [
        UserMessage("open the page"),
        AssistantMessage(tool_calls=(call,), provider_state=(state,)),
        ToolResultMessage("cu_1", "computer", "", parts=(IMAGE,)),
    ]
    _, items = encode_input(messages)
    screenshot = {"type": "computer_screenshot", "image_url": f"data:image/png;base64,{B64}"}
    assert {"type": "computer_call_output", "call_id": "cu_1", "output": screenshot} in items
