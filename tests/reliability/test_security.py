"""Secrets never reach the journal, the logs, errors or reprs; results are
capped before they are recorded; approval is enforced on resume too."""

from __future__ import annotations

import json
import logging
import stat
from pathlib import Path
from typing import Any

import pytest

from toolwire import ProviderError, Toolbox, tool
from toolwire.journal import JournalObserver, SQLiteJournal
from toolwire.messages import UserMessage
from toolwire.providers import OpenAIChat
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


def journal_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.glob("journal.sqlite3*")))


def file_modes(folder: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.glob("journal.sqlite3*")}


# Credentials of the lengths real keys have, each used as the provider's key.
KEYS = {
    "8 characters": "Qz7kL2pX",
    "31 characters": FAKE_KEY,
    "64 characters": "sk-proj-" + "Zq8" * 18 + "Ab",
}


def leaky_tool(key: str) -> Any:
    @tool
    def leaky(what: str) -> str:
        """A tool that leaks the key into its result (as a careless tool might).

        Args:
            what: anything.
        """
        return f"config: OPENAI_API_KEY={key} for {what}"

    return leaky


@pytest.mark.parametrize("key", list(KEYS.values()), ids=list(KEYS))
async def test_the_key_is_never_recorded_logged_or_shown(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, key: str
) -> None:
    caplog.set_level(logging.DEBUG)
    journal = SQLiteJournal(tmp_path / "journal.sqlite3")
    leaky = leaky_tool(key)
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
        agent = make_agent(server, [leaky], journal=journal, api_key=key)
        result = await agent.run("leak it", run_id="leak")
        shown = [repr(agent), repr(agent.provider), repr(journal), repr(agent.toolbox)]
        shown.append(repr(agent.build_request([UserMessage("hi")], 1)))
        await agent.aclose()
    assert key in result.output, "the model did see it: the test is meaningful"
    denied = Scenario.from_dict(
        {
            "name": "401",
            "turns": [
                {
                    "text": "x",
                    "faults": [{"status": 401, "message": f"Incorrect API key provided: {key}."}],
                }
            ],
        }
    )
    with EmulationServer(denied) as server:
        agent = make_agent(server, [leaky], journal=journal, api_key=key)
        with pytest.raises(ProviderError) as caught:
            await agent.run("hi", run_id="denied")
        await agent.aclose()
    journal.close()
    assert key.encode() not in journal_bytes(tmp_path)
    assert b"<redacted>" in journal_bytes(tmp_path)
    modes = file_modes(tmp_path)
    assert modes and set(modes.values()) == {0o600}, modes
    reopened = SQLiteJournal(tmp_path / "journal.sqlite3")
    failed = reopened.load_run("denied")
    assert failed.run.error is not None and failed.run.error["status_code"] == 401
    reopened.close()
    assert all(key not in text for text in shown)
    assert key not in caplog.text
    error = caught.value
    assert error.status_code == 401 and "<redacted>" in str(error)
    for text in (str(error), repr(error), json.dumps(error.to_dict()), repr(error.body)):
        assert key not in text
    assert key not in repr(JournalObserver(reopened, secrets=[key]))


def test_credentials_in_the_url_or_an_unusual_header_are_never_shown() -> None:
    provider = OpenAIChat(
        base_url="https://svc-user:Hunter2-pass-9f8e7d@gateway.example/v1?sig=Sg-77aa99",
        api_key="k",
        headers={"X-Tenant": "tenant-secret-42ab", "X-Billing-Ref": "ref-31337-zz"},
    )
    request = provider.build_request(model="m", messages=[UserMessage("hi")])
    shown = repr(provider) + repr(request) + str(request)
    for secret in ("Hunter2-pass-9f8e7d", "svc-user", "Sg-77aa99", "tenant-secret-42ab"):
        assert secret not in shown, secret
    assert "gateway.example" in shown
    error = provider.parse_error(401, {}, b'{"error": {"message": "bad tenant-secret-42ab"}}')
    assert "tenant-secret-42ab" not in str(error) and "<redacted>" in str(error)


# Short keys, such as local servers accept, and keys that are ordinary words.
PLACEHOLDERS = ["a", "ab", "language", "sk-" + "x7" * 30 + "q"]


@pytest.mark.parametrize("key", PLACEHOLDERS, ids=["1", "2", "8", "64"])
async def test_any_key_leaves_every_record_readable_and_resumable(tmp_path: Path, key: str) -> None:
    text = f"a language, two languages, and the key: {key}"
    seen: list[str] = []

    @tool(idempotent=False)
    def notify(message: str) -> str:
        """Send a notification.

        Args:
            message: what to say.
        """
        seen.append(message)
        return "sent"

    scenario = Scenario.from_dict(
        {
            "name": "words",
            "turns": [
                {"tool_calls": [{"name": "notify", "arguments": {"message": text}}]},
                {"text": "said: {result:notify}"},
            ],
        }
    )
    path = tmp_path / "journal.sqlite3"
    journal = SQLiteJournal(path)
    with EmulationServer(scenario) as server:
        agent = make_agent(server, [notify], journal=journal, api_key=key)
        done = await agent.run("notify", run_id="whole")
        await agent.aclose()
        # A second run dies before its tool starts, and is resumed.
        observer = JournalObserver(journal, secrets=[key])
        crash = CrashAt("tool_started", name="notify")
        dying = make_agent(
            server, [notify], journal=False, observers=[crash, observer], api_key=key
        )
        await expect_crash(dying.run("notify", run_id="resumed"))
        await dying.aclose()
        agent = make_agent(server, [notify], journal=journal, api_key=key)
        resumed = await agent.resume("resumed")
        await agent.aclose()
    assert done.output == resumed.output == "said: sent"
    if len(key) < 8:  # a placeholder, not a credential: nothing is touched
        expected = text
    elif key == "language":  # alone it is replaced, inside a longer word it is not
        expected = "a <redacted>, two languages, and the key: <redacted>"
    else:
        expected = "a language, two languages, and the key: <redacted>"
    # The journal never held the key: the resumed call runs with what it recorded.
    assert seen == [text, expected]
    journal.close()
    reader = SQLiteJournal(path, read_only=True)
    assert sorted(run.run_id for run in reader.list_runs()) == ["resumed", "whole"]
    for run_id in ("whole", "resumed"):
        log = reader.load_run(run_id)
        assert log.problems() == []
        assert all(json.dumps(record) for record in log.records())
        intent = next(e for e in log.events if e.kind == "tool_intent")
        assert intent.data["arguments"]["message"] == expected
        assert log.run.model and log.run.settings["max_turns"] == 10
    reader.close()


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
        # The resuming process has no approver: the run suspends, and the
        # call waits for an approval instead of running.
        second = make_agent(server, Toolbox([counter.guarded_notify]), journal=journal)
        result = await second.resume("guarded")
        await second.aclose()
    assert counter.notes == []
    assert result.outcome == "suspended" and result.tool_calls == ()
    assert [(p.name, p.awaiting) for p in result.pending] == [("notify", "approval")]
