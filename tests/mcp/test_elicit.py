"""A server's question mid-call (elicitation) waits in the journal like an
approval: the run suspends and its process exits, a second process answers
with ``toolwire runs answer``, a third resumes it, and the person was asked
once. The server is a real process built with the official SDK; the model is
the emulation server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest

import toolwire
from toolwire.journal import QuestionAnswered, SQLiteJournal
from toolwire.mcp import connect_stdio
from toolwire.testing import EmulationServer, Scenario
from toolwire.tools import Question, QuestionAnswer

HERE = Path(__file__).parent
SRC = HERE.parent.parent / "src"
TURNS = [
    {"tool_calls": [{"name": "book_table", "arguments": {"restaurant": "Noma"}}]},
    {"text": "Done: {result:0}"},
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, timeout=120
    )


def test_a_question_suspends_the_run_until_answered_from_another_process(
    tmp_path: Path,
) -> None:
    journal_file = tmp_path / "journal.sqlite3"
    with EmulationServer(Scenario.from_dict({"name": "book", "turns": TURNS})) as model:
        env = {**os.environ, "PYTHONPATH": str(SRC), "TOOLWIRE_JOURNAL": str(journal_file),
               "MODEL_URL": model.url_for("openai-chat")}  # fmt: skip
        first = run(env, str(HERE / "elicit_run.py"), "start", "book a table at Noma")
        assert first.returncode == 0, first.stderr
        started = json.loads(first.stdout)
        assert started["outcome"] == "suspended"
        (pending,) = started["pending"]
        assert pending["awaiting"] == "answer" and pending["name"] == "book_table"
        assert pending["question"]["message"] == "How many guests at Noma?"
        assert pending["question"]["schema"]["required"] == ["count"]
        run_id, call_id = started["run_id"], pending["call_id"]

        listed = run(env, "-m", "toolwire", "runs", "pending", "--json")
        (waiting,) = json.loads(listed.stdout)["pending"]
        assert waiting["call_id"] == call_id and waiting["awaiting"] == "answer"
        assert waiting["question"]["source"] == "eliciting-server"

        answer = ["-m", "toolwire", "runs", "answer", run_id[:12], call_id]
        wrong = run(env, *answer, "--accept", '{"guests": 4}')
        assert wrong.returncode == 2 and "asks for no guests" in wrong.stderr
        approve = run(env, "-m", "toolwire", "runs", "approve", run_id, call_id, "--digest",
                      pending["digest"])  # fmt: skip
        assert approve.returncode == 2 and "waits for a person's answer" in approve.stderr
        answered = run(env, *answer, "--accept", '{"count": 4}', "--as", "ann")
        assert answered.returncode == 0, answered.stderr
        assert "answered the question" in answered.stdout
        assert json.loads(run(env, "-m", "toolwire", "runs", "pending", "--json").stdout) == {
            "pending": []
        }

        third = run(env, str(HERE / "elicit_run.py"), "resume", run_id)
        assert third.returncode == 0, third.stderr
        resumed = json.loads(third.stdout)
        last_request = json.dumps(model.requests[-1])
    assert resumed["outcome"] == "answered" and resumed["pending"] == []
    assert resumed["output"] == 'Done: {"result":"booked Noma for 4"}'
    assert "booked Noma for 4" in last_request  # the tool's result reached the model
    journal = SQLiteJournal(journal_file, read_only=True)
    try:
        events = journal.load_run(run_id).events
    finally:
        journal.close()
    answers = [e for e in events if e.kind == "question_answer"]
    assert len(answers) == 1 and answers[0].call_id == call_id  # the person was asked once
    assert [e.kind for e in events].count("run_suspended") == 1  # the resume did not ask again


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ["auto", "handshake"])
async def test_an_in_process_callback_answers_without_suspending_and_is_journaled(
    tmp_path: Path, protocol: Literal["auto", "handshake"]
) -> None:
    asked: list[Question] = []

    async def elicit(question: Question) -> QuestionAnswer:
        asked.append(question)
        return QuestionAnswer(action="accept", content={"count": 2})

    server_app = [str(HERE / "eliciting_server.py")]
    journal = SQLiteJournal(tmp_path / "runs.db")
    connecting = connect_stdio(sys.executable, server_app, elicit=elicit, protocol=protocol)
    async with connecting as server:
        with EmulationServer(Scenario.from_dict({"name": "book", "turns": TURNS})) as model:
            provider = toolwire.OpenAIChat(base_url=model.url_for("openai-chat"), api_key="k")
            tools = await server.tools()
            agent = toolwire.Agent(provider, model="m", tools=tools, journal=journal)
            try:
                result = await agent.run("book a table at Noma")
            finally:
                await agent.aclose()
    assert result.outcome == "answered"
    assert result.output == 'Done: {"result":"booked Noma for 4"}'.replace("4", "2")
    assert [q.message for q in asked] == ["How many guests at Noma?"]
    assert asked[0].source == "eliciting-server" and asked[0].digest.startswith("sha256:")
    events = journal.load_run(result.run_id).events
    (answered,) = [e for e in events if isinstance(e.record, QuestionAnswered)]
    assert answered.call_id == result.tool_calls[0].call.id
    assert answered.record == QuestionAnswered(
        name="book_table",
        digest=asked[0].digest,
        action="accept",
        content={"count": 2},
        principal="callback",
    )


def test_an_answer_given_in_process_is_journaled_and_not_asked_again_on_resume(
    tmp_path: Path,
) -> None:
    journal_file = tmp_path / "journal.sqlite3"
    with EmulationServer(Scenario.from_dict({"name": "book", "turns": TURNS})) as model:
        env = {**os.environ, "PYTHONPATH": str(SRC), "TOOLWIRE_JOURNAL": str(journal_file),
               "MODEL_URL": model.url_for("openai-chat")}  # fmt: skip
        # The process dies once the answer is journaled, before the outcome is.
        died = run(env, str(HERE / "elicit_run.py"), "answer-and-die", "book a table at Noma")
        assert died.returncode == 3, died.stderr
        journal = SQLiteJournal(journal_file, read_only=True)
        try:
            (started,) = journal.list_runs()
        finally:
            journal.close()
        resumed = run(env, str(HERE / "elicit_run.py"), "resume-asking", started.run_id)
    assert resumed.returncode == 0, resumed.stderr
    found = json.loads(resumed.stdout)
    assert found["asked"] == []  # the journal answered the server's question again
    assert found["output"] == 'Done: {"result":"booked Noma for 3"}'


@pytest.mark.anyio
async def test_outside_a_run_nobody_answers_and_sampling_is_refused() -> None:
    server_app = [str(HERE / "eliciting_server.py")]
    async with connect_stdio(sys.executable, server_app) as server:
        tools = await server.tools()
        asked, sampled = await toolwire.Toolbox(tools).execute(
            [
                toolwire.ToolCall(id="c", name="book_table", arguments={"restaurant": "Noma"}),
                toolwire.ToolCall(id="s", name="summarize", arguments={"text": "a long text"}),
            ]
        )
    # No run to suspend, no callback: the server is told the question was dismissed.
    assert asked.ok and "not booked (cancel)" in asked.content
    # toolwire declares no sampling capability: the server cannot ask its model.
    assert not sampled.ok and "did not declare the sampling capability" in sampled.message
