"""Signed approvals are all or nothing: with an approval key, a resume runs a
call only on a decision that carries a valid signature made with that key
(over run, call, digest, decision, expiry and principal); an unsigned or
wrongly signed one is refused naming the call, and the run stays suspended.
Tested through ``record_decision`` and through the CLI in a subprocess."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from toolwire.journal import (
    ApprovalRefused,
    Decision,
    SQLiteJournal,
    check_signatures,
    close_journals,
    record_decision,
    recorded_decisions,
)
from toolwire.testing import EmulationServer

from ._answering import KEY, PAY, agent_for, cli, paid, resume, scenario, suspend

RUN = "run-signed-1"


@pytest.fixture()
def server() -> Iterator[EmulationServer]:
    paid.clear()
    with EmulationServer(scenario()) as served:
        yield served


def _status_and_kinds(path: Path) -> tuple[str, list[str]]:
    journal = SQLiteJournal(path, read_only=True)
    try:
        log = journal.load_run(RUN)
    finally:
        journal.close()
    return log.run.status, [e.kind for e in log.events]


def _refused_resume(server: EmulationServer, path: Path, key: bytes) -> ApprovalRefused:
    before = _status_and_kinds(path)
    with pytest.raises(ApprovalRefused) as refused:
        resume(server, str(path), RUN, key)
    assert _status_and_kinds(path) == before and before[0] == "suspended"
    assert paid == []  # nothing ran
    return refused.value


def test_record_decision_unsigned_then_keyed_resume_runs_nothing(
    server: EmulationServer, tmp_path: Path
) -> None:
    path = tmp_path / "j.sqlite3"
    pending = suspend(server, str(path), RUN)
    journal = SQLiteJournal(path)
    assert record_decision(journal, RUN, Decision.allow(pending, principal="ann"))
    journal.close()
    refused = _refused_resume(server, path, KEY.encode())
    assert refused.reason == "signature" and refused.call_id == pending.call_id
    assert pending.call_id in refused.message and "not signed" in refused.message
    # Without the key the same approval is honoured (the key is what asks for signatures).
    assert resume(server, str(path), RUN, None) == "answered" and paid == [PAY]


def test_a_wrongly_signed_decision_is_refused_and_a_signed_one_runs_once(
    server: EmulationServer, tmp_path: Path
) -> None:
    path = tmp_path / "j.sqlite3"
    pending = suspend(server, str(path), RUN)
    journal = SQLiteJournal(path)
    forged = Decision.allow(pending, principal="ann").signed(b"another key", RUN)
    assert record_decision(journal, RUN, forged)  # recorded without a key: unchecked
    journal.close()
    refused = _refused_resume(server, path, KEY.encode())
    assert refused.reason == "signature" and "not made with the approval key" in refused.message

    other = tmp_path / "k.sqlite3"
    paid.clear()
    second = suspend(server, str(other), RUN)
    journal = SQLiteJournal(other)
    signed = Decision.allow(second, principal="ann", expires_at=4e9).signed(KEY.encode(), RUN)
    assert record_decision(journal, RUN, signed, key=KEY.encode())
    (recorded,) = recorded_decisions(journal.load_run(RUN))
    assert recorded.valid_signature(KEY.encode()) and recorded.expires_at == 4e9
    journal.close()
    assert resume(server, str(other), RUN, KEY.encode()) == "answered"
    assert resume(server, str(other), RUN, KEY.encode()) == "answered"
    assert paid == [PAY]  # once


def test_a_tampered_record_breaks_its_signature(server: EmulationServer, tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    pending = suspend(server, str(path), RUN)
    journal = SQLiteJournal(path)
    signed = Decision.allow(pending, principal="ann").signed(KEY.encode(), RUN)
    record_decision(journal, RUN, signed, key=KEY.encode())
    log = journal.load_run(RUN)
    journal.close()
    check_signatures(log, KEY.encode())  # as recorded: valid
    for field, value in [("principal", "mallory"), ("expires_at", 9e9), ("digest", "sha256:0")]:
        event = log.events[-1]
        tampered = dataclasses.replace(event, data={**event.data, field: value})
        with pytest.raises(ApprovalRefused, match=pending.call_id):
            check_signatures(
                dataclasses.replace(log, events=(*log.events[:-1], tampered)), KEY.encode()
            )
    check_signatures(log, KEY.encode())


def test_the_key_in_the_environment_makes_a_resume_keyed(
    server: EmulationServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "j.sqlite3"
    pending = suspend(server, str(path), RUN)
    journal = SQLiteJournal(path)
    record_decision(journal, RUN, Decision.allow(pending))
    journal.close()
    monkeypatch.setenv("TOOLWIRE_APPROVAL_KEY", KEY)
    before = _status_and_kinds(path)
    with pytest.raises(ApprovalRefused, match="not signed"):
        resume(server, str(path), RUN, None)
    assert _status_and_kinds(path) == before and paid == []


def test_the_cli_without_the_key_records_unsigned_and_says_so(
    server: EmulationServer, tmp_path: Path
) -> None:
    path = tmp_path / "j.sqlite3"
    pending = suspend(server, str(path), RUN)
    done = cli("approve", RUN, pending.call_id, "--digest", pending.digest, journal=path)
    assert done.returncode == 0, done.stderr
    assert "approved call" in done.stdout
    assert "recorded unsigned" in done.stderr and "TOOLWIRE_APPROVAL_KEY" in done.stderr
    refused = _refused_resume(server, path, KEY.encode())
    assert refused.call_id == pending.call_id

    # The same approval given again with the key is recorded, signed, and counts.
    env = {"TOOLWIRE_APPROVAL_KEY": KEY}
    again = cli("approve", RUN, pending.call_id, "--digest", pending.digest, env=env, journal=path)
    assert again.returncode == 0 and "already recorded" not in again.stdout, again.stderr
    assert resume(server, str(path), RUN, KEY.encode()) == "answered" and paid == [PAY]


def test_the_cli_with_the_key_signs_and_the_keyed_resume_runs_once(
    server: EmulationServer, tmp_path: Path
) -> None:
    path = tmp_path / "j.sqlite3"
    pending = suspend(server, str(path), RUN)
    env = {"TOOLWIRE_APPROVAL_KEY": KEY}
    done = cli("approve", RUN, pending.call_id, "--digest", pending.digest, env=env, journal=path)
    assert done.returncode == 0, done.stderr
    assert "unsigned" not in done.stderr
    assert resume(server, str(path), RUN, KEY.encode()) == "answered"
    assert paid == [PAY]


def test_the_cli_with_the_key_signs_denials_too(server: EmulationServer, tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite3"
    pending = suspend(server, str(path), RUN)
    env = {"TOOLWIRE_APPROVAL_KEY": KEY}
    done = cli("deny", RUN, pending.call_id, "--reason", "no", env=env, journal=path)
    assert done.returncode == 0, done.stderr
    assert resume(server, str(path), RUN, KEY.encode()) == "answered"
    assert paid == []


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--digest", "sha256:é"),
        ("--digest", "sha256:\u202e"),
        ("--signature", "é" * 64),
        ("--signature", "0" * 63 + "é"),
    ],
)
@pytest.mark.parametrize("keyed", [False, True])
def test_a_non_ascii_digest_or_signature_is_a_refusal_not_a_traceback(
    server: EmulationServer, tmp_path: Path, option: str, value: str, keyed: bool
) -> None:
    path = tmp_path / "j.sqlite3"
    pending = suspend(server, str(path), RUN)
    args = ["approve", RUN, pending.call_id, option, value]
    if option == "--signature":
        args += ["--digest", pending.digest]
    env = {"TOOLWIRE_APPROVAL_KEY": KEY} if keyed else None
    done = cli(*args, env=env, journal=path)
    assert done.returncode == 2, done.stderr
    assert "approval_refused" in done.stderr and "Traceback" not in done.stderr
    assert _status_and_kinds(path)[1].count("approval") == 0


def test_record_decision_refuses_a_non_ascii_digest_or_signature(
    server: EmulationServer, tmp_path: Path
) -> None:
    path = tmp_path / "j.sqlite3"
    pending = suspend(server, str(path), RUN)
    journal = SQLiteJournal(path)
    try:
        bad = [
            (Decision(call_id=pending.call_id, decision="allow", digest="sha256:é"), None),
            (Decision.allow(pending), b"k"),
        ]
        for decision, key in bad:
            with pytest.raises(ApprovalRefused):
                record_decision(journal, RUN, decision, key=key)
        wrong = Decision(
            call_id=pending.call_id, decision="allow", digest=pending.digest, signature="é" * 64
        )
        for key in (None, b"k"):
            with pytest.raises(ApprovalRefused) as refused:
                record_decision(journal, RUN, wrong, key=key)
            assert refused.value.reason == "signature"
        kinds = [e.kind for e in journal.load_run(RUN).events]
    finally:
        journal.close()
    assert "approval" not in kinds and json.dumps(kinds)


def test_a_signed_answer_given_to_the_resume_replaces_an_unsigned_one(
    server: EmulationServer, tmp_path: Path
) -> None:
    path = tmp_path / "j.sqlite3"
    pending = suspend(server, str(path), RUN)
    journal = SQLiteJournal(path)
    record_decision(journal, RUN, Decision.allow(pending))
    journal.close()
    signed = Decision.allow(pending, principal="ann").signed(KEY.encode(), RUN)

    async def main() -> str:
        agent = agent_for(server, str(path))
        try:
            result = await agent.resume(RUN, approvals=[signed], approval_key=KEY.encode())
        finally:
            await agent.aclose()
        return result.outcome

    try:
        assert anyio.run(main) == "answered"
    finally:
        close_journals()
    assert paid == [PAY]
