"""What the docs promise about running a call again after a crash, checked
sentence by sentence against a real journal: a crash leaves a call started
(its intent recorded) without an outcome, and another agent resumes the run.

README.md and docs/reliability.md say: a call with a recorded outcome is not
run again; one that started without an outcome runs again only if the tool
is ``read_only`` or ``idempotent=True`` (with the same ``ctx.idempotency_key``
as the first time); taking ``ctx.idempotency_key`` alone does not make a
tool run again: the model is told the call was interrupted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolwire import Tool, ToolContext, tool
from toolwire.journal import SQLiteJournal
from toolwire.testing import EmulationServer, Scenario

from ._support import CrashAt, crashing_agent, expect_crash, make_agent

pytestmark = pytest.mark.anyio

README = Path(__file__).resolve().parents[2] / "README.md"
RELIABILITY = README.parent / "docs" / "reliability.md"


def _tool(kind: str, ran: list[str | None]) -> Tool:
    """A tool named ``act`` of one kind, noting each run (with its key)."""
    if kind == "plain":

        def act(what: str) -> str:
            """Act."""
            ran.append(None)
            return "acted"

        return tool(act)

    def act_with_key(what: str, ctx: ToolContext | None = None) -> str:
        """Act."""
        ran.append(ctx.idempotency_key if ctx is not None else None)
        return "acted"

    options: dict[str, Any] = {
        "read_only": {"read_only": True},
        "idempotent": {"idempotent": True},
        "takes_key": {},
    }[kind]
    return tool(name="act", **options)(act_with_key)


def _scenario() -> Scenario:
    turns = [{"tool_calls": [{"name": "act", "arguments": {"what": "x"}}]}, {"text": "done"}]
    return Scenario.from_dict({"name": "act", "turns": turns})


async def _crash_and_resume(
    tmp_path: Path, kind: str, hook: str
) -> tuple[list[str | None], list[str | None], Any, str]:
    """Crash at ``hook`` for ``act`` (once journaled), then resume in a new
    agent: the runs before and after, the result, and the recorded key."""
    journal = SQLiteJournal(tmp_path / "j.sqlite3")
    before: list[str | None] = []
    after: list[str | None] = []
    with EmulationServer(_scenario()) as server:
        first = crashing_agent(
            server, [_tool(kind, before)], journal, CrashAt(hook, name="act"), before_journal=False
        )
        await expect_crash(first.run("act", run_id="run-claims"))
        await first.aclose()
        log = journal.load_run("run-claims")
        intent = next(e for e in log.events if e.kind == "tool_intent")
        assert ("tool_outcome" in {e.kind for e in log.events}) == (hook == "tool_finished")
        second = make_agent(server, [_tool(kind, after)], journal=journal)
        result = await second.resume("run-claims")
        await second.aclose()
    return before, after, result, str(intent.data["idempotency_key"])


@pytest.mark.parametrize("kind", ["read_only", "idempotent"])
async def test_a_read_only_or_idempotent_call_runs_again_with_the_same_key(
    tmp_path: Path, kind: str
) -> None:
    before, after, result, key = await _crash_and_resume(tmp_path, kind, "tool_started")
    assert before == [] and len(after) == 1  # the crash came before the body ran
    assert after == [key]  # the same ctx.idempotency_key as the first time
    assert result.output == "done" and result.tool_calls[0].result.ok


@pytest.mark.parametrize("kind", ["takes_key", "plain"])
async def test_any_other_started_call_is_answered_as_interrupted(tmp_path: Path, kind: str) -> None:
    before, after, result, _ = await _crash_and_resume(tmp_path, kind, "tool_started")
    assert before == [] and after == []  # not run again, ctx.idempotency_key or not
    (record,) = result.tool_calls
    assert record.result.error == "failed"
    assert json.loads(record.result.content)["error"] == "interrupted"


@pytest.mark.parametrize("kind", ["read_only", "idempotent", "takes_key", "plain"])
async def test_a_call_with_a_recorded_outcome_is_not_run_again(tmp_path: Path, kind: str) -> None:
    before, after, result, _ = await _crash_and_resume(tmp_path, kind, "tool_finished")
    assert len(before) == 1 and after == []
    assert result.tool_calls[0].result.content == "acted"


def test_the_docs_say_what_these_tests_check() -> None:
    for page in (README, RELIABILITY):
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert "is `read_only` or `idempotent=True`" in text, page.name
        assert "takes the idempotency key" not in text and "or takes `ctx." not in text, page.name
        assert "same `ctx.idempotency_key`" in text, page.name
