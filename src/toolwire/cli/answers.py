"""``toolwire runs approve/deny/answer``: answering a suspended run from a shell.

Each command names the run (an id, the short id ``runs list`` prints, or
``last``) and the call (its id, as ``runs show`` prints it), is checked
against the journal (:func:`toolwire.journal.record_decision`: the run must
be suspended and wait on that call, an approval must name the digest of the
arguments it approves, a call answered differently before is refused) and is
journaled with ``--as PRINCIPAL`` and the time. With ``$TOOLWIRE_APPROVAL_KEY``
set, each answer must carry ``--signature`` (HMAC-SHA256 of the decision with
that key). The run then continues with ``Agent.resume(run_id)`` in any process.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from toolwire.cli.runs import _fail, _journal_option, runs
from toolwire.journal import (
    Decision,
    JournalError,
    SQLiteJournal,
    default_journal_path,
    record_decision,
)

__all__ = ["runs"]

KEY_VARIABLE = "TOOLWIRE_APPROVAL_KEY"


def _decide(journal_path: Path | None, run_ref: str, decision: Decision) -> None:
    chosen = journal_path if journal_path is not None else default_journal_path()
    if chosen is None or not chosen.exists():
        _fail(f"no run {run_ref!r}: there is no journal at {chosen}")
    key = os.environ.get(KEY_VARIABLE)
    try:
        journal = SQLiteJournal(chosen)
        try:
            recorded = record_decision(
                journal, run_ref, decision, key=key.encode() if key else None
            )
        finally:
            journal.close()
    except JournalError as exc:
        _fail(f"{exc.type_name}: {exc.message}")
    word = {"allow": "approved", "deny": "denied", "result": "answered"}[decision.decision]
    click.echo(f"{word} call {decision.call_id}" + ("" if recorded else " (already recorded)"))


_principal = click.option("--as", "principal", default="", help="Who answers (free-form).")
_signature = click.option(
    "--signature", default=None, help=f"HMAC-SHA256 of the decision (with ${KEY_VARIABLE})."
)


@runs.command("approve")
@click.argument("run_ref", metavar="RUN")
@click.argument("call_id", metavar="CALL")
@click.option(
    "--digest",
    required=True,
    help="The digest of the arguments approved, as `runs show` prints it (sha256:...).",
)
@_principal
@click.option("--expires-at", type=float, default=None, help="Unix time the approval expires.")
@_signature
@_journal_option
def approve_command(
    run_ref: str,
    call_id: str,
    digest: str,
    principal: str,
    expires_at: float | None,
    signature: str | None,
    journal_path: Path | None,
) -> None:
    """Approve a suspended run's call, with exactly the arguments DIGEST names."""
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
    journal_path: Path | None,
) -> None:
    """Deny a suspended run's call: it does not run, and the model is told why."""
    decision = Decision(
        call_id=call_id, decision="deny", reason=reason, principal=principal, signature=signature
    )
    _decide(journal_path, run_ref, decision)


@runs.command("answer")
@click.argument("run_ref", metavar="RUN")
@click.argument("call_id", metavar="CALL")
@click.option("--result", "result_text", required=True, help="The tool's result, as JSON.")
@_principal
@_signature
@_journal_option
def answer_command(
    run_ref: str,
    call_id: str,
    result_text: str,
    principal: str,
    signature: str | None,
    journal_path: Path | None,
) -> None:
    """Give the result of an external tool's call."""
    try:
        result = json.loads(result_text)
    except ValueError as exc:
        _fail(f"--result is not JSON: {exc}")
    decision = Decision(
        call_id=call_id, decision="result", result=result, principal=principal, signature=signature
    )
    _decide(journal_path, run_ref, decision)
