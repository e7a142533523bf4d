"""The Responses WebSocket mode's pure half: URLs, messages, what a message means,
and the emulation server's session."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolwire import StreamDecoder
from toolwire.errors import UsageError
from toolwire.stream.codecs import wire_dialect
from toolwire.stream.codecs.emulation.openai_responses_session import ResponsesSession
from toolwire.stream.codecs.openai_responses_socket import (
    frame,
    new_items,
    read_message,
    socket_message,
    socket_url,
)
from toolwire.stream.codecs.websocket import SocketRead

USER = {"role": "user", "content": "count"}
CALL = {"type": "function_call", "call_id": "call_1", "name": "bump", "arguments": "{}"}
RESULT = {"type": "function_call_output", "call_id": "call_1", "output": "ok"}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}


def test_the_socket_of_a_base_url() -> None:
    assert socket_url("https://api.openai.com/v1/") == "wss://api.openai.com/v1/responses"
    assert socket_url("http://127.0.0.1:8000/v1") == "ws://127.0.0.1:8000/v1/responses"
    with pytest.raises(UsageError):
        socket_url("ftp://example.com/v1")
    assert wire_dialect("openai-responses").socket is not None
    assert wire_dialect("openai-chat").socket is None


@pytest.mark.parametrize(
    ("previous", "current", "added"),
    [
        ([USER], [USER, CALL, RESULT], [RESULT]),
        ([USER], [USER, REASONING, CALL, RESULT], [RESULT]),
        ([USER], [USER, CALL, RESULT, USER], [RESULT, USER]),
        ([USER], [USER, CALL], None),  # nothing new after the model's output
        ([USER], [{"role": "user", "content": "other"}, CALL, RESULT], None),  # another history
        ([USER, CALL], [USER], None),  # shorter
        ([USER], [USER, CALL, RESULT, CALL], None),  # the model's item among the new ones
    ],
)
def test_the_new_items_come_after_the_models_output(
    previous: list[Any], current: list[Any], added: list[Any] | None
) -> None:
    assert new_items(previous, current) == added


def test_a_message_continues_the_previous_response_with_the_new_items_only() -> None:
    body = {"model": "m", "input": [USER, CALL, RESULT], "stream": True, "tools": []}
    whole = socket_message(body, None, None)
    sent = json.loads(whole.text)
    assert next(iter(sent)) == "type" and sent["type"] == "response.create"
    assert "stream" not in sent and sent["input"] == body["input"] and not whole.continued
    continued = socket_message(body, "resp_1", [USER])
    sent = json.loads(continued.text)
    assert sent["previous_response_id"] == "resp_1" and sent["input"] == [RESULT]
    assert continued.continued and continued.input == body["input"]
    other = socket_message(body, "resp_1", [{"role": "user", "content": "x"}])
    assert not other.continued and "previous_response_id" not in json.loads(other.text)


def test_only_an_end_or_an_error_is_parsed() -> None:
    delta = '{"type":"response.output_text.delta","delta":"response.completed"}'
    assert read_message(delta) == SocketRead("event")
    done = '{"type":"response.completed","response":{"id":"resp_9","output":[]}}'
    assert read_message(done) == SocketRead("end", "resp_9")
    assert read_message('{"response":{"id":"r"},"type":"response.incomplete"}').kind == "end"
    not_found = '{"type":"error","code":"previous_response_not_found","message":"gone"}'
    assert read_message(not_found).kind == "not_found"
    nested = {"type": "error", "error": {"code": "websocket_connection_limit_reached"}}
    assert read_message(json.dumps(nested)).kind == "expired"
    assert read_message('{"type":"error","code":"rate_limit_exceeded"}').kind == "end"
    assert read_message("not json").kind == "event"


def test_a_framed_message_decodes_as_its_sse_event() -> None:
    decoder = StreamDecoder("openai-responses")
    pretty = json.dumps({"type": "response.output_text.delta", "delta": "hi\n"}, indent=2)
    decoder.feed(frame(pretty))
    assert decoder.result().choices[0].text == "hi\n"


def test_the_session_reads_a_continued_response_whole() -> None:
    session = ResponsesSession()
    body, refused = session.request(json.dumps({"type": "response.create", "input": "count"}))
    assert refused is None and body is not None and body["stream"] is True
    done = {"type": "response.completed", "response": {"id": "resp_1", "output": [CALL]}}
    session.answered(body, [{"type": "response.created"}, done])
    message = {"type": "response.create", "previous_response_id": "resp_1", "input": [RESULT]}
    body, refused = session.request(json.dumps(message))
    assert body is not None and body["input"] == [USER, CALL, RESULT]
    assert "previous_response_id" not in body
    session.forget()
    body, refused = session.request(json.dumps(message))
    assert body is None and refused is not None
    assert refused["error"]["code"] == "previous_response_not_found"
    body, refused = session.request('{"type": "response.cancel"}')
    assert body is None and refused is not None and refused["type"] == "error"
