"""Done when: an agent run with an image in the prompt and a tool returning an
image, over real HTTP against the emulation server, sends both in each
dialect's native shape (read from the request bodies the server received),
and the run answers."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import toolwire
from toolwire import Agent, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

CHART = b"\x89PNG\r\n\x1a\n" + b"chart" * 20
PAGE = b"\x89PNG\r\n\x1a\n" + b"page" * 20
B64_CHART = base64.b64encode(CHART).decode()
B64_PAGE = base64.b64encode(PAGE).decode()
TEXT = "the page after the click"


def input_image(data: str) -> dict[str, Any]:
    return {"type": "input_image", "image_url": f"data:image/png;base64,{data}", "detail": "auto"}


@tool(read_only=True)
def screenshot(url: str) -> list[Any]:
    """A screenshot of a web page.

    Args:
        url: the page.
    """
    return [toolwire.Image.from_bytes(PAGE, media_type="image/png"), "the page after the click"]


def scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "name": "look",
            "turns": [
                {
                    "expect": {"images": 1},
                    "tool_calls": [{"name": "screenshot", "arguments": {"url": "https://x.test"}}],
                },
                {"expect": {"images": 2}, "text": "Seen: {result:screenshot}"},
            ],
        }
    )


def _openai_chat(body: dict[str, Any]) -> None:
    user, assistant, result, follow_up = body["messages"]
    assert user["content"] == [
        {"type": "text", "text": "Describe this chart."},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64_CHART}"}},
    ]
    call_id = assistant["tool_calls"][0]["id"]
    assert result == {
        "role": "tool",
        "tool_call_id": call_id,
        "content": "the page after the click",
    }
    assert follow_up["role"] == "user"
    assert follow_up["content"] == [
        {"type": "text", "text": f"The result of the screenshot call {call_id}:"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64_PAGE}"}},
        {"type": "text", "text": "the page after the click"},
    ]


def _openai_responses(body: dict[str, Any]) -> None:
    user, call, output = body["input"]
    assert user["content"] == [
        {"type": "input_text", "text": "Describe this chart."},
        {
            "type": "input_image",
            "image_url": f"data:image/png;base64,{B64_CHART}",
            "detail": "auto",
        },
    ]
    assert output["type"] == "function_call_output" and output["call_id"] == call["call_id"]
    assert output["output"] == [
        input_image(B64_PAGE),
        {"type": "input_text", "text": "the page after the click"},
    ]


def _anthropic(body: dict[str, Any]) -> None:
    user, _, results = body["messages"]
    image = {"type": "base64", "media_type": "image/png"}
    assert user["content"] == [
        {"type": "text", "text": "Describe this chart."},
        {"type": "image", "source": {**image, "data": B64_CHART}},
    ]
    (result,) = results["content"]
    assert result["type"] == "tool_result" and result["content"] == [
        {"type": "image", "source": {**image, "data": B64_PAGE}},
        {"type": "text", "text": "the page after the click"},
    ]


def _gemini(body: dict[str, Any]) -> None:
    user, _, results = body["contents"]
    assert user["parts"] == [
        {"text": "Describe this chart."},
        {"inlineData": {"mimeType": "image/png", "data": B64_CHART}},
    ]
    (part,) = results["parts"]
    response = part["functionResponse"]
    assert response["response"] == {"output": "the page after the click"}
    assert response["parts"] == [{"inlineData": {"mimeType": "image/png", "data": B64_PAGE}}]


def _bedrock(body: dict[str, Any]) -> None:
    user, _, results = body["messages"]
    assert user["content"] == [
        {"text": "Describe this chart."},
        {"image": {"format": "png", "source": {"bytes": B64_CHART}}},
    ]
    (block,) = results["content"]
    assert block["toolResult"]["content"] == [
        {"image": {"format": "png", "source": {"bytes": B64_PAGE}}},
        {"text": "the page after the click"},
    ]


NATIVE: dict[str, Callable[[dict[str, Any]], None]] = {
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "bedrock": _bedrock,
}


@pytest.mark.parametrize("name", sorted(NATIVE))
async def test_an_image_in_the_prompt_and_in_a_tool_result_is_sent_natively(
    name: str, tmp_path: Path
) -> None:
    _, dialect, model = PROVIDERS[name]
    with EmulationServer(scenario()) as server:
        provider = make_provider(name, base_url=server.url_for(dialect), api_key="test-key")
        agent = Agent(provider, model=model, tools=[screenshot], journal=tmp_path / "j.sqlite3")
        try:
            prompt = [
                "Describe this chart.",
                toolwire.Image.from_bytes(CHART, media_type="image/png"),
            ]
            result = await agent.run(prompt)
        finally:
            await agent.aclose()
        assert result.output == "Seen: the page after the click"
        first, second = server.requests
        assert len(first.get("messages", first.get("input", first.get("contents", [])))) >= 1
        NATIVE[name](second)
