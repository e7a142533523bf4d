"""OpenAI Responses over a WebSocket, end to end against the emulation server.

The server keeps each connection's responses, so a turn that continues the
previous response with only the new items is read whole there; told to,
it closes the socket between two turns or forgets what it answered, and the
run goes on over HTTP with the whole context, each tool run once.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

import toolwire
from toolwire import Agent, OpenAIResponses, UserMessage
from toolwire.errors import UsageError
from toolwire.http.transport import HttpxTransport
from toolwire.http.websocket import connect
from toolwire.providers._socket import SocketTransport
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

CALLS = 20


def _scenario(calls: int) -> Scenario:
    """``calls`` turns of one call each (``bump(n)``), then an answer quoting the last result."""
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "bump", "arguments": {"n": n}}], "chunk_size": 4}
        for n in range(calls)
    ]
    turns.append({"text": "last: {result:bump}"})
    return Scenario.from_dict({"name": "many-turns", "turns": turns})


class Effects:
    """The tool, and how many times each call of it ran."""

    def __init__(self) -> None:
        self.ran: Counter[int] = Counter()

        @toolwire.tool
        def bump(n: int) -> str:
            """Count one effect."""
            self.ran[n] += 1
            return f"bumped {n}"

        self.tool = bump


def _agent(
    server: EmulationServer,
    effects: Effects,
    tmp_path: Path,
    *,
    stream_retries: int = 0,
    **options: Any,
) -> Agent:
    provider = OpenAIResponses(
        transport="websocket",
        base_url=server.url_for("openai-responses"),
        api_key="sk-test",
        **options,
    )
    return Agent(
        provider,
        model="gpt-test",
        tools=[effects.tool],
        journal=tmp_path / "journal.sqlite",
        max_turns=CALLS + 5,
        stream_retries=stream_retries,
    )


async def _run(agent: Agent) -> Any:
    try:
        return await agent.run("count")
    finally:
        await agent.aclose()  # the provider's HTTP connections


def _http_bodies(server: EmulationServer) -> list[dict[str, Any]]:
    """The requests that came over HTTP (a socket's messages have a ``type``)."""
    return [r for r in server.requests if isinstance(r, dict) and "type" not in r]


async def test_a_20_call_run_answers_over_one_socket(tmp_path: Path) -> None:
    effects = Effects()
    with EmulationServer(_scenario(CALLS)) as server:
        result = await _run(_agent(server, effects, tmp_path))
    assert result.outcome == "answered" and result.output == f"last: bumped {CALLS - 1}"
    assert effects.ran == Counter(range(CALLS))
    assert len(server.sockets) == 1  # one connection for the whole run
    (socket,) = server.sockets
    assert socket["responses"] == CALLS + 1
    first, *later = socket["messages"]
    assert first["type"] == "response.create" and "previous_response_id" not in first
    assert "stream" not in first and len(first["input"]) == 1  # the prompt
    for message in later:  # each carries the previous response's id and the tool's result only
        assert message["type"] == "response.create"
        assert message["previous_response_id"].startswith("resp_")
        assert [item["type"] for item in message["input"]] == ["function_call_output"]
        assert message["tools"] and message["model"] == "gpt-test"
    ids = [m["previous_response_id"] for m in later]
    assert len(set(ids)) == CALLS  # a new response continued each time
    assert _http_bodies(server) == []


async def test_a_socket_dropped_mid_run_goes_on_over_http(tmp_path: Path) -> None:
    effects = Effects()
    with EmulationServer(_scenario(CALLS), socket_close_after=5) as server:
        result = await _run(_agent(server, effects, tmp_path))
    assert result.output == f"last: bumped {CALLS - 1}"
    assert effects.ran == Counter(range(CALLS))  # each tool ran exactly once
    assert [s["responses"] for s in server.sockets] == [5]
    over_http = _http_bodies(server)
    assert len(over_http) == CALLS + 1 - 5
    # The first request over HTTP carries the whole context: the prompt and
    # five calls with their results, none of which ran again.
    first = over_http[0]
    assert "previous_response_id" not in first and first["stream"] is True
    kinds = Counter(item.get("type", "message") for item in first["input"])
    assert kinds == {"message": 1, "function_call": 5, "function_call_output": 5}


async def test_a_socket_cut_mid_response_is_a_broken_stream_asked_again_over_http(
    tmp_path: Path,
) -> None:
    effects = Effects()
    with EmulationServer(_scenario(6), socket_cut_in=3) as server:
        result = await _run(_agent(server, effects, tmp_path, stream_retries=1))
    assert result.output == "last: bumped 5"
    assert effects.ran == Counter(range(6))  # nothing of the cut turn ran
    (socket,) = server.sockets
    assert socket["responses"] == 2 and len(socket["messages"]) == 3
    over_http = _http_bodies(server)
    assert len(over_http) == 7 - 2  # the cut turn asked again, and the rest
    assert len(over_http[0]["input"]) == 1 + 2 * 2


async def test_a_forgotten_response_is_asked_again_over_http(tmp_path: Path) -> None:
    effects = Effects()
    with EmulationServer(_scenario(6), socket_forget_after=3) as server:
        result = await _run(_agent(server, effects, tmp_path))
    assert result.output == "last: bumped 5"
    assert effects.ran == Counter(range(6))
    (socket,) = server.sockets
    assert socket["responses"] == 3 and len(socket["messages"]) == 4  # the 4th was refused
    assert "previous_response_id" in socket["messages"][3]
    over_http = _http_bodies(server)
    assert len(over_http) == 7 - 3
    assert len(over_http[0]["input"]) == 1 + 2 * 3


async def test_a_socket_near_its_lifetime_is_replaced_before_a_turn(tmp_path: Path) -> None:
    now = [0.0]
    effects = Effects()
    tool = effects.tool

    @toolwire.tool
    def bump(n: int) -> str:
        """Count one effect; twenty minutes pass."""
        now[0] += 20 * 60
        return tool(n=n)  # type: ignore[no-any-return]

    effects.tool = bump
    with EmulationServer(_scenario(3)) as server:
        agent = _agent(server, effects, tmp_path, websocket_clock=lambda: now[0])
        result = await _run(agent)
    assert result.output == "last: bumped 2"
    # Turns at 0, 20 and 40 minutes share a socket; at 60 minutes (within 5
    # of its hour) a new one is opened, and its first turn carries everything.
    assert [s["responses"] for s in server.sockets] == [3, 1]
    renewed = server.sockets[1]["messages"][0]
    assert "previous_response_id" not in renewed and len(renewed["input"]) == 1 + 2 * 3
    assert _http_bodies(server) == []


async def test_a_socket_the_server_says_expired_is_replaced(tmp_path: Path) -> None:
    effects = Effects()
    with EmulationServer(_scenario(4), socket_expire_after=2) as server:
        result = await _run(_agent(server, effects, tmp_path))
    assert result.output == "last: bumped 3"
    assert effects.ran == Counter(range(4))
    # Two responses a socket, the third request refused and sent again on a
    # new socket, whole; nothing over HTTP.
    assert [s["responses"] for s in server.sockets] == [2, 2, 1]
    assert [len(s["messages"]) for s in server.sockets] == [3, 3, 1]
    assert "previous_response_id" in server.sockets[0]["messages"][2]
    renewed = server.sockets[1]["messages"][0]
    assert "previous_response_id" not in renewed and len(renewed["input"]) == 1 + 2 * 2
    assert _http_bodies(server) == []


async def test_a_refused_upgrade_sends_the_request_over_http() -> None:
    """A server that has no socket where one is asked for (a 403 to the upgrade)."""
    with EmulationServer(_scenario(1)) as server:
        provider = OpenAIResponses(base_url=server.url_for("openai-responses"), api_key="sk-test")
        mode = provider.wire.socket
        assert mode is not None
        async with HttpxTransport() as http:
            socket = SocketTransport(
                mode=mode, url=mode.url(server.base_url + "/v2"), headers={}, http=http
            )
            request = provider.build_request(model="gpt-test", messages=[UserMessage("count")])
            result = await provider.complete(request, transport=socket)
            await socket.aclose()
    assert [call.name for call in result.tool_calls] == ["bump"]
    assert socket.connections == 0 and socket.http_only
    assert socket.fallbacks and "could not be opened" in socket.fallbacks[0]
    assert len(_http_bodies(server)) == 1


async def test_a_socket_outlives_the_servers_deadline_for_a_request_head() -> None:
    """The emulation server closes a connection that does not finish its
    request head in time; an upgraded one has finished it and stays open."""
    from toolwire.testing import ServerLimits

    limits = ServerLimits(header_timeout=0.2)
    with EmulationServer(_scenario(1), limits=limits) as server:
        provider = OpenAIResponses(base_url=server.url_for("openai-responses"), api_key="k")
        mode = provider.wire.socket
        assert mode is not None
        socket = await connect(mode.url(provider.base_url), {}, open_within=10)
        try:
            await anyio.sleep(0.6)  # three deadlines for a head
            request = provider.build_request(model="gpt-test", messages=[UserMessage("count")])
            await socket.send(mode.message(request.json, None, None, ()).text)
            first = await socket.receive(10)
        finally:
            await socket.aclose()
    assert first is not None and json.loads(first)["type"] == "response.created"


def test_the_transport_word_is_checked() -> None:
    with pytest.raises(UsageError, match="transport"):
        OpenAIResponses(transport="carrier-pigeon", api_key="k")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="websocket_renew_before"):
        OpenAIResponses(transport="websocket", api_key="k", websocket_renew_before=3600)
    assert not OpenAIResponses(api_key="k", transport="http").websocket


def test_websocket_mode_without_wsproto_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "wsproto" else real(name, *a)
    )
    with pytest.raises(UsageError, match=r"toolwire\[websocket\]"):
        OpenAIResponses(transport="websocket", api_key="k")


async def test_the_messages_and_events_are_the_sdks_own_shapes() -> None:
    """What the client sends parses as the openai SDK's ``ResponseCreate``;
    what the server answers, refusals included, as its ``ResponsesServerEvent``."""
    from openai.types.responses.responses_client_event import ResponseCreate
    from openai.types.responses.responses_server_event import ResponsesServerEvent
    from pydantic import TypeAdapter

    server_event: TypeAdapter[Any] = TypeAdapter(ResponsesServerEvent)
    with EmulationServer(_scenario(1)) as server:
        provider = OpenAIResponses(base_url=server.url_for("openai-responses"), api_key="k")
        mode = provider.wire.socket
        assert mode is not None
        request = provider.build_request(model="gpt-test", messages=[UserMessage("count")])
        message = mode.message(request.json, None, None)
        ResponseCreate.model_validate_json(message.text)
        socket = await connect(
            mode.url(provider.base_url), {"authorization": "Bearer k"}, open_within=10
        )
        try:
            await socket.send(message.text)
            kinds = []
            while True:
                text = await socket.receive(10)
                assert text is not None
                event = json.loads(text)
                usage = (event.get("response") or {}).get("usage")
                if usage:  # newer than the recorded trace the emulation copies
                    usage["input_tokens_details"].setdefault("cache_write_tokens", 0)
                kinds.append(server_event.validate_python(event).type)
                if mode.read(text).kind == "end":
                    break
            continued = json.loads(message.text) | {"previous_response_id": "resp_unknown"}
            await socket.send(json.dumps(continued))
            refusal = await socket.receive(10)
            assert refusal is not None and mode.read(refusal).kind == "not_found"
            assert server_event.validate_json(refusal).error.code == "previous_response_not_found"
        finally:
            await socket.aclose()
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.function_call_arguments.delta" in kinds


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the SDK's socket is asyncio's
async def test_the_openai_sdks_own_socket_client_continues_a_response() -> None:
    """The emulation server's WebSocket mode, as the openai SDK's
    ``responses.connect()`` speaks it (over the ``websockets`` library)."""
    import openai

    tools: list[Any] = [
        {"type": "function", "name": "bump", "parameters": {"type": "object", "properties": {}}}
    ]
    with EmulationServer(_scenario(1)) as server:
        client = openai.AsyncOpenAI(base_url=server.url_for("openai-responses"), api_key="k")
        async with client.responses.connect() as connection:
            await connection.response.create(model="gpt-test", input="count", tools=tools)
            calls, response_id = [], None
            async for event in connection:
                if event.type == "response.output_item.done" and event.item.type == "function_call":
                    calls.append(event.item.call_id)
                if event.type == "response.completed":
                    response_id = event.response.id
                    break
            assert response_id is not None and len(calls) == 1
            result = {"type": "function_call_output", "call_id": calls[0], "output": "bumped 0"}
            await connection.response.create(
                model="gpt-test", previous_response_id=response_id, input=[result], tools=tools
            )
            async for event in connection:
                if event.type == "response.completed":
                    answer = event.response.output_text
                    break
        await client.close()
    assert answer == "last: bumped 0"
    assert server.sockets[0]["responses"] == 2


async def test_a_resumed_run_opens_its_own_socket_with_the_whole_context(tmp_path: Path) -> None:
    from toolwire.examples import PaymentLedger, payment_tool
    from toolwire.journal import Decision, SQLiteJournal, record_decision

    pay = {"to": "alice", "amount_cents": 1250}
    scenario = Scenario.from_dict(
        {
            "name": "bump-then-pay",
            "turns": [
                {"tool_calls": [{"name": "bump", "arguments": {"n": 0}}]},
                {"tool_calls": [{"name": "send_payment", "arguments": pay}]},
                {"text": "paid {result:send_payment.to}"},
            ],
        }
    )
    ledger = PaymentLedger(tmp_path / "ledger.sqlite3")
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    effects = Effects()
    with EmulationServer(scenario) as server:
        provider = OpenAIResponses(
            transport="websocket", base_url=server.url_for("openai-responses"), api_key="k"
        )
        tools = [effects.tool, payment_tool(ledger, requires_approval=True)]
        agent = Agent(provider, model="gpt-test", tools=tools, journal=journal)
        try:
            first = await agent.run("bump, then pay alice", run_id="run-ws")
            assert first.outcome == "suspended" and ledger.payments() == []
            (pending,) = first.pending
            assert record_decision(journal, "run-ws", Decision.allow(pending, principal="ops"))
            resumed = await agent.resume("run-ws")
        finally:
            await agent.aclose()
    assert resumed.output == "paid alice"
    assert effects.ran == Counter([0]) and len(ledger.payments()) == 1
    # The suspended run's socket answered its two turns; the resumed run, in
    # a socket of its own, sent its one turn whole (nothing to continue).
    assert [s["responses"] for s in server.sockets] == [2, 1]
    (whole,) = server.sockets[1]["messages"]
    assert "previous_response_id" not in whole
    kinds = Counter(item.get("type", "message") for item in whole["input"])
    assert kinds == {"message": 1, "function_call": 2, "function_call_output": 2}
