"""Steering over the Responses WebSocket, its pure half: the steer message,
what its acknowledgements mean to the client, a continuation that leaves
the held steers out, and the emulation server's session, each shape checked
against the openai SDK's own types."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter

from toolwire.http.transport import HttpxTransport
from toolwire.providers import SocketTransport
from toolwire.providers._socket import _Batch
from toolwire.stream.codecs import wire_dialect
from toolwire.stream.codecs.emulation.openai_responses_session import ResponsesSession
from toolwire.stream.codecs.openai_responses_socket import (
    read_message,
    socket_message,
    steer_message,
)
from toolwire.stream.codecs.websocket import SocketRead

USER = {"role": "user", "content": "count"}
CALL = {"type": "function_call", "call_id": "call_1", "name": "bump", "arguments": "{}"}
RESULT = {"type": "function_call_output", "call_id": "call_1", "output": "ok"}
STEER = {"role": "user", "content": "count faster"}


def _server_event(payload: dict[str, Any]) -> Any:
    from openai.types.beta.beta_responses_server_event import BetaResponsesServerEvent

    adapter: TypeAdapter[Any] = TypeAdapter(BetaResponsesServerEvent)
    return adapter.validate_python({"sequence_number": 0, **payload})


def _end(kind: str, response_id: str, output: list[Any], reason: str | None = None) -> str:
    response: dict[str, Any] = {"id": response_id, "output": output}
    if reason is not None:
        response["incomplete_details"] = {"reason": reason}
    return json.dumps({"type": kind, "response": response})


def test_the_steer_message_is_the_sdks_event() -> None:
    from openai.types.beta.beta_response_steer_event import BetaResponseSteerEvent

    text = steer_message("resp_1", ["go left", "then right"])
    event = BetaResponseSteerEvent.model_validate_json(text)
    assert event.previous_response_id == "resp_1"
    assert json.loads(text)["input"] == [
        {"type": "message", "role": "user", "content": "go left"},
        {"type": "message", "role": "user", "content": "then right"},
    ]
    assert wire_dialect("openai-responses").socket.steer is steer_message  # type: ignore[union-attr]


def test_what_the_client_reads_of_starts_ends_and_acknowledgements() -> None:
    created = json.dumps({"type": "response.created", "response": {"id": "resp_2"}})
    assert read_message(created) == SocketRead("created", "resp_2")
    for ack in ("accepted", "failed", "pending"):
        text = json.dumps({"type": f"response.steer.{ack}", "steer": {"id": "steer_1"}})
        assert read_message(text) == SocketRead("steer", steer=ack)  # type: ignore[arg-type]
    steered = _end("response.incomplete", "resp_2", [], "steered")
    assert read_message(steered) == SocketRead("end", "resp_2", successor=True)
    other = _end("response.incomplete", "resp_2", [], "max_output_tokens")
    assert read_message(other) == SocketRead("end", "resp_2")
    assert read_message(_end("response.completed", "resp_2", [])) == SocketRead("end", "resp_2")


def test_a_continuation_leaves_out_the_steers_the_server_holds() -> None:
    body = {"model": "m", "stream": True, "input": [USER, CALL, RESULT, STEER]}
    held = socket_message(body, "resp_1", [USER], ["count faster"])
    assert held.continued and json.loads(held.text)["input"] == [RESULT]
    plain = socket_message(body, "resp_1", [USER], [])
    assert json.loads(plain.text)["input"] == [RESULT, STEER]
    # Only the held text is left out, once.
    twice = {**body, "input": [USER, CALL, RESULT, STEER, STEER]}
    assert json.loads(socket_message(twice, "resp_1", [USER], ["count faster"]).text)["input"] == [
        RESULT,
        STEER,
    ]


def test_the_session_commits_a_steer_to_a_successor_it_starts() -> None:
    session = ResponsesSession()
    body, _ = session.request(
        json.dumps({"type": "response.create", "model": "m", "input": [USER]})
    )
    assert body is not None
    accepted = session.steer(steer_message("resp_1", ["count faster"]), "resp_1")
    assert accepted is not None and accepted["type"] == "response.steer.accepted"
    _server_event(accepted)
    said = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "1"}],
    }
    payloads = [json.loads(_end("response.completed", "resp_1", [said]))]
    session.answered(body, payloads)
    follow = session.follow(body, payloads)
    assert follow.events == [] and follow.successor is not None
    steer_item = {"type": "message", "role": "user", "content": "count faster"}
    assert follow.successor["input"] == [USER, said, steer_item]


def test_the_session_holds_a_steer_for_the_calls_answer() -> None:
    session = ResponsesSession()
    body, _ = session.request(
        json.dumps({"type": "response.create", "model": "m", "input": [USER]})
    )
    assert body is not None
    session.steer(steer_message("resp_1", ["count faster"]), "resp_1")
    payloads = [json.loads(_end("response.completed", "resp_1", [CALL]))]
    session.answered(body, payloads)
    follow = session.follow(body, payloads)
    (pending,) = follow.events
    assert follow.successor is None
    assert pending["required_input"] == [
        {"type": "function_call_output", "call_id": "call_1", "name": "bump"}
    ]
    _server_event(pending)
    continued = {"type": "response.create", "previous_response_id": "resp_1", "input": [RESULT]}
    again, _ = session.request(json.dumps(continued))
    steer_item = {"type": "message", "role": "user", "content": "count faster"}
    assert again is not None and again["input"] == [USER, CALL, steer_item, RESULT]


def test_the_session_refuses_a_steer_of_a_response_not_streaming() -> None:
    session = ResponsesSession()
    failed = session.steer(steer_message("resp_9", ["x"]), "resp_1")
    assert failed is not None and failed["type"] == "response.steer.failed"
    assert failed["error"]["code"] == "response_not_active"
    _server_event(failed)
    assert session.steer(steer_message("resp_9", ["x"]), None)["type"] == "response.steer.failed"  # type: ignore[index]
    assert session.steer(json.dumps({"type": "response.create"}), "resp_1") is None


@pytest.mark.anyio
async def test_acknowledgements_settle_the_batches_in_the_order_sent() -> None:
    mode = wire_dialect("openai-responses").socket
    assert mode is not None
    async with HttpxTransport() as http:
        socket = SocketTransport(
            mode=mode, url="ws://127.0.0.1:9/v1/responses", headers={}, http=http
        )
        socket._batches = [_Batch(1, ("a",)), _Batch(2, ("b",)), _Batch(3, ("c",))]
        socket._acknowledged("accepted")
        socket._acknowledged("accepted")
        socket._acknowledged("pending")  # the oldest accepted
        assert socket.steer_fates() == {1: "pending"}
        assert socket.steering
        socket._acknowledged("failed")  # the oldest not yet accepted: 3
        assert socket.steer_fates() == {3: "returned"}
        assert not socket.steering, "a refused steer: later ones cut the stream"
        await socket._drop()  # the socket's end returns what it did not settle
        assert socket.steer_fates() == {2: "returned"}
        assert socket._held == []
