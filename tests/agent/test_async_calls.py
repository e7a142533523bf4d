"""Asynchronous tool calls (a Responses function tool declared ``async: true``):
the call starts while the model keeps streaming, its intent is journaled
before its effect, and its effect happens once across a stream sent again.
The Agent over real HTTP against the emulation server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent.test_agent_http import agent_for, collect, fast_transport
from toolwire import tool
from toolwire.events import TextDelta, ToolCallReady
from toolwire.journal import SQLiteJournal, ToolIntent
from toolwire.run import ToolExecutionFinished, ToolExecutionStarted
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

TAIL = "While the booking runs, here is what happens next: " + "more words " * 20


def booking(**turn: Any) -> Scenario:
    """A turn with an asynchronous call, then text streamed after it; then an answer."""
    call = {"name": "book", "arguments": {"room": "A"}, "fields": {"async": True}}
    first = {"tool_calls": [call], "text": TAIL, "chunk_size": 8, **turn}
    return Scenario.from_dict({"turns": [first, {"text": "booked: {result:book}"}]})


def booker(effects: list[str]) -> Any:
    @tool(asynchronous=True)
    def book(room: str) -> str:
        """Book a room.

        Args:
            room: the room.
        """
        effects.append(room)
        return f"room {room} booked"

    return book


async def test_an_async_call_starts_while_the_text_keeps_streaming() -> None:
    effects: list[str] = []
    with EmulationServer(booking()) as server:
        agent = agent_for(server, "openai-responses", [booker(effects)])
        events, result = await collect(agent, "book A")
        first, second = server.requests
    assert effects == ["A"]
    assert result.output == "booked: room A booked" and result.turns == 2
    # The tool is declared async, and the call goes back as it came.
    assert first["tools"][0]["async"] is True
    call_item, output = [i for i in second["input"] if i.get("type", "").startswith("function")]
    assert call_item["async"] is True and output["output"] == "room A booked"
    ready = next(i for i, e in enumerate(events) if isinstance(e, ToolCallReady))
    started = next(i for i, e in enumerate(events) if isinstance(e, ToolExecutionStarted))
    deltas = [i for i, e in enumerate(events) if isinstance(e, TextDelta)]
    assert ready < started < deltas[-1], "the call started before the text ended"
    assert result.tool_calls[0].call.asynchronous and result.tool_calls[0].eager


async def test_a_stream_sent_again_reuses_the_async_outcome(tmp_path: Path) -> None:
    effects: list[str] = []
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    fault = {"error_event": {"message": "overloaded", "code": "server_error"}, "at_chunk": 40}
    with EmulationServer(booking(faults=[fault])) as server:
        agent = agent_for(
            server,
            "openai-responses",
            [booker(effects)],
            transport=fast_transport(),
            stream_retries=1,
            journal=journal,
        )
        events, result = await collect(agent, "book A")
        count = len(server.requests)
    assert count == 3, "the first answer sent again once, then the second turn"
    assert effects == ["A"], "the effect happened once across both attempts"
    assert result.output == "booked: room A booked"
    finished = [e for e in events if isinstance(e, ToolExecutionFinished)]
    assert len(finished) == 1
    log = journal.load_run(result.run_id)
    intents = [e.record for e in log.events if isinstance(e.record, ToolIntent)]
    assert [(i.name, i.asynchronous, i.eager) for i in intents] == [("book", True, True)]
    journal.close()


def test_the_call_is_journaled_asynchronous() -> None:
    from toolwire.messages import AssistantMessage
    from toolwire.types import ToolCall

    call = ToolCall(id="c", name="book", arguments={}, asynchronous=True)
    message = AssistantMessage(text="", tool_calls=(call,))
    again = AssistantMessage.from_dict(json.loads(json.dumps(message.to_dict())))
    assert again.tool_calls[0] == call
