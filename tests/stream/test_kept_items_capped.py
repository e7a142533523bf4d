"""Every item a response keeps counts against its caps: a flood of events
that toolwire keeps without reading (Bedrock pings, unknown events, state
items) ends in the typed cap error, never in memory held without a bound."""

from __future__ import annotations

import json

import pytest

from toolwire import StreamDecoder
from toolwire.errors import RemoteProtocolError
from toolwire.events import StreamFailed, UnknownItem
from toolwire.stream import _budget, accumulate
from toolwire.stream.framing.eventstream import event_message
from toolwire.stream.limits import KEPT_ITEM_CHARS, MAX_KEPT_ITEMS

PING = event_message("ping", b"{}")
START = event_message("messageStart", json.dumps({"role": "assistant"}).encode())


def _decode(body: bytes, step: int = 64 * 1024) -> tuple[list[object], StreamDecoder]:
    decoder = StreamDecoder("bedrock-converse")
    events: list[object] = []
    for at in range(0, len(body), step):
        events += decoder.feed(body[at : at + step])
    return events + decoder.close(), decoder


def test_a_flood_of_pings_ends_at_the_item_cap() -> None:
    count = MAX_KEPT_ITEMS + 10
    events, decoder = _decode(START + PING * count)
    failed = [e for e in events if isinstance(e, StreamFailed)]
    assert len(failed) == 1
    assert isinstance(failed[0].error, RemoteProtocolError)
    assert f"more than {MAX_KEPT_ITEMS} items" in str(failed[0].error)
    assert sum(isinstance(e, UnknownItem) for e in events) == MAX_KEPT_ITEMS
    assert len(decoder.result().unknown_items) == MAX_KEPT_ITEMS


def test_small_items_count_against_the_response_characters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 100 pings of a 2-byte payload fit 10,000 characters only if each
    # counted its payload alone; each counts what it costs held.
    monkeypatch.setattr(_budget, "MAX_RESPONSE_CHARS", 50 * KEPT_ITEM_CHARS)
    events, decoder = _decode(START + PING * 100)
    assert isinstance(decoder.error, RemoteProtocolError)
    assert "characters" in str(decoder.error)
    assert sum(isinstance(e, UnknownItem) for e in events) < 50


def test_state_items_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(accumulate, "MAX_KEPT_ITEMS", 3)
    item = {"type": "reasoning", "id": "r", "summary": [], "encrypted_content": "x"}
    chunks = [
        {"type": "response.output_item.done", "output_index": i, "item": item} for i in range(5)
    ]
    body = b"".join(b"data: %s\n\n" % json.dumps(c).encode() for c in chunks)
    decoder = StreamDecoder("openai-responses")
    decoder.feed(body)
    decoder.close()
    assert isinstance(decoder.error, RemoteProtocolError)
    assert "more than 3 items" in str(decoder.error)
