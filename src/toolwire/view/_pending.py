"""What a run waits for, on its page: the calls a suspended run waits on
(each with its arguments, their digest, and Approve and Deny forms, or the
answer already recorded), and how a run that stopped continues.

The forms post to the viewer's actions (:mod:`toolwire.view._actions`) and
carry the digest of the arguments shown, so an approval names exactly what
the page showed. The viewer runs no tools: the page says where the run
continues.
"""

from __future__ import annotations

import json
from urllib.parse import quote

from toolwire.journal import (
    AnswerGiven,
    ApprovalGiven,
    JournalError,
    RunLog,
    pending_calls,
    recorded_answers,
)
from toolwire.run import PendingCall
from toolwire.view._html import href, ident, text, value
from toolwire.view._visible import hidden_count, reveal

__all__ = ["continuing", "pending_section"]

_WORDS = {"allow": "approved", "deny": "denied", "result": "answered"}


def _answered(answer: ApprovalGiven | AnswerGiven) -> str:
    word = _WORDS.get(str(answer.decision), text(answer.decision))
    style = "error" if word == "denied" else "ok"
    who = f" by {text(answer.principal)}" if answer.principal else ""
    reason = answer.reason if isinstance(answer, ApprovalGiven) else None
    reason = f": {text(reason)}" if reason else ""
    signed = (
        " · <span class=ok>signed</span>"
        if answer.signed
        else " · <span class=error>unsigned</span>: a resume with an approval key refuses it"
    )
    return f"<div class=answered-call><span class={style}>{word}</span>{who}{reason}{signed}</div>"


def _forms(run_id: str, call: PendingCall) -> str:
    if call.awaiting == "result":
        return (
            "<div class=meta>waits for the result of an outside tool: give it with "
            f"<code>toolwire runs answer {ident(run_id)} {ident(call.call_id)} "
            "--result JSON</code></div>"
        )
    base = ident(href(f"/runs/{quote(run_id, safe='')}/calls/{quote(call.call_id, safe='')}"))
    digest = f'<input type=hidden name=digest value="{ident(call.digest)}">'
    return (
        "<div class=decide>"
        f'<form method=post action="{base}/approve" class=inline>{digest}'
        "<button class=approve>Approve</button></form> "
        f'<form method=post action="{base}/deny" class=inline>{digest}'
        '<input name=reason maxlength=1000 placeholder="why (the model is told)"> '
        "<button class=deny>Deny</button></form></div>"
    )


def _call(run_id: str, call: PendingCall, answer: ApprovalGiven | AnswerGiven | None) -> str:
    what = "an outside result" if call.awaiting == "result" else "approval"
    repaired = (
        " · <span class=error>arguments repaired</span> (shown as they will run)"
        if call.repaired
        else ""
    )
    return (
        f'<div class=pending-call data-call="{ident(call.call_id)}" '
        f'data-awaiting="{ident(call.awaiting)}">'
        f"<b>{reveal(text(call.name))}</b> · call <code>{ident(call.call_id)}</code>"
        f" · turn {call.turn} · waits for {what}{repaired}"
        f"<div class=meta>arguments digest <code class=digest>{ident(call.digest)}</code></div>"
        f"{_hidden_note(call)}{value(call.arguments, label='arguments', marked=True)}"
        f"{_answered(answer) if answer is not None else _forms(run_id, call)}</div>"
    )


_SIGNING = (
    "<p class=meta id=signing>Decisions given here are signed with the approval key "
    "($TOOLWIRE_APPROVAL_KEY).</p>"
)
_NOT_SIGNING = (
    "<p class=error id=signing>This viewer has no approval key ($TOOLWIRE_APPROVAL_KEY is "
    "not set): decisions given here are recorded unsigned, and a resume with an approval "
    "key refuses them (nothing runs). Start <code>toolwire view</code> with the key to sign "
    "them.</p>"
)


def _hidden_note(call: PendingCall) -> str:
    """The note that says the arguments hold invisible or bidirectional
    characters (which the page shows as marks), or nothing."""
    count = hidden_count(call.name) + hidden_count(
        json.dumps(call.arguments, ensure_ascii=False, default=str)
    )
    if not count:
        return ""
    return (
        f"<p class=hidden-chars>{count} invisible or bidirectional character(s) in this call "
        "are shown as <mark class=invisible>⟨U+…⟩</mark> marks: they would make the text "
        "read otherwise than it runs, and they are part of what an approval approves.</p>"
    )


def pending_section(log: RunLog, *, signing: bool = False) -> str:
    """The calls a suspended run waits on, or nothing for another run;
    ``signing``: whether this viewer signs the decisions it records."""
    try:
        calls = pending_calls(log)
    except JournalError as exc:
        return f"<section id=pending><p class=error>{text(exc.message)}</p></section>"
    if not calls:
        return ""
    answers = recorded_answers(log)
    waiting = sum(1 for call in calls if call.call_id not in answers)
    run_id = log.run.run_id
    head = (
        f"waiting for {waiting} of {len(calls)} call(s)"
        if waiting
        else f"all {len(calls)} call(s) answered"
    )
    items = "".join(_call(run_id, call, answers.get(call.call_id)) for call in calls)
    return (
        f'<section id=pending data-waiting="{waiting}"><h3>{head}</h3>{items}'
        "<p class=meta>An approval names the digest of the arguments shown above: if the "
        "call changed since, it is refused. The viewer records decisions; it runs no "
        f"tools.</p>{_SIGNING if signing else _NOT_SIGNING}</section>"
    )


def continuing(log: RunLog) -> str:
    """How a run that stopped goes on: where ``agent.resume`` is called."""
    run = log.run
    if run.status not in ("suspended", "failed", "cancelled", "limit", "running"):
        return ""
    call = f"<code>await agent.resume({ident(repr(run.run_id))})</code>"
    if run.status == "suspended":
        when = "once its calls are answered, the run continues"
    elif run.status == "running":
        when = "if the process running it died, the run continues"
    else:
        when = "the run continues from its last recorded step"
    return (
        f"<p class=continue>To continue: {when} where its program calls {call} (the agent "
        "that holds its tools, in any process; tools whose outcome is recorded do not run "
        "again). The viewer cannot resume it: it has no tools.</p>"
    )
