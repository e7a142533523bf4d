"""Secrets never reach the journal, the logs, errors or reprs; results are
capped before they are recorded; approval is enforced on resume too."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from toolwire import ProviderError, Toolbox, tool
from toolwire.journal import JournalObserver, SQLiteJournal
from toolwire.testing import EmulationServer, Scenario

from ..journal._support import (
    FAKE_KEY,
    Counter,
    CrashAt,
    crashing_agent,
    expect_crash,
    make_agent,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def journal_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.glob("journal.sqlite3*")))


@tool
def leaky(what: str) -> str:
    """A tool that leaks the key into its result (as a careless tool might).

    Args:
        what: anything.
    """
    return f"config: OPENAI_API_KEY={FAKE_KEY} for {what}"


async def test_the_key_is_never_recorded_logged_or_shown(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    scenario = Scenario.from_dict(
        {
            "name": "leak",
            "turns": [
                {"tool_calls": [{"name": "leaky", "arguments": {"what": "x"}}]},
                {"text": "the tool said {result:leaky}"},
            ],
        }
    )
    with EmulationServer(scenario) as server:
        agent = make_agent(server, [leaky], journal=journal)
        result = await agent.run("leak it", run_id="leak")
        shown = [repr(agent), repr(agent.provider), repr(journal), repr(agent.toolbox)]
        await agent.aclose()
    assert FAKE_KEY in result.output, "the model did see it: the test is meaningful"
    denied = Scenario.from_dict(
        {
            "name": "401",
            "turns": [
                {
                    "text": "x",
                    "faults": [
                        {"status": 401, "message": f"Incorrect API key provided: {FAKE_KEY}."}
                    ],
                }
            ],
        }
    )
    with EmulationServer(denied) as server:
        agent = make_agent(server, [leaky], journal=journal)
        with pytest.raises(ProviderError) as caught:
            await agent.run("hi", run_id="denied")
        await agent.aclose()
    journal.close()
    assert FAKE_KEY.encode() not in journal_bytes(tmp_path)
    assert b"<redacted>" in journal_bytes(tmp_path)
    reopened = SQLiteJournal(tmp_path / "journal.sqlite3")
    failed = reopened.load_run("denied")
    assert failed.run.error is not None and failed.run.error["status_code"] == 401
    reopened.close()
    assert all(FAKE_KEY not in text for text in shown)
    assert FAKE_KEY not in caplog.text
    error = caught.value
    assert error.status_code == 401 and "<redacted>" in str(error)
    for text in (str(error), repr(error), json.dumps(error.to_dict()), repr(error.body)):
        assert FAKE_KEY not in text
    assert FAKE_KEY not in repr(JournalObserver(reopened, secrets=[FAKE_KEY]))


async def test_results_are_capped_before_they_are_recorded(tmp_path: Path) -> None:
    @tool(max_result_chars=2_000)
    def dump(n: int) -> str:
        """Returns n characters.

        Args:
            n: how many.
        """
        return "z" * n

    scenario = Scenario.from_dict(
        {
            "name": "big result",
            "turns": [
                {"tool_calls": [{"name": "dump", "arguments": {"n": 1_000_000}}]},
                {"text": "ok"},
            ],
        }
    )
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    with EmulationServer(scenario) as server:
        agent = make_agent(server, [dump], journal=journal)
        result = await agent.run("dump", run_id="cap")
        await agent.aclose()
    record = result.tool_calls[0].result
    assert record.truncated and len(record.content) <= 2_000
    outcome = next(e for e in journal.load_run("cap").events if e.kind == "tool_outcome")
    assert outcome.data["result"]["truncated"] is True
    assert len(outcome.data["result"]["content"]) <= 2_000
    journal.close()
    assert (tmp_path / "journal.sqlite3").stat().st_size < 200_000


async def test_approval_is_enforced_on_resume(tmp_path: Path) -> None:
    counter = Counter(tmp_path / "ledger.sqlite3")
    scenario = Scenario.from_dict(
        {
            "name": "guarded",
            "turns": [
                {"tool_calls": [{"name": "notify", "arguments": {"text": "hi"}}]},
                {"text": "{result:notify}"},
            ],
        }
    )
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    with EmulationServer(scenario) as server:
        first = crashing_agent(
            server,
            Toolbox([counter.guarded_notify], approve=lambda request: True),
            journal,
            CrashAt("tool_started", name="notify"),
            before_journal=False,
        )
        await expect_crash(first.run("say hi", run_id="guarded"))
        await first.aclose()
        # The resuming process has no approver: the call is denied, not run.
        second = make_agent(server, Toolbox([counter.guarded_notify]), journal=journal)
        result = await second.resume("guarded")
        await second.aclose()
    assert counter.notes == []
    assert result.tool_calls[0].result.error == "denied"
    assert json.loads(result.tool_calls[0].result.content)["error"] == "denied"
