"""The viewer's one way to write: approving or denying a call a suspended
run waits on.

Theory of operation: the pages read the journal read-only; an action opens
it for writing for the time of one decision and closes it. The decision is
the one ``toolwire runs approve/deny`` records
(:func:`toolwire.journal.record_decision`): it must name the run, the call
and the digest of the arguments the page showed (a page left open while
the call changed is refused), it is judged against the journal under the
run's lease, and it is journaled with the viewer's principal and the time.
The guard in front (:mod:`toolwire.view._app`) has already checked the
token, the method and that the request comes from the viewer's own page.

The viewer runs no tools: once every pending call is answered, the run
continues where its program calls ``agent.resume(run_id)``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl

from toolwire.errors import BadForm
from toolwire.journal import (
    ApprovalRefused,
    Decision,
    JournalError,
    PostgresJournal,
    RunLeased,
    SQLiteJournal,
    record_decision,
)

__all__ = ["FORM_LIMIT", "BadForm", "Outcome", "decide", "parse_form"]

FORM_LIMIT = 8192
"""The most bytes an action's form may hold."""
_REASON_LIMIT = 1000
_DEFAULT_REASON = "the call was not approved"
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
"""What an arguments digest is (:func:`toolwire.run.argument_digest`)."""
_SIGNATURE = re.compile(r"[0-9A-Za-z_=+/.:-]{1,512}")
"""What a decision's signature can be written with: ASCII, no spaces."""


def parse_form(body: bytes, content_type: str) -> dict[str, str]:
    """The fields of an ``application/x-www-form-urlencoded`` body.

    Raises:
        BadForm: another content type, too large, or not UTF-8.
    """
    media = content_type.split(";")[0].strip().lower()
    if media != "application/x-www-form-urlencoded":
        raise BadForm("an action takes a URL-encoded form")
    if len(body) > FORM_LIMIT:
        raise BadForm("the form is too large")
    try:
        text = body.decode("utf-8")
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=bool(text), max_num_fields=8)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadForm(f"the form cannot be read: {exc}") from None
    return dict(pairs)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an action did: the HTTP status and the sentence the page shows."""

    status: int
    message: str
    recorded: bool = False


def _decision(
    verb: Literal["approve", "deny"], call_id: str, form: Mapping[str, str], principal: str
) -> Decision:
    digest = form.get("digest", "")
    if not digest:
        raise BadForm("the form names no digest of the arguments it answers")
    if not _DIGEST.fullmatch(digest):
        raise BadForm("the digest is not one: it is sha256: and 64 hexadecimal digits")
    signature = form.get("signature")
    if signature is not None and not _SIGNATURE.fullmatch(signature):
        raise BadForm("the signature is not one: it is ASCII letters, digits and -_=+/.:")
    if verb == "approve":
        return Decision(call_id=call_id, decision="allow", digest=digest, principal=principal)
    reason = " ".join(form.get("reason", "").split()) or _DEFAULT_REASON
    if len(reason) > _REASON_LIMIT:
        raise BadForm(f"the reason is longer than {_REASON_LIMIT} characters")
    return Decision(
        call_id=call_id, decision="deny", digest=digest, reason=reason, principal=principal
    )


def decide(
    path: Path | str,
    run_id: str,
    call_id: str,
    verb: Literal["approve", "deny"],
    form: Mapping[str, str],
    *,
    principal: str,
    key: bytes | None = None,
) -> Outcome:
    """Journal the approval or denial of one call of a suspended run.

    ``form`` holds ``digest`` (what the page showed) and, to deny, an
    optional ``reason``; ``key``: the approval key, which signs the decision
    (without one, it is recorded unsigned, and the run's page says that a
    resume with a key refuses it).
    """
    try:
        decision = _decision(verb, call_id, form, principal)
    except BadForm as exc:
        return Outcome(400, str(exc))
    if isinstance(path, Path) and not path.exists():
        return Outcome(404, f"there is no journal at {path}")
    try:
        journal = PostgresJournal(path) if isinstance(path, str) else SQLiteJournal(path)
        try:
            found = journal.find_run(run_id)
            if key is not None:
                decision = decision.signed(key, found)
            new = record_decision(journal, found, decision, key=key)
        finally:
            journal.close()
    except ApprovalRefused as exc:
        return Outcome(409, exc.message)
    except RunLeased:
        return Outcome(409, f"run {run_id} is being run or resumed right now: nothing recorded")
    except JournalError as exc:
        return Outcome(404, exc.message)
    word = "approved" if verb == "approve" else "denied"
    if not new:
        return Outcome(200, f"call {call_id} was already {word}: recorded once", recorded=True)
    return Outcome(200, f"call {call_id} {word} by {principal}", recorded=True)
