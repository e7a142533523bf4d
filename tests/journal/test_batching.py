"""Records committed together: what goes in one transaction, that a batch is
all or nothing, that a failed commit loses no more than a crash would, and
that a journal of the previous schema is upgraded (or read as it is)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from toolwire.journal import (
    JournalError,
    RunLog,
    RunSummary,
    SQLiteJournal,
    Step,
)
from toolwire.testing import EmulationServer

from ._support import Counter, expected_answer, make_agent, scenario

pytestmark = pytest.mark.anyio

HEADER = json.dumps({"model": "m", "provider": "openai", "dialect": "openai-chat"})


class Commits(SQLiteJournal):
    """A SQLite journal that notes the kinds of each transaction's records."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.commits: list[list[str]] = []

    def record_steps(self, run_id: str, steps: Sequence[Step]) -> None:
        super().record_steps(run_id, steps)
        self.commits.append([step.kind for step in steps])


class OneByOne:
    """The journal protocol without ``record_steps``: one write per record."""

    def __init__(self, inner: SQLiteJournal) -> None:
        self.inner = inner
        self.writes: list[str] = []

    def record_run(self, run_id: str, **kwargs: Any) -> int:
        self.writes.append("run_started")
        return self.inner.record_run(run_id, **kwargs)

    def record_event(self, run_id: str, kind: str, data: str, **kwargs: Any) -> int:
        self.writes.append(kind)
        return self.inner.record_event(run_id, kind, data, **kwargs)

    def record_end(self, run_id: str, **kwargs: Any) -> None:
        self.writes.append("run_finished")
        self.inner.record_end(run_id, **kwargs)

    def load_run(self, run_id: str) -> RunLog:
        return self.inner.load_run(run_id)

    def list_runs(self, *, limit: int = 50) -> list[RunSummary]:
        return self.inner.list_runs(limit=limit)

    def find_run(self, ref: str) -> str:
        return self.inner.find_run(ref)

    def lease(self, run_id: str) -> Any:
        return self.inner.lease(run_id)

    def close(self) -> None:
        self.inner.close()


async def test_a_run_commits_each_record_with_the_next_one_that_must_be_on_disk(
    tmp_path: Path,
) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    journal = Commits(tmp_path / "j.sqlite3")
    seen: list[list[str]] = []

    original = counter.ledger.pay

    def pay(*args: Any, **kwargs: Any) -> Any:
        # The tool's body runs after its intent, and the answer that asked
        # for it, are on disk.
        seen.append([e.kind for e in journal.load_run("run-1").events])
        return original(*args, **kwargs)

    counter.ledger.pay = pay  # type: ignore[method-assign]
    with EmulationServer(scenario()) as server:
        agent = make_agent(server, counter.tools, journal=journal)
        result = await agent.run("pay alice", run_id="run-1")
        await agent.aclose()
    assert result.output == expected_answer(counter)
    assert journal.commits == [
        ["run_started", "model_request"],
        ["model_response", "tool_intent", "tool_intent", "tool_intent"],
        ["tool_outcome"],
        ["tool_outcome"],
        ["tool_outcome"],
        ["model_request"],
        ["model_response", "run_finished"],
    ]
    assert seen and seen[0][:4] == ["run_started", "model_request", "model_response", "tool_intent"]
    log = journal.load_run("run-1")
    assert [e.seq for e in log.events] == list(range(1, 13))
    assert log.problems() == [] and log.run.status == "answered"
    assert log.run.output == result.output
    journal.close()


async def test_a_journal_without_record_steps_gets_the_same_records_one_by_one(
    tmp_path: Path,
) -> None:
    batched = Commits(tmp_path / "a.sqlite3")
    single = OneByOne(SQLiteJournal(tmp_path / "b.sqlite3"))
    logs = []
    for journal in (batched, single):
        counter = Counter(tmp_path / f"ledger-{len(logs)}.sqlite3")
        with EmulationServer(scenario()) as server:
            agent = make_agent(server, counter.tools, journal=journal)  # type: ignore[arg-type]
            await agent.run("pay alice", run_id="run-1")
            await agent.aclose()
        logs.append(journal.load_run("run-1"))
    kinds = [[e.kind for e in log.events] for log in logs]
    assert kinds[0] == kinds[1]
    assert single.writes == [k for group in batched.commits for k in group]
    assert [m["kind"] for m in logs[0].messages] == [m["kind"] for m in logs[1].messages]
    assert len(logs[0].messages) == 5  # user, assistant, three results
    batched.close()
    single.close()


def test_a_batch_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    bad = Step("model_request", None, 1, 1)  # type: ignore[arg-type]  # data NOT NULL
    with pytest.raises(JournalError, match="cannot write"):
        journal.record_steps("r", [Step("run_started", HEADER), bad])
    with pytest.raises(JournalError, match="no run"):
        journal.load_run("r")
    # Nothing of the failed batch is remembered: the run starts afresh.
    journal.record_steps(
        "r",
        [
            Step("run_started", HEADER, messages=['{"kind":"user","text":"hi"}']),
            Step("model_request", '{"messages":1,"new":0}', 1, 1),
        ],
    )
    journal.record_event("r", "model_response", "{}", turn=1, attempt=1)
    log = journal.load_run("r")
    assert [(e.seq, e.kind) for e in log.events] == [
        (1, "run_started"),
        (2, "model_request"),
        (3, "model_response"),
    ]
    assert log.messages == ({"kind": "user", "text": "hi"},)
    journal.close()


async def test_a_taken_run_id_fails_the_run_and_leaves_the_other_run_alone(
    tmp_path: Path,
) -> None:
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    counter = Counter(tmp_path / "ledger.sqlite3")
    with EmulationServer(scenario()) as server:
        agent = make_agent(server, counter.tools, journal=journal)
        await agent.run("pay alice", run_id="dup")
        before = journal.load_run("dup")
        with pytest.raises(JournalError, match="already in the journal"):
            await agent.run("pay alice", run_id="dup")
        await agent.aclose()
    after = journal.load_run("dup")
    assert after == before and after.run.status == "answered"
    assert len(counter.ledger.payments()) == 1
    journal.close()


class FailsOnce(SQLiteJournal):
    """A journal whose commit of the first tool intent fails (a full disk)."""

    failed = False

    def record_steps(self, run_id: str, steps: Sequence[Step]) -> None:
        if not self.failed and any(step.kind == "tool_intent" for step in steps):
            self.failed = True
            raise JournalError("cannot write to the journal: database or disk is full")
        super().record_steps(run_id, steps)


async def test_a_failed_commit_loses_no_more_than_a_crash_and_resume_finishes(
    tmp_path: Path,
) -> None:
    journal = FailsOnce(tmp_path / "j.sqlite3")
    counter = Counter(tmp_path / "ledger.sqlite3")
    with EmulationServer(scenario()) as server:
        agent = make_agent(server, counter.tools, journal=journal)
        with pytest.raises(JournalError, match="disk is full"):
            await agent.run("pay alice", run_id="run-1")
        assert counter.ledger.payments() == [] and counter.notes == []
        log = journal.load_run("run-1")
        # The answer staged with the failed intent is gone with it, as if
        # the process had died before writing either: the turn is asked again.
        assert [e.kind for e in log.events] == ["run_started", "model_request", "run_failed"]
        assert log.run.status == "failed" and log.problems() == []
        result = await agent.resume("run-1")
        await agent.aclose()
    assert result.output == expected_answer(counter)
    assert len(counter.ledger.payments()) == 1 and counter.notes == ["paying alice"]
    journal.close()


SCHEMA_1 = """
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY, started_at REAL NOT NULL, updated_at REAL NOT NULL,
    status TEXT NOT NULL, header TEXT NOT NULL, summary TEXT,
    resumes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_start ON runs (started_at);
CREATE TABLE events (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, at REAL NOT NULL, kind TEXT NOT NULL,
    turn INTEGER, attempt INTEGER, call_id TEXT, data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE TABLE messages (
    run_id TEXT NOT NULL, position INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
) WITHOUT ROWID;
PRAGMA user_version = 1;
"""


def _schema_1_file(path: Path) -> None:
    """A journal as toolwire wrote it before schema 2: two runs, the older
    one finished, the newer one interrupted after its first request."""
    with sqlite3.connect(path) as db:
        db.executescript(SCHEMA_1)
        summary = '{"turns":1,"tool_calls":0,"usage":{},"output":"done"}'
        db.execute(
            "INSERT INTO runs VALUES ('old', 1.0, 2.0, 'answered', ?, ?, 0)", (HEADER, summary)
        )
        db.execute("INSERT INTO runs VALUES ('new', 3.0, 3.0, 'running', ?, NULL, 0)", (HEADER,))
        for run_id, kinds in (
            ("old", ["run_started", "model_request", "model_response", "run_finished"]),
            ("new", ["run_started", "model_request"]),
        ):
            for seq, kind in enumerate(kinds, start=1):
                turn = 1 if kind.startswith("model") else None
                data = summary if kind == "run_finished" else "{}"
                db.execute(
                    "INSERT INTO events VALUES (?, ?, 0.0, ?, ?, ?, NULL, ?)",
                    (run_id, seq, kind, turn, turn, data),
                )
            db.execute(
                "INSERT INTO messages VALUES (?, 0, ?)",
                (run_id, json.dumps({"kind": "user", "text": f"hi {run_id}"})),
            )
    path.chmod(0o600)


def _shape(journal: SQLiteJournal) -> list[Any]:
    return [
        (
            summary.run_id,
            summary.status,
            summary.output,
            [(e.seq, e.kind) for e in journal.load_run(summary.run_id).events],
            journal.load_run(summary.run_id).messages,
        )
        for summary in journal.list_runs()
    ]


def test_a_schema_1_journal_is_read_as_it_is_and_upgraded_by_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    _schema_1_file(path)
    reader = SQLiteJournal(path, read_only=True)
    shape = _shape(reader)
    assert [row[0] for row in shape] == ["new", "old"]  # newest first
    assert shape[1][1:3] == ("answered", "done")
    assert shape[0][4] == ({"kind": "user", "text": "hi new"},)
    assert reader.find_run("last") == "new"
    reader.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 1  # a reader changes nothing

    writer = SQLiteJournal(path)
    assert _shape(writer) == shape
    # The interrupted run continues where it stood, numbering included.
    assert writer.record_run("new", header=HEADER, messages=[], resumed=True) == 1
    writer.record_event("new", "model_response", "{}", turn=1, attempt=1)
    writer.close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 3
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert not any(name.endswith("_v1") for name in tables)
    assert "blobs" in tables
    again = SQLiteJournal(path, read_only=True)
    log = again.load_run("new")
    assert [(e.seq, e.kind) for e in log.events] == [
        (1, "run_started"),
        (2, "model_request"),
        (3, "run_resumed"),
        (4, "model_response"),
    ]
    assert log.problems() == []
    again.close()


class StartedOnly:
    """An observer that is not a RunObserver and knows only ``tool_started``."""

    def __init__(self) -> None:
        self.started: list[tuple[str, str]] = []

    async def tool_started(
        self, run_id: str, turn: int, call: Any, idempotency_key: str, *, eager: bool = False
    ) -> None:
        self.started.append((call.name, idempotency_key))


async def test_an_observer_of_single_intents_is_told_of_each_call_of_a_batch(
    tmp_path: Path,
) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    duck = StartedOnly()
    with EmulationServer(scenario()) as server:
        agent = make_agent(server, counter.tools, journal=False, observers=[duck])  # type: ignore[list-item]
        await agent.run("pay alice")
        await agent.aclose()
    assert [name for name, _ in duck.started] == ["send_payment", "notify", "get_weather"]
    assert all(key.startswith("tw-") for _, key in duck.started)
