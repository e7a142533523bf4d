"""``toolwire runs approve/deny/answer/pending``: answering a suspended run from a shell.

Each command names the run (an id, the short id ``runs list`` prints, or
``last``) and the call (its id, as ``runs show`` and ``runs pending`` print
it), is checked against the journal (:func:`toolwire.journal.record_decision`:
the run must be suspended and wait on that call, an approval must name the
digest of the arguments it approves, a call answered differently before is
refused) and is journaled with ``--as PRINCIPAL`` and the time, in the
journal agents write (``$TOOLWIRE_JOURNAL``: a file or a ``postgresql://``
URL) or ``--journal``. ``approve`` without ``--digest`` shows the arguments
and asks at a terminal, and refuses without one.

With ``$TOOLWIRE_APPROVAL_KEY`` set, the command signs the answer with it
(or checks the ``--signature`` given); without it, the answer is recorded
unsigned (or with the ``--signature`` given, unchecked), and a note on stderr
says that a resume with the key will refuse an unsigned one. The run then
continues with ``Agent.resume(run_id)`` in any process.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Literal, NoReturn

import click

from toolwire.cli.runs import _fail, _journal_option, _open, runs
from toolwire.journal import (
    KEY_VARIABLE,
    Decision,
    Journal,
    JournalError,
    PostgresJournal,
    SQLiteJournal,
    WaitingCall,
    default_journal,
    record_answer,
    record_decision,
    resolve_approval_key,
    waiting_for,
)

__all__ = ["runs"]


def _writable(journal_path: Path | str | None, run_ref: str) -> Journal:
    """The journal to record an answer in: a file that exists, or a URL."""
    chosen = journal_path if journal_path is not None else default_journal()
    if chosen is None:
        _fail("journaling is off (TOOLWIRE_JOURNAL=off) and no --journal was given")
    try:
        if isinstance(chosen, str):
            return PostgresJournal(chosen)
        if not chosen.exists():
            _fail(f"no run {run_ref!r}: there is no journal at {chosen}")
        return SQLiteJournal(chosen)
    except JournalError as exc:
        _fail(f"{exc.type_name}: {exc.message}")


def _refused(exc: JournalError) -> NoReturn:
    _fail(f"{exc.type_name}: {exc.message}")


def _decide(journal_path: Path | str | None, run_ref: str, decision: Decision) -> None:
    key = resolve_approval_key()
    journal = _writable(journal_path, run_ref)
    try:
        try:
            run_id = journal.find_run(run_ref)
            if key is not None and decision.signature is None:
                decision = decision.signed(key, run_id)
            recorded = record_decision(journal, run_id, decision, key=key)
        finally:
            journal.close()
    except JournalError as exc:
        _refused(exc)
    word = {"allow": "approved", "deny": "denied", "result": "answered"}[decision.decision]
    click.echo(f"{word} call {decision.call_id}" + ("" if recorded else " (already recorded)"))
    if key is None and decision.signature is None:
        click.echo(
            f"note: recorded unsigned: ${KEY_VARIABLE} is not set, so this answer cannot be "
            "signed; a resume with an approval key refuses it",
            err=True,
        )
    elif key is None:
        click.echo(
            f"note: the --signature was recorded unchecked (${KEY_VARIABLE} is not set); "
            "a resume with the approval key checks it",
            err=True,
        )


_principal = click.option("--as", "principal", default="", help="Who answers (free-form).")
_signature = click.option(
    "--signature",
    default=None,
    help=f"HMAC-SHA256 of the decision (default: signed with ${KEY_VARIABLE} when set).",
)


def _waiting(journal_path: Path | str | None, run_ref: str | None) -> list[WaitingCall]:
    """The calls waiting for an answer: of one run, or of every suspended run."""
    journal = _open(journal_path)
    if journal is None:
        if run_ref is None:
            return []
        _fail(f"no run {run_ref!r}: there is no journal at {journal_path or default_journal()}")
    try:
        if run_ref is not None:
            return list(waiting_for(journal.load_run(journal.find_run(run_ref))))
        found: list[WaitingCall] = []
        for summary in journal.list_runs(limit=1000):
            if summary.status == "suspended":
                found.extend(waiting_for(journal.load_run(summary.run_id)))
        return found
    except JournalError as exc:
        _refused(exc)
    finally:
        journal.close()


def _confirmed(journal_path: Path | str | None, run_ref: str, call_id: str) -> str:
    """The digest of the call's arguments, once a person at the terminal said yes."""
    if not sys.stdin.isatty():
        _fail(
            "approve needs --digest (as `toolwire runs pending` prints it), or a terminal "
            "to confirm the arguments: stdin is not one, so nothing was approved"
        )
    found = {w.call_id: w for w in _waiting(journal_path, run_ref)}.get(call_id)
    if found is None:
        _fail(f"run {run_ref} waits for no answer to call {call_id!r}")
    # ASCII-escaped: an invisible or bidirectional character shows as its code.
    arguments = json.dumps(found.arguments, indent=2, sort_keys=True, ensure_ascii=True)
    click.echo(f"call {found.call_id}: {found.name}\n{arguments}\ndigest {found.digest}")
    if not click.confirm(f"Approve {found.name} with these arguments?", default=False):
        _fail("not approved: nothing was recorded")
    return found.digest


@runs.command("approve")
@click.argument("run_ref", metavar="RUN")
@click.argument("call_id", metavar="CALL")
@click.option(
    "--digest",
    default=None,
    help="The digest of the arguments approved, as `runs pending` prints it (sha256:...); "
    "without it, the arguments are shown and confirmed at the terminal.",
)
@_principal
@click.option("--expires-at", type=float, default=None, help="Unix time the approval expires.")
@_signature
@_journal_option
def approve_command(
    run_ref: str,
    call_id: str,
    digest: str | None,
    principal: str,
    expires_at: float | None,
    signature: str | None,
    journal_path: Path | str | None,
) -> None:
    """Approve a suspended run's call, with exactly the arguments DIGEST names."""
    if digest is None:
        digest = _confirmed(journal_path, run_ref, call_id)
    decision = Decision(
        call_id=call_id,
        decision="allow",
        digest=digest,
        principal=principal,
        expires_at=expires_at,
        signature=signature,
    )
    _decide(journal_path, run_ref, decision)


@runs.command("deny")
@click.argument("run_ref", metavar="RUN")
@click.argument("call_id", metavar="CALL")
@click.option("--reason", default="the call was not approved", help="What the model is told.")
@_principal
@_signature
@_journal_option
def deny_command(
    run_ref: str,
    call_id: str,
    reason: str,
    principal: str,
    signature: str | None,
    journal_path: Path | str | None,
) -> None:
    """Deny a suspended run's call: it does not run, and the model is told why."""
    decision = Decision(
        call_id=call_id, decision="deny", reason=reason, principal=principal, signature=signature
    )
    _decide(journal_path, run_ref, decision)


@runs.command("answer")
@click.argument("run_ref", metavar="RUN")
@click.argument("call_id", metavar="CALL")
@click.option("--result", "result_text", default=None, help="An external tool's result, as JSON.")
@click.option(
    "--accept",
    "accept_text",
    default=None,
    help="The answer to the question a call asked (an MCP server's elicitation), as a JSON "
    "object matching its schema.",
)
@click.option("--decline", is_flag=True, help="Decline to answer the call's question.")
@click.option("--cancel", is_flag=True, help="Dismiss the call's question.")
@_principal
@_signature
@_journal_option
def answer_command(
    run_ref: str,
    call_id: str,
    result_text: str | None,
    accept_text: str | None,
    decline: bool,
    cancel: bool,
    principal: str,
    signature: str | None,
    journal_path: Path | str | None,
) -> None:
    """Give the result of an external tool's call (--result), or answer the
    question a call asked mid-call (--accept JSON, --decline or --cancel)."""
    given = [result_text is not None, accept_text is not None, decline, cancel]
    if sum(given) != 1:
        _fail("give exactly one of --result, --accept, --decline or --cancel")
    if result_text is None:
        _answer_question(journal_path, run_ref, call_id, accept_text, decline, principal)
        return
    try:
        result = json.loads(result_text)
    except ValueError as exc:
        _fail(f"--result is not JSON: {exc}")
    decision = Decision(
        call_id=call_id, decision="result", result=result, principal=principal, signature=signature
    )
    _decide(journal_path, run_ref, decision)


def _answer_question(
    journal_path: Path | str | None,
    run_ref: str,
    call_id: str,
    accept_text: str | None,
    decline: bool,
    principal: str,
) -> None:
    content = None
    if accept_text is not None:
        try:
            content = json.loads(accept_text)
        except ValueError as exc:
            _fail(f"--accept is not JSON: {exc}")
    action: Literal["accept", "decline", "cancel"] = (
        "accept" if accept_text is not None else "decline" if decline else "cancel"
    )
    journal = _writable(journal_path, run_ref)
    try:
        try:
            recorded = record_answer(
                journal, run_ref, call_id, action, content, principal=principal
            )
        finally:
            journal.close()
    except JournalError as exc:
        _refused(exc)
    word = {"accept": "answered", "decline": "declined", "cancel": "dismissed"}[action]
    click.echo(
        f"{word} the question of call {call_id}" + ("" if recorded else " (already recorded)")
    )


@runs.command("pending")
@click.argument("run_ref", metavar="[RUN]", required=False)
@_journal_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def pending_command(run_ref: str | None, journal_path: Path | str | None, as_json: bool) -> None:
    """The calls suspended runs wait on (of RUN, or of every suspended run):
    run, call, tool, arguments, digest and how long they have waited."""
    calls = _waiting(journal_path, run_ref)
    if as_json:
        click.echo(json.dumps({"pending": [c.to_dict() for c in calls]}, ensure_ascii=False))
        return
    if not calls:
        click.echo("no call waits for an answer")
        return
    for call in calls:
        arguments = json.dumps(call.arguments, sort_keys=True, ensure_ascii=True)
        click.echo(
            f"{call.run_id[:12]}  {call.call_id}  {call.name}  waits for {call.awaiting} "
            f"{_age(call.age())}\n    arguments {arguments}\n    digest {call.digest}"
        )
        if call.question is not None:
            schema = json.dumps(call.question.get("schema"), sort_keys=True, ensure_ascii=True)
            message = json.dumps(call.question.get("message"), ensure_ascii=True)
            click.echo(f"    question {message}\n    answer schema {schema}")


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"
