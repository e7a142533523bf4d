"""Media the model makes (a Gemini ``inlineData`` part, a Responses
``image_generation_call`` result) becomes parts of the answer's message,
over real HTTP against the emulation server."""

from __future__ import annotations

import base64

import pytest

import toolwire
from toolwire import Agent
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.messages import AssistantMessage
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

PNG = b"\x89PNG\r\n\x1a\n" + b"drawn" * 8
B64 = base64.b64encode(PNG).decode()
ITEMS = {
    "gemini": {"inlineData": {"mimeType": "image/png", "data": B64}},
    "openai-responses": {
        "type": "image_generation_call",
        "id": "ig_1",
        "status": "completed",
        "output_format": "png",
        "result": B64,
    },
}


@pytest.mark.parametrize("name", sorted(ITEMS))
async def test_an_image_the_model_made_is_a_part_of_its_message(name: str) -> None:
    _, dialect, model = PROVIDERS[name]
    item = {"dialect": dialect, "item": ITEMS[name], "after": "text"}
    turn = {"text": "Here it is.", "provider_items": [item]}
    with EmulationServer(Scenario.from_dict({"turns": [turn]})) as server:
        provider = make_provider(name, base_url=server.url_for(dialect), api_key="k")
        agent = Agent(provider, model=model, journal=False)
        try:
            result = await agent.run("Draw a cat.")
        finally:
            await agent.aclose()
    answer = result.messages[-1]
    assert isinstance(answer, AssistantMessage) and answer.text == "Here it is."
    assert answer.parts == (toolwire.Image.from_bytes(PNG, media_type="image/png"),)


@pytest.mark.parametrize("name", sorted(ITEMS))
async def test_an_agent_stream_hands_on_the_image_as_an_event(name: str) -> None:
    _, dialect, model = PROVIDERS[name]
    item = {"dialect": dialect, "item": ITEMS[name], "after": "text"}
    turn = {"text": "Here it is.", "provider_items": [item]}
    with EmulationServer(Scenario.from_dict({"turns": [turn]})) as server:
        provider = make_provider(name, base_url=server.url_for(dialect), api_key="k")
        agent = Agent(provider, model=model, journal=False)
        try:
            events = [event async for event in agent.stream("Draw a cat.")]
        finally:
            await agent.aclose()
    received = [e.part for e in events if isinstance(e, toolwire.PartReceived)]
    assert received == [toolwire.Image.from_bytes(PNG, media_type="image/png")]
