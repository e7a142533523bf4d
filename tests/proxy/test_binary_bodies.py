"""Cassettes keep binary data as it was: an image in a request (its bytes
spelling the API key, as is and as base64) is recorded and matched on replay
byte for byte, and a binary response body (Bedrock's AWS event stream) is
recorded and replayed byte for byte."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

import toolwire
from toolwire import Agent
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.http.bodies import scrub_keeping_binary
from toolwire.http.credentials import Scrubber
from toolwire.testing import CassetteServer, RecordingProxy, Scenario
from toolwire.testing.cassette import Cassette

from ._support import (
    SentRecorder,
    Upstream,
    assert_recorded_as_sent,
    assert_replayed_in_recorded_chunks,
)

pytestmark = pytest.mark.anyio

KEY = "sk-ant-cassette-0123456789abcdefghij"
IMAGE = (
    b"\x89PNG\r\n\x1a\n"
    + KEY.encode()
    + b"\x00\xff" * 50
    + base64.b64encode(KEY.encode())
    + bytes(range(256))
    + b"x"
    + KEY.encode()
    + b"yz"
    + KEY.encode()
)


def _scenario() -> Scenario:
    return Scenario.from_dict({"turns": [{"expect": {"images": 1}, "text": "seen"}]})


async def _ask(name: str, base_url: str) -> Any:
    _, _, model = PROVIDERS[name]
    agent = Agent(make_provider(name, base_url=base_url, api_key=KEY), model=model, journal=False)
    try:
        image = toolwire.Image.from_bytes(IMAGE, media_type="image/png")
        return (await agent.run(["What is this?", image])).output
    finally:
        await agent.aclose()


def _images(body: Any) -> list[bytes]:
    """Every base64 string of a request body that decodes to the image."""
    found: list[bytes] = []
    if isinstance(body, dict):
        for value in body.values():
            found += _images(value)
    elif isinstance(body, list):
        for value in body:
            found += _images(value)
    elif isinstance(body, str) and len(body) > 200:
        text = body.rpartition(",")[2]  # a data: URL's payload
        try:
            decoded = base64.b64decode(text, validate=True)
        except ValueError:
            return found
        found.append(decoded)
    return found


@pytest.mark.parametrize("name", ["anthropic", "bedrock"])
async def test_an_image_and_a_binary_stream_are_recorded_and_replayed_as_they_were(
    name: str, tmp_path: Path
) -> None:
    dialect = PROVIDERS[name][1]
    cassette_dir = tmp_path / "cassette"
    with Upstream(_scenario()) as upstream:
        with RecordingProxy(upstream.url_for(dialect), record=cassette_dir) as proxy:
            assert await _ask(name, proxy.base_url) == "seen"
        sent = upstream.sent
        (received,) = upstream.requests
    assert _images(received) == [IMAGE]
    cassette = assert_recorded_as_sent(cassette_dir, sent)  # the response, byte for byte
    (exchange,) = Cassette.load(cassette_dir)
    assert _images(exchange.request.json()) == [IMAGE]  # the request's image, intact
    sidecar = json.loads((cassette_dir / "0001.json").read_text())
    assert KEY not in json.dumps(sidecar["request"]["headers"])  # the key itself is not
    server = CassetteServer(cassette_dir)
    replay = SentRecorder(server.app)
    server.app = replay
    with server:
        assert await _ask(name, server.base_url) == "seen"
    assert server.mismatches == []
    assert_replayed_in_recorded_chunks(cassette, replay.sent)


def test_only_the_base64_data_of_a_body_is_kept_as_it_is() -> None:
    scrub = Scrubber([KEY]).scrub
    data = base64.b64encode(IMAGE).decode()
    body = json.dumps(
        {"text": f"my key {KEY}", "image": data, "url": f"data:image/png;base64,{data}", KEY: 1}
    ).encode()
    kept = json.loads(scrub_keeping_binary(body, scrub))
    assert kept == {
        "text": "my key <redacted>",
        "image": data,
        "url": f"data:image/png;base64,{data}",
        "<redacted>": 1,
    }
    # A short base64 string is text: the key's base64 form is replaced in it.
    short = json.dumps({"b": base64.b64encode(KEY.encode()).decode()}).encode()
    assert "<redacted>" in json.loads(scrub_keeping_binary(short, scrub))["b"]
    assert scrub_keeping_binary(b"not json " + KEY.encode(), scrub) == b"not json <redacted>"
    plain = b'{"a": "nothing to hide"}'
    assert scrub_keeping_binary(plain, scrub) is plain
