"""A Responses stream cut at any byte and continued after the decoder's
``cursor`` (what ``GET /responses/{id}?stream=true&starting_after=N`` sends)
decodes to exactly what the whole stream does: same text, same calls with the
same arguments, same usage and finish, and no event twice."""

from __future__ import annotations

import re

import httpx
import pytest

from toolwire.errors import UsageError
from toolwire.events import Event, TextDelta, ToolCallDelta, ToolCallReady
from toolwire.messages import UserMessage
from toolwire.providers import OpenAIResponses
from toolwire.stream.decoder import StreamDecoder
from toolwire.testing import EmulationServer, Scenario

SCENARIO = Scenario.from_dict(
    {
        "turns": [
            {
                "reasoning": "Two cities.",
                "text": "Looking: 杭州 and Paris.",
                "tool_calls": [
                    {"name": "get_weather", "arguments": {"city": "杭州"}},
                    {"name": "get_weather", "arguments": {"city": "Paris, Île-de-France"}},
                ],
                "chunk_size": 5,
            }
        ]
    }
)


@pytest.fixture(scope="module")
def body() -> bytes:
    with EmulationServer(SCENARIO) as server:
        provider = OpenAIResponses(base_url=server.url_for("openai-responses"), api_key="k")
        request = provider.build_request(model="m", messages=[UserMessage("weather")])
        with httpx.Client() as client:
            response = client.post(request.url, json=request.json, headers=dict(request.headers))
    assert response.status_code == 200
    return response.content


def events_after(body: bytes, cursor: int) -> bytes:
    """The events numbered after ``cursor``, as a resumed stream sends them."""
    events = [e + b"\n\n" for e in body.split(b"\n\n") if e.strip()]
    numbers = [int(re.search(rb'"sequence_number":(\d+)', e).group(1)) for e in events]  # type: ignore[union-attr]
    assert numbers == list(range(len(events)))
    return b"".join(events[cursor + 1 :])


def seen(events: list[Event]) -> tuple[str, str, list[str]]:
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    arguments = "".join(e.delta for e in events if isinstance(e, ToolCallDelta))
    return text, arguments, [e.call.id for e in events if isinstance(e, ToolCallReady)]


def test_a_stream_continued_after_its_cursor_is_the_whole_stream(body: bytes) -> None:
    whole = StreamDecoder("openai-responses")
    expected_events = whole.feed(body) + whole.close()
    expected = whole.result()
    assert len(expected.tool_calls) == 2 and whole.cursor is not None
    resumable = 0
    # Every byte around each event's end (where a cut is hardest), and a
    # stride through the rest (every byte would take seconds).
    ends = [m.end() for m in re.finditer(rb"\n\n", body)]
    cuts = {c + d for c in ends for d in (-3, -2, -1, 0, 1, 2)} | set(range(0, len(body), 13))
    cuts = {c for c in cuts if 0 <= c < len(body)}
    for cut in sorted(cuts):
        decoder = StreamDecoder("openai-responses")
        events = decoder.feed(body[:cut])
        cursor = decoder.cursor
        if cursor is None:  # before the first whole event: nothing to resume after
            continue
        resumable += 1
        decoder.drop_partial()
        events += decoder.feed(events_after(body, cursor)) + decoder.close()
        result = decoder.result()
        assert result.error is None, cut
        assert result.choices == expected.choices, cut
        assert result.usage == expected.usage and result.response_id == expected.response_id
        assert seen(events) == seen(expected_events), cut
    assert resumable > len(cuts) * 0.9


def test_only_an_open_sse_decoder_is_continued(body: bytes) -> None:
    decoder = StreamDecoder("openai-responses")
    decoder.feed(body)
    decoder.close()
    with pytest.raises(UsageError):
        decoder.drop_partial()
    assert StreamDecoder("gemini").cursor is None
