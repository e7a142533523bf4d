"""Call ids from a model that a text column cannot hold as they are (a lone
surrogate from a ``\\ud800`` escape, a NUL, which PostgreSQL's text
refuses) are stored in one place per sink: the run completes, resumes on
SQLite and on a real PostgreSQL, and the tool's result goes back to the
model under the id it sent."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolwire import tool
from toolwire.journal._records import column_text, text_from_column
from toolwire.testing import EmulationServer, Scenario

from ._support import CrashAt, crashing_agent, expect_crash, make_agent
from .conftest import OpenJournal

pytestmark = pytest.mark.anyio

IDS = ["call\ud800x", "call\x00y", '"quoted"', "call\udfff\x00"]


@tool(read_only=True)
def echo(text: str) -> str:
    """Say it back.

    Args:
        text: what to say.
    """
    return f"got {text}"


def _scenario(call_id: str) -> Scenario:
    return Scenario.from_dict(
        {
            "name": "ids",
            "turns": [
                {
                    "tool_calls": [
                        {"name": "echo", "arguments": {"text": "hi"}, "fields": {"id": call_id}}
                    ]
                },
                {"text": "done: {result:echo}"},
            ],
        }
    )


def _fed_back(server: EmulationServer) -> list[str]:
    last = server.requests[-1]
    return [m["tool_call_id"] for m in last["messages"] if m.get("role") == "tool"]


@pytest.mark.parametrize("call_id", IDS)
async def test_a_run_with_such_an_id_completes(open_journal: OpenJournal, call_id: str) -> None:
    with EmulationServer(_scenario(call_id)) as server:
        agent = make_agent(server, [echo], journal=open_journal())
        result = await agent.run("go", run_id="r1")
        await agent.aclose()
        assert result.output == "done: got hi"
        assert _fed_back(server) == [call_id]
    log = open_journal().load_run("r1")
    assert {e.call_id for e in log.events if e.kind == "tool_outcome"} == {call_id}


@pytest.mark.parametrize("call_id", IDS)
async def test_a_run_with_such_an_id_resumes(
    open_journal: OpenJournal, call_id: str, tmp_path: Path
) -> None:
    with EmulationServer(_scenario(call_id)) as server:
        crash = CrashAt("tool_finished")
        first = crashing_agent(server, [echo], open_journal(), crash, before_journal=False)
        await expect_crash(first.run("go", run_id="r1"))
        await first.aclose()
        second = make_agent(server, [echo], journal=open_journal())
        result = await second.resume("r1")
        await second.aclose()
        assert result.output == "done: got hi"
        assert _fed_back(server) == [call_id]


@pytest.mark.parametrize("text", [*IDS, "plain", "", '"', 'a"b', "é日本"])
def test_the_column_form_reads_back(text: str) -> None:
    stored = column_text(text)
    assert stored is not None
    stored.encode("utf-8")
    assert "\x00" not in stored
    assert text_from_column(stored) == text


def test_storable_ids_are_stored_as_they_are() -> None:
    assert column_text("call_abc-1") == "call_abc-1"
    assert column_text(None) is None


def test_an_older_raw_id_with_a_quote_reads_back_as_it_is() -> None:
    assert text_from_column('"abc') == '"abc'
    assert text_from_column('"1"x') == '"1"x'
