"""The emulation server as Bedrock: ConverseStream and InvokeModel in AWS's
event stream, shaped like the recordings, with its faults as Bedrock shows them."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest

from toolwire import HttpRetryPolicy, HttpxTransport, StreamDecoder
from toolwire.errors import (
    RateLimited,
    ReadError,
    RemoteProtocolError,
    StreamErrorEvent,
    StreamTruncated,
)
from toolwire.messages import UserMessage
from toolwire.providers import Bedrock, BedrockInvoke
from toolwire.stream.framing import EventStreamDecoder
from toolwire.testing import EmulationServer, Scenario
from toolwire.types import StreamResult

CALL = {"name": "get_weather", "arguments": {"city": "杭州", "days": 3}}
NOVA = "us.amazon.nova-2-lite-v1:0"
CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
pytestmark = pytest.mark.anyio


def _scenario(*faults: dict[str, Any]) -> Scenario:
    turn = {"text": "Let me look.", "tool_calls": [CALL], "chunk_size": 4, "faults": list(faults)}
    return Scenario.from_dict({"turns": [turn]})


def _converse(server: EmulationServer, model: str = NOVA) -> httpx.Response:
    provider = Bedrock(api_key="bedrock-key-0123456789", base_url=server.base_url)
    request = provider.build_request(model=model, messages=[UserMessage("weather?")])
    return httpx.post(request.url, content=request.content(), headers=dict(request.headers))


def test_converse_stream_is_shaped_like_the_recordings() -> None:
    with EmulationServer(_scenario()) as server:
        response = _converse(server)
    assert response.headers["content-type"] == "application/vnd.amazon.eventstream"
    frames = EventStreamDecoder().feed_pairs(response.content)
    names = [name for name, _ in frames]
    assert names[0] == "messageStart" and names[-2:] == ["messageStop", "metadata"]
    payloads = [json.loads(data) for _, data in frames]
    assert all("p" in p and list(p) == sorted(p) for p in payloads), "padded, keys sorted"
    text_index = next(p["contentBlockIndex"] for p in payloads if "text" in p.get("delta", {}))
    starts = [p["contentBlockIndex"] for p in payloads if "start" in p]
    assert text_index not in starts, "a text block without contentBlockStart"
    arguments = "".join(
        p["delta"]["toolUse"]["input"] for p in payloads if "toolUse" in p.get("delta", {})
    )
    assert json.loads(arguments) == CALL["arguments"]


def test_invoke_stream_wraps_anthropic_events_in_chunks() -> None:
    with EmulationServer(_scenario()) as server:
        provider = BedrockInvoke(api_key="bedrock-key-0123456789", base_url=server.base_url)
        request = provider.build_request(model=CLAUDE, messages=[UserMessage("weather?")])
        response = httpx.post(request.url, content=request.content(), headers=dict(request.headers))
    frames = EventStreamDecoder().feed_pairs(response.content)
    assert {name for name, _ in frames} == {"chunk"}
    inner = [json.loads(base64.b64decode(json.loads(data)["bytes"])) for _, data in frames]
    assert inner[0]["type"] == "message_start" and inner[-1]["type"] == "message_stop"
    assert "ping" not in [event["type"] for event in inner]


async def _complete(server: EmulationServer) -> StreamResult:
    provider = Bedrock(api_key="bedrock-key-0123456789", base_url=server.base_url)
    try:
        request = provider.build_request(model=NOVA, messages=[UserMessage("weather?")])
        return await provider.complete(request)
    finally:
        await provider.aclose()


async def test_an_error_event_is_an_exception_message() -> None:
    fault = {"error_event": {"type": "throttlingException", "message": "Too many tokens"}}
    with EmulationServer(_scenario(fault)) as server:
        result = await _complete(server)
    assert isinstance(result.error, StreamErrorEvent)
    assert result.error.code == "throttlingException"
    assert "Too many tokens" in result.error.message
    assert result.tool_calls == ()


async def test_a_broken_payload_and_a_cut_are_typed_errors() -> None:
    with EmulationServer(_scenario({"malformed_json": True})) as server:
        broken = await _complete(server)
    assert isinstance(broken.error, RemoteProtocolError)
    assert "not valid JSON" in broken.error.message
    with EmulationServer(_scenario({"cut_after_bytes": 700})) as server:
        with pytest.raises(ReadError):
            await _complete(server)
        body = _converse(server).content  # the second attempt: whole
    decoder = StreamDecoder("bedrock-converse")
    decoder.feed(body[:700])
    decoder.close()
    assert isinstance(decoder.error, StreamTruncated)
    assert decoder.result().tool_calls == ()


async def test_an_http_error_is_read_as_aws_sends_it() -> None:
    with EmulationServer(_scenario({"status": 429})) as server:
        provider = Bedrock(api_key="bedrock-key-0123456789", base_url=server.base_url)
        request = provider.build_request(model=NOVA, messages=[UserMessage("weather?")])
        transport = HttpxTransport(retry=HttpRetryPolicy(retries=0))
        try:
            with pytest.raises(RateLimited, match="Rate limit"):
                await provider.complete(request, transport=transport)
        finally:
            await transport.aclose()
            await provider.aclose()
