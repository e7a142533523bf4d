"""A recorded stream cut at every byte offset: a prefix never hands on a
call that is not complete (every ready call is a call of the whole stream,
with the same id, name and arguments), nothing raises, and a prefix is either
reported cut with a typed error or complete with every call of the stream. Then the same
cuts made by the server, mid-connection, under a journaling agent: no tool
runs, the error is typed, and the journal says what happened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import TRACES
from toolwire import StreamDecoder, ToolwireError
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.events import ToolCallReady
from toolwire.journal import SQLiteJournal
from toolwire.messages import UserMessage
from toolwire.testing import EmulationServer, Scenario

from ..journal._support import Counter, make_agent
from ..journal._support import scenario as pay_scenario

API_OF = {name: dialect for name, (_, dialect, _) in PROVIDERS.items()}

# Conformance traces with parallel calls or several choices: the hardest to cut.
CORPUS_CASES = [
    "openai/chat_parallel_2_mixed_args",
    "anthropic/two_tool_use_empty_input_padded",
    "gemini/sse_two_parallel_calls_same_name_one_chunk",
    "azure/chat_prompt_filter_first_chunk",
]


def recorded(name: str) -> bytes:
    """The emulation server's first answer of the payment scenario in one dialect."""
    _, dialect, model = PROVIDERS[name]
    with EmulationServer(pay_scenario()) as server:
        provider = make_provider(name, base_url=server.url_for(dialect), api_key="k")
        request = provider.build_request(
            model=model, messages=[UserMessage("pay")], tools=(), stream=True
        )
        with httpx.Client() as client:
            response = client.post(request.url, json=request.json, headers=dict(request.headers))
    assert response.status_code == 200
    return response.content


def identity(call: Any) -> tuple[str | None, str, Any]:
    # A minted id (Gemini sends none) is new in every decoder: not comparable.
    return (None if call.minted_id else call.id, call.name, call.arguments)


def calls_by_choice(decoder: StreamDecoder) -> dict[tuple[int, int], tuple[str | None, str, Any]]:
    result = decoder.result()
    return {
        (choice.index, call.index): identity(call)
        for choice in result.choices
        for call in choice.tool_calls
    }


def check_every_offset(body: bytes, dialect: str) -> int:
    whole = StreamDecoder(dialect)
    whole.feed(body)
    whole.close()
    complete = calls_by_choice(whole)
    assert complete, "the stream has tool calls"
    for cut in range(len(body) + 1):
        decoder = StreamDecoder(dialect)
        # Two pieces, so a cut also splits the prefix somewhere else.
        split = cut // 3
        events = decoder.feed(body[:split]) + decoder.feed(body[split:cut]) + decoder.close()
        for event in events:
            if isinstance(event, ToolCallReady):
                key = (event.choice, event.call.index)
                assert key in complete, f"cut at {cut}: a call the stream does not have"
                assert identity(event.call) == complete[key], f"cut at {cut}: not the same call"
        result = decoder.result()
        if result.complete:
            # Only a prefix that lost nothing may say it is complete.
            assert calls_by_choice(decoder) == complete, f"cut at {cut}: complete but calls lost"
        else:
            # A cut is reported, typed, never silent.
            assert isinstance(result.error, ToolwireError), f"cut at {cut}: no error reported"
            assert cut < len(body), "the whole stream is complete"
    return len(body)


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_every_cut_of_an_emulated_stream(name: str) -> None:
    assert check_every_offset(recorded(name), API_OF[name]) > 500


@pytest.mark.parametrize("case", CORPUS_CASES)
def test_every_cut_of_recorded_provider_streams(case: str) -> None:
    trace = next(t for t in TRACES if t.name == case)
    check_every_offset(trace.body, trace.decoder_api)


@pytest.mark.anyio
async def test_cuts_on_the_wire_run_no_tool_and_are_journaled(tmp_path: Path) -> None:
    body = recorded("openai-chat")
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    counter = Counter(tmp_path / "ledger.sqlite3")
    offsets = sorted({*range(1, len(body) - 1, max(1, len(body) // 12)), len(body) - 2})
    for number, offset in enumerate(offsets):
        faulted = Scenario.from_dict(
            {
                "name": "cut",
                "turns": [
                    {
                        **pay_scenario().turns[0].model_dump(),
                        "faults": [{"cut_after_bytes": offset}],
                    },
                    {"text": "x"},
                ],
            }
        )
        with EmulationServer(faulted) as server:
            agent = make_agent(server, counter.tools, journal=journal)
            with pytest.raises(ToolwireError) as caught:
                await agent.run("pay", run_id=f"cut-{number}")
            await agent.aclose()
        log = journal.load_run(f"cut-{number}")
        assert caught.value.type_name in ("read_error", "stream_truncated", "remote_protocol_error")
        assert [e.kind for e in log.events] == [
            "run_started",
            "model_request",
            "model_failed",
            "run_failed",
        ]
        assert log.run.status == "failed" and log.problems() == []
        assert log.run.error is not None and log.run.error["type"] == caught.value.type_name
    assert counter.notes == [] and counter.ledger.payments() == [] and counter.weather == 0
