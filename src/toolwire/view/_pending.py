"""What a run waits for, on its page: the calls a suspended run waits on
(each with its arguments, their digest, and Approve and Deny forms, or the
answer already recorded), and how a run that stopped continues.

The forms post to the viewer's actions (:mod:`toolwire.view._actions`) and
carry the digest of the arguments shown, so an approval names exactly what
the page showed. The viewer runs no tools: the page says where the run
continues.
"""

from __future__ import annotations

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
from toolwire.view._html import ident, text, value

__all__ = ["continuing", "pending_section"]

_WORDS = {"allow": "approved", "deny": "denied", "result": "answered"}


def _answered(answer: ApprovalGiven | AnswerGiven) -> str:
    word = _WORDS.get(str(answer.decision), text(answer.decision))
    style = "error" if word == "denied" else "ok"
    who = f" by {text(answer.principal)}" if answer.principal else ""
    reason = answer.reason if isinstance(answer, ApprovalGiven) else None
    reason = f": {text(reason)}" if reason else ""
    return f"<div class=answered-call><span class={style}>{word}</span>{who}{reason}</div>"


def _forms(run_id: str, call: PendingCall) -> str:
    if call.awaiting == "result":
        return (
            "<div class=meta>waits for the result of an outside tool: give it with "
            f"<code>toolwire runs answer {ident(run_id)} {ident(call.call_id)} "
            "--result JSON</code></div>"
        )
    base = f"/runs/{ident(quote(run_id, safe=''))}/calls/{ident(quote(call.call_id, safe=''))}"
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
        f"<b>{text(call.name)}</b> · call <code>{ident(call.call_id)}</code> · turn {call.turn}"
        f" · waits for {what}{repaired}"
        f"<div class=meta>arguments digest <code class=digest>{ident(call.digest)}</code></div>"
        f"{value(call.arguments, label='arguments')}"
        f"{_answered(answer) if answer is not None else _forms(run_id, call)}</div>"
    )


def pending_section(log: RunLog) -> str:
    """The calls a suspended run waits on, or nothing for another run."""
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
        "tools.</p></section>"
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
