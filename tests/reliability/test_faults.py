"""Faults from the server end in a correct result or a typed error, and the
journal stays consistent either way: 429 storms, 500s, slow-loris chunks,
malformed JSON, 10 MB arguments, unicode edge cases, n > 1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from toolwire import (
    Backoff,
    HttpRetryPolicy,
    HttpxTransport,
    ProtocolError,
    ProviderError,
    RateLimited,
    Timeouts,
    ToolwireError,
)
from toolwire.journal import RunLog, SQLiteJournal
from toolwire.testing import EmulationServer, Scenario

from ..journal._support import Counter, make_agent

pytestmark = pytest.mark.anyio


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[SQLiteJournal]:
    store = SQLiteJournal(tmp_path / "journal.sqlite3")
    yield store
    store.close()


def notify_then_answer(**turn: Any) -> Scenario:
    return Scenario.from_dict(
        {
            "name": "faults",
            "turns": [
                {
                    "tool_calls": [{"name": "notify", "arguments": {"text": "hello"}}],
                    "chunk_size": 5,
                    **turn,
                },
                {"text": "done: {result:notify}"},
            ],
        }
    )


def transport(attempts: int = 3, read: float | None = None) -> HttpxTransport:
    timeouts = Timeouts(read=read) if read is not None else None
    return HttpxTransport(
        retry=HttpRetryPolicy(retries=attempts - 1, backoff=Backoff(initial_delay=0.0, jitter=0.0)),
        timeouts=timeouts,
    )


async def run(
    scenario: Scenario,
    journal: SQLiteJournal,
    counter: Counter,
    run_id: str,
    http: HttpxTransport | None = None,
    **options: Any,
) -> tuple[Any, RunLog]:
    """Run; return the result or the typed error, and the run's journal."""
    with EmulationServer(scenario) as server:
        agent = make_agent(server, counter.tools, journal=journal, transport=http, **options)
        outcome: Any
        try:
            outcome = await agent.run("say hello", run_id=run_id)
        except ToolwireError as exc:
            outcome = exc
        finally:
            await agent.aclose()
            if http is not None:
                await http.aclose()
    log = journal.load_run(run_id)
    assert log.problems() == [], log.problems()
    return outcome, log


def kinds(log: RunLog) -> list[str]:
    return [e.kind for e in log.events]


async def test_a_429_storm_that_passes(tmp_path: Path, journal: SQLiteJournal) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    storm = notify_then_answer(faults=[{"status": 429, "retry_after": 0.01}] * 2)
    result, log = await run(storm, journal, counter, "r429", transport(3))
    assert result.output == "done: sent" and counter.notes == ["hello"]
    assert log.run.status == "answered"


async def test_a_429_storm_that_does_not(tmp_path: Path, journal: SQLiteJournal) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    storm = notify_then_answer(faults=[{"status": 429, "retry_after": 0.01}] * 20)
    error, log = await run(storm, journal, counter, "r429x", transport(3))
    assert isinstance(error, RateLimited) and error.status_code == 429
    assert kinds(log) == ["run_started", "model_request", "model_failed", "run_failed"]
    assert log.run.status == "failed" and log.run.error == {
        **log.run.error,  # type: ignore[dict-item]
        "type": "rate_limited",
        "status_code": 429,
    }
    assert counter.notes == []


async def test_500s(tmp_path: Path, journal: SQLiteJournal) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    result, _ = await run(
        notify_then_answer(faults=[{"status": 500}, {"status": 503}]),
        journal,
        counter,
        "r500",
        transport(3),
    )
    assert result.output == "done: sent"
    error, log = await run(
        notify_then_answer(faults=[{"status": 500}] * 5), journal, counter, "r500x", transport(2)
    )
    assert isinstance(error, ProviderError) and error.status_code == 500
    assert log.run.error is not None and log.run.error["status_code"] == 500
    assert counter.notes == ["hello"], "only the run that got an answer ran its tool"


async def test_slow_loris_chunks(tmp_path: Path, journal: SQLiteJournal) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    # One server for both runs: the first attempt of each is slow.
    slow = notify_then_answer(faults=[{"slow_chunk_delay": 0.2}] * 2)
    with EmulationServer(slow) as server:
        outcomes = []
        for run_id, retries in (("slow", 0), ("slow2", 1)):
            http = transport(1, read=0.05)
            agent = make_agent(
                server, counter.tools, journal=journal, transport=http, stream_retries=retries
            )
            try:
                outcomes.append(await agent.run("say hello", run_id=run_id))
            except ToolwireError as exc:
                outcomes.append(exc)
            await agent.aclose()
            await http.aclose()
    error, result = outcomes
    assert isinstance(error, ToolwireError) and error.type_name == "timeout"
    assert result.output == "done: sent" and counter.notes == ["hello"]
    first, second = journal.load_run("slow"), journal.load_run("slow2")
    assert first.run.status == "failed" and first.problems() == []
    assert second.problems() == [] and kinds(second)[:5] == [
        "run_started",
        "model_request",
        "model_failed",
        "model_request",
        "model_response",
    ]


async def test_malformed_json(tmp_path: Path, journal: SQLiteJournal) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    broken = notify_then_answer(faults=[{"malformed_json": True}])
    error, log = await run(broken, journal, counter, "bad", transport(1))
    assert isinstance(error, ProtocolError)
    assert log.run.status == "failed" and counter.notes == []
    result, log = await run(broken, journal, counter, "bad2", transport(1), stream_retries=1)
    assert result.output == "done: sent" and counter.notes == ["hello"]
    failed = next(e for e in log.events if e.kind == "model_failed")
    assert failed.data["error"]["type"] == error.type_name


async def test_ten_megabyte_arguments(tmp_path: Path, journal: SQLiteJournal) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    text = "é漢🙂x" * (10_000_000 // 8)
    big = Scenario.from_dict(
        {
            "name": "big",
            "turns": [
                {
                    "tool_calls": [{"name": "notify", "arguments": {"text": text}}],
                    "chunk_size": 1 << 16,
                },
                {"text": "done: {result:notify}"},
            ],
        }
    )
    result, log = await run(big, journal, counter, "big", transport(1))
    assert result.output == "done: sent"
    assert counter.notes == [text], "the tool got every byte"
    intent = next(e for e in log.events if e.kind == "tool_intent")
    assert len(text.encode()) > 10_000_000
    assert "arguments" not in intent.data and intent.data["arguments_chars"] > len(text)
    assert len(intent.data["arguments_preview"]) <= 4_000
    answer = next(e for e in log.events if e.kind == "model_response")
    assert answer.data["assistant"]["tool_calls"][0]["arguments"]["text"] == text


UNICODE = [
    "👩‍👩‍👧‍👦 family",  # ZWJ sequence
    "e\u0301 combining",
    "\u202eRTL override\u202c",
    "zero\u200bwidth",
    "line\u2028separator\u2029",
    "𝕌𝕟𝕚𝕔𝕠𝕕𝕖 astral",
    '"quotes" \\ backslash',
]


@pytest.mark.parametrize("text", UNICODE, ids=range(len(UNICODE)))
async def test_unicode_edge_cases(tmp_path: Path, journal: SQLiteJournal, text: str) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    scenario = notify_then_answer(chunk_size=1)
    scenario = Scenario.from_dict(
        {
            "name": "unicode",
            "turns": [
                {"tool_calls": [{"name": "notify", "arguments": {"text": text}}], "chunk_size": 1},
                {"text": "done: {result:notify}"},
            ],
        }
    )
    result, log = await run(scenario, journal, counter, "u", transport(1))
    assert result.output == "done: sent" and counter.notes == [text]
    intent = next(e for e in log.events if e.kind == "tool_intent")
    assert intent.data["arguments"] == {"text": text}


async def test_a_lone_surrogate_in_arguments_is_recorded(
    tmp_path: Path, journal: SQLiteJournal
) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    scenario = Scenario.from_dict(
        {
            "name": "surrogate",
            "turns": [
                {"tool_calls": [{"name": "notify", "arguments": '{"text": "a\\ud800b"}'}]},
                {"text": "done: {result:notify}"},
            ],
        }
    )
    outcome, log = await run(scenario, journal, counter, "s", transport(1))
    # The tool ran with the exact string, the journal holds it, and the next
    # request carries it as a JSON escape.
    assert counter.notes == ["a\ud800b"]
    intent = next(e for e in log.events if e.kind == "tool_intent")
    assert intent.data["arguments"] == {"text": "a\ud800b"}
    assert outcome.output == "done: sent"


# -- n > 1 -----------------------------------------------------------------------------


def chunk(choice: int, delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-n2",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4.1-mini",
        "choices": [{"index": choice, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def call_delta(call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    entry: dict[str, Any] = {"index": 0, "function": function}
    if call_id is not None:
        entry.update(id=call_id, type="function")
        function["name"] = name
    return {"tool_calls": [entry]}


N2_TURNS = [
    chunk(0, {"role": "assistant", **call_delta("call_a", "notify", "")})
    + chunk(1, {"role": "assistant", **call_delta("call_b", "send_payment", "")})
    + chunk(0, call_delta(None, None, '{"text": "from choice 0"}'))
    + chunk(1, call_delta(None, None, '{"to": "mallory", "amount_cents": 99}'))
    + chunk(0, {}, "tool_calls")
    + chunk(1, {}, "tool_calls")
    + b"data: [DONE]\n\n",
    chunk(0, {"role": "assistant", "content": "A"})
    + chunk(1, {"role": "assistant", "content": "B"})
    + chunk(0, {}, "stop")
    + chunk(1, {}, "stop")
    + b"data: [DONE]\n\n",
]


class _TwoChoices(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint answering with n=2 streams."""

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        payload = N2_TURNS[min(turn, 1)]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


async def test_n_greater_than_one_follows_choice_zero(
    tmp_path: Path, journal: SQLiteJournal
) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _TwoChoices)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        from toolwire import Agent, OpenAIChat

        agent = Agent(
            OpenAIChat(api_key="k", base_url=f"http://127.0.0.1:{server.server_port}/v1"),
            model="gpt-4.1-mini",
            tools=counter.tools,
            journal=journal,
            extra={"n": 2},
        )
        result = await agent.run("hi", run_id="n2")
        await agent.aclose()
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert result.output == "A"
    assert counter.notes == ["from choice 0"] and counter.ledger.payments() == []
    log = journal.load_run("n2")
    assert log.problems() == [] and log.run.status == "answered"
    answers = [e for e in log.events if e.kind == "model_response"]
    assert [a.data["choices"] for a in answers] == [2, 2]
