"""The official SDKs through ``toolwire proxy``, then against the replay of what it recorded.

For each client, streaming and not: the conversation's result through the
proxy equals its result straight from the upstream; each recorded body is
byte for byte what the upstream sent; and the replay gives the client the
same result, the bodies sent in their recorded chunks.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolwire.testing import CassetteServer, RecordingProxy

from ._clients import anthropic_messages, openai_chat, openai_responses
from ._support import (
    SentRecorder,
    Upstream,
    assert_recorded_as_sent,
    assert_replayed_in_recorded_chunks,
    weather,
    without_timestamps,
)

CLIENTS: dict[str, tuple[str, Callable[[str, bool], list[Any]]]] = {
    "openai-chat": ("openai-chat", openai_chat),
    "openai-responses": ("openai-responses", openai_responses),
    "anthropic": ("anthropic-messages", anthropic_messages),
}


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_sdk_through_the_proxy_and_from_the_replay(
    client: str, stream: bool, tmp_path: Path
) -> None:
    dialect, converse = CLIENTS[client]
    with Upstream(weather()) as upstream:
        direct = converse(upstream.url_for(dialect), stream)
    cassette_dir = tmp_path / "cassette"
    with Upstream(weather()) as upstream:
        with RecordingProxy(upstream.url_for(dialect), record=cassette_dir) as proxy:
            proxied = converse(proxy.base_url, stream)
        sent = upstream.sent

    # Two turns: calls, then an answer quoting the results.
    answer = json.dumps(proxied[1], ensure_ascii=False)
    assert len(proxied) == 2 and "2025-05-01 10:30" in answer and "多云" in answer
    assert without_timestamps(proxied) == without_timestamps(direct)
    cassette = assert_recorded_as_sent(cassette_dir, sent)
    assert [e.dialect for e in cassette] == [dialect, dialect]
    expected_type = "text/event-stream" if stream else "application/json"
    assert all(expected_type in (e.response.header("content-type") or "") for e in cassette)

    server = CassetteServer(cassette_dir)
    replay = SentRecorder(server.app)
    server.app = replay
    with server:
        replayed = converse(server.base_url, stream)
    assert replayed == proxied  # timestamps included: the same bytes
    assert server.mismatches == []
    assert_replayed_in_recorded_chunks(cassette, replay.sent)
