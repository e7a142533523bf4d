"""A kept stream cut at any byte and continued after the decoder's ``cursor``
(what ``GET /responses/{id}?stream=true&starting_after=N`` and ``GET
/interactions/{id}?stream=true&last_event_id=...`` send) decodes to exactly
what the whole stream does: same text, same calls with the same arguments,
same usage and finish, and no event twice; and the decoder's checks that the
continuation continues it (``continue_after``) let every such one through."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from toolwire.errors import UsageError
from toolwire.events import Event, TextDelta, ToolCallDelta, ToolCallReady
from toolwire.messages import UserMessage
from toolwire.providers import GeminiInteractions, OpenAIResponses
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


DIALECTS = ("openai-responses", "gemini-interactions")


@pytest.fixture(scope="module", params=DIALECTS)
def body(request: pytest.FixtureRequest) -> tuple[str, bytes]:
    dialect: str = request.param
    with EmulationServer(SCENARIO) as server:
        base_url = server.url_for(dialect)
        provider = (
            OpenAIResponses(base_url=base_url, api_key="k")
            if dialect == "openai-responses"
            else GeminiInteractions(base_url=base_url, api_key="k")
        )
        built = provider.build_request(model="m", messages=[UserMessage("weather")])
        with httpx.Client() as client:
            response = client.post(built.url, json=built.json, headers=dict(built.headers))
    assert response.status_code == 200
    return dialect, response.content


def event_id(event: bytes) -> str:
    """A streamed event's id, as the dialect's resumption names it."""
    data = json.loads(event.split(b"data: ", 1)[1])
    found = data.get("event_id", data.get("sequence_number"))
    assert isinstance(found, (str, int)), data
    return str(found)


def events_after(body: bytes, after: str) -> bytes:
    """The events after the one ``after`` names, as a resumed stream sends them."""
    events = [e + b"\n\n" for e in body.split(b"\n\n") if e.strip()]
    ids = [event_id(e) for e in events]
    assert len(set(ids)) == len(ids)
    return b"".join(events[ids.index(after) + 1 :])


def seen(events: list[Event]) -> tuple[str, str, list[str]]:
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    arguments = "".join(e.delta for e in events if isinstance(e, ToolCallDelta))
    return text, arguments, [e.call.id for e in events if isinstance(e, ToolCallReady)]


def test_a_stream_continued_after_its_cursor_is_the_whole_stream(body: tuple[str, bytes]) -> None:
    dialect, stream = body
    whole = StreamDecoder(dialect)
    expected_events = whole.feed(stream) + whole.close()
    expected = whole.result()
    assert len(expected.tool_calls) == 2 and whole.cursor is not None
    resumable = 0
    # Every byte around each event's end (where a cut is hardest), and a
    # stride through the rest (every byte would take seconds).
    ends = [m.end() for m in re.finditer(rb"\n\n", stream)]
    cuts = {c + d for c in ends for d in (-3, -2, -1, 0, 1, 2)} | set(range(0, len(stream), 13))
    cuts = {c for c in cuts if 0 <= c < len(stream)}
    for cut in sorted(cuts):
        decoder = StreamDecoder(dialect)
        events = decoder.feed(stream[:cut])
        cursor = decoder.cursor
        if cursor is None:  # before the stream's id and first event: nothing to resume after
            continue
        resumable += 1
        assert cursor[0] == expected.response_id
        decoder.drop_partial()
        decoder.continue_after(*cursor)
        events += decoder.feed(events_after(stream, cursor[1])) + decoder.close()
        result = decoder.result()
        assert result.error is None, cut
        assert result.choices == expected.choices, cut
        assert result.usage == expected.usage and result.response_id == expected.response_id
        assert seen(events) == seen(expected_events), cut
    assert resumable > len(cuts) * 0.9


def test_a_kept_stream_read_again_from_its_first_event_is_the_whole_stream(
    body: tuple[str, bytes],
) -> None:
    dialect, stream = body
    whole = StreamDecoder(dialect)
    whole.feed(stream)
    whole.close()
    expected = whole.result()
    assert expected.response_id is not None
    decoder = StreamDecoder(dialect)
    decoder.continue_after(expected.response_id, None)
    decoder.feed(stream)
    decoder.close()
    assert decoder.result() == expected


def test_only_an_open_sse_decoder_is_continued(body: tuple[str, bytes]) -> None:
    dialect, stream = body
    decoder = StreamDecoder(dialect)
    decoder.feed(stream)
    decoder.close()
    with pytest.raises(UsageError):
        decoder.drop_partial()
    assert StreamDecoder("gemini").cursor is None
