"""A stream and the whole (non-streamed) response of the same turn read the same.

Each dialect's codec reads both forms, and the same accumulator turns their
parts into a result; these tests hold them to it: the same text, calls,
finish reason and usage.

* Over the emulation server's scenarios, in the four dialects it speaks, by
  real HTTP on loopback: the same turn requested with ``stream`` on and off.
* Over every recording of the corpus that holds its whole form too: the
  Responses API repeats the whole response in ``response.completed``, and a
  Gemini stream of one chunk is a whole ``GenerateContentResponse``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import TRACES, Trace
from toolwire import Anthropic, Gemini, OpenAIChat, OpenAIResponses, StreamDecoder, StreamResult
from toolwire.messages import UserMessage
from toolwire.providers import GeminiInteractions, Provider
from toolwire.stream.decoder import decode_response
from toolwire.stream.framing import SSEDecoder
from toolwire.testing import EmulationServer

pytestmark = pytest.mark.anyio

SCENARIOS: dict[str, dict[str, Any]] = {
    "text": {"text": "Bonjour, 杭州 is sunny. 😀"},
    "reasoning then text": {"reasoning": "The user greets me.", "text": "Hello!"},
    "one call": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    "parallel calls": {
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "杭州", "days": [1, 2, 3]}},
            {"name": "get_time", "arguments": {"tz": "Asia/Shanghai", "exact": True}},
            {"name": "search", "arguments": {"q": 'a "quoted" \\ path', "n": 10**20}},
        ],
        "chunk_size": 3,
    },
    "call without arguments": {"tool_calls": [{"name": "now", "arguments": {}}]},
    "text then calls": {
        "text": "Let me check.",
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
    },
    "invalid arguments": {"tool_calls": [{"name": "broken", "arguments": '{"city": Paris}'}]},
}
PROVIDERS: dict[str, type[Provider]] = {
    "openai-chat": OpenAIChat,
    "openai-responses": OpenAIResponses,
    "anthropic-messages": Anthropic,
    "gemini": Gemini,
    "gemini-interactions": GeminiInteractions,
}


def reading(result: StreamResult) -> dict[str, Any]:
    """What the two forms must agree on."""
    choice = result.choices[0]
    usage = result.usage
    return {
        "text": choice.text,
        "calls": [(c.id, c.name, c.arguments) for c in choice.tool_calls],
        "invalid": [(c.id, c.name, c.raw_arguments) for c in choice.invalid_tool_calls],
        "finish": (choice.finish_reason, choice.raw_finish_reason),
        "usage": usage.to_dict() if usage is not None else None,
        "error": result.error,
    }


@pytest.fixture(scope="module")
def server() -> Iterator[EmulationServer]:
    scenario = {"name": "both-forms", "turns": list(SCENARIOS.values())}
    with EmulationServer(scenario) as running:
        yield running


def _messages(turn: int) -> list[Any]:
    """A conversation whose answer is the scenario's turn ``turn``."""
    from toolwire.messages import AssistantMessage

    messages: list[Any] = [UserMessage("go")]
    for _ in range(turn):
        messages += [AssistantMessage(text="ok"), UserMessage("go on")]
    return messages


# A whole Anthropic message (or Interactions step) cannot carry arguments
# that are not an object.
CASES = [
    (name, dialect)
    for name in SCENARIOS
    for dialect in sorted(PROVIDERS)
    if not (
        name == "invalid arguments" and dialect in ("anthropic-messages", "gemini-interactions")
    )
]


@pytest.mark.parametrize(("name", "dialect"), CASES)
async def test_emulated_turn_streamed_equals_whole(
    dialect: str, name: str, server: EmulationServer
) -> None:
    provider = PROVIDERS[dialect](api_key="test", base_url=server.url_for(dialect))
    messages = _messages(list(SCENARIOS).index(name))
    try:
        streamed = await provider.complete(
            provider.build_request(model="m", messages=messages, stream=True)
        )
        whole = await provider.complete(
            provider.build_request(model="m", messages=messages, stream=False)
        )
    finally:
        await provider.aclose()
    assert streamed.error is None and whole.error is None
    got, want = reading(streamed), reading(whole)
    # The server makes ids from each request's bytes: the two differ.
    for key in ("calls", "invalid"):
        got[key] = [c[1:] for c in got[key]]
        want[key] = [c[1:] for c in want[key]]
    assert got == want
    expected = SCENARIOS[name]
    assert streamed.choices[0].text == expected.get("text", "")
    assert [c.name for c in streamed.choices[0].tool_calls] == [
        c["name"] for c in expected.get("tool_calls", []) if not isinstance(c["arguments"], str)
    ]


# -- the corpus ------------------------------------------------------------------


def _whole_form(trace: Trace) -> dict[str, Any] | None:
    """The whole response a recording also holds, if it holds one."""
    if trace.dialect == "openai-responses":
        events = SSEDecoder().feed(trace.body)
        for event in events:
            payload = json.loads(event.data) if event.data.startswith("{") else {}
            response = payload.get("response")
            if payload.get("type") == "response.completed" and response.get("output"):
                return response  # type: ignore[no-any-return]
        return None
    if trace.dialect == "gemini":
        decoder = StreamDecoder("gemini")
        frames = decoder.feed_frames(trace.body) + decoder.close_frames()
        payloads = [f.data for f in frames if f.data]
        if len(payloads) == 1:
            return json.loads(payloads[0])  # type: ignore[no-any-return]
    return None


BOTH_FORMS = [t for t in TRACES if _whole_form(t) is not None]


def test_the_corpus_holds_whole_forms_in_both_dialects() -> None:
    assert {t.dialect for t in BOTH_FORMS} == {"openai-responses", "gemini"}
    assert len(BOTH_FORMS) >= 15


@pytest.mark.parametrize("trace", BOTH_FORMS, ids=lambda t: t.name)
def test_recorded_stream_equals_its_whole_form(trace: Trace) -> None:
    decoder = StreamDecoder(trace.dialect)
    decoder.feed(trace.body)
    decoder.close()
    streamed = decoder.result()
    whole_body = _whole_form(trace)
    whole = decode_response(trace.dialect, whole_body)
    got, want = reading(streamed), reading(whole)
    # Ids minted for calls the provider sent without one differ run to run.
    for key in ("calls", "invalid"):
        got[key] = [c[1:] for c in got[key]]
        want[key] = [c[1:] for c in want[key]]
    assert got == want
