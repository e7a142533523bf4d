"""One journal event as HTML: what the run page lists, and what the live
stream sends to a page following a run.

Every kind of record the journal writes has its renderer (see
:func:`_body`: the union of kinds is closed, and a record of a kind this
toolwire does not know is a :class:`~toolwire.journal.JournalError` when the
journal is read, never hidden).
"""

from __future__ import annotations

import json
from typing import Any

from typing_extensions import assert_never

from toolwire.journal import (
    MAY_HAVE_RUN,
    AnswerGiven,
    ApprovalGiven,
    JournalEvent,
    ModelAttempt,
    ModelFailed,
    ModelRequest,
    ModelResponse,
    ModelSampled,
    ModelStreaming,
    QuestionAnswered,
    RunFailed,
    RunFinished,
    RunResumed,
    RunStarted,
    RunSuspended,
    SteerApplied,
    ToolIntent,
    ToolOutcome,
    ToolsChanged,
    payload_of,
)
from toolwire.view._html import duration, error_line, ident, money, text, value
from toolwire.view._visible import clean

__all__ = ["event_json", "render_event"]


def _tokens(usage: Any) -> str:
    if not isinstance(usage, dict) or not usage:
        return ""
    parts = [
        f"{text(k.removesuffix('_tokens'))} {text(v)}"
        for k, v in usage.items()
        if isinstance(v, int) and not isinstance(v, bool) and v
    ]
    return " · tokens " + ", ".join(parts) if parts else ""


def _cost(cost: dict[str, Any] | None) -> str:
    shown = money(cost)
    return f" · cost {shown}" if shown != "-" else ""


def _error(error: Any) -> str:
    if not isinstance(error, dict):
        return value(error, label="error") if error else ""
    return error_line(error)


def _arguments(record: ToolIntent | ApprovalGiven) -> str:
    if record.arguments is not None:
        return value(record.arguments, label="arguments")
    if record.arguments_preview is not None:
        chars = record.arguments_chars
        return f"<div class=meta>arguments ({text(chars)} characters, shown cut):</div>" + value(
            record.arguments_preview, label="arguments"
        )
    if isinstance(record, ToolIntent) and record.raw_arguments is not None:
        return "<div class=meta>raw (invalid) arguments:</div>" + value(record.raw_arguments)
    return ""


def _run_started(record: RunStarted) -> str:
    tools = ", ".join(ident(t) for t in record.tools)
    return (
        f"run started · model {ident(record.model)} · {ident(record.provider)}"
        f" ({ident(record.dialect)})" + (f" · tools {tools}" if tools else "")
    )


def _model_request(event: JournalEvent, record: ModelRequest) -> str:
    attempt = f" · attempt {event.attempt}" if event.attempt and event.attempt > 1 else ""
    return f"request carrying {text(record.messages)} message(s){attempt}"


def _model_response(record: ModelResponse) -> str:
    assistant = record.assistant or {}
    head = (
        f"answer in {duration(record.elapsed)} · finish {text(record.finish_reason)}"
        f"{_tokens(record.usage)}{_cost(record.cost)}"
    )
    parts = [head]
    if assistant.get("text"):
        parts.append(value(assistant["text"], label="answer"))
    calls = assistant.get("tool_calls") or []
    if calls:
        names = ", ".join(text(c.get("name")) for c in calls if isinstance(c, dict))
        parts.append(f"<div class=meta>asks for {len(calls)} tool calls: {names}</div>")
    return "".join(parts)


def _model_failed(record: ModelFailed) -> str:
    return f"model failed after {duration(record.elapsed)}{_cost(record.cost)}" + _error(
        record.error
    )


def _model_attempt(record: ModelAttempt) -> str:
    where = (
        f"provider {text(record.position)} <b>{text(record.provider)}</b> ({text(record.model)})"
    )
    if record.error is None:
        return f"{where} answered after {duration(record.elapsed)}"
    return f"{where} failed after {duration(record.elapsed)}" + _error(record.error)


def _tool_intent(record: ToolIntent) -> str:
    eager = " (eager: started while the answer streamed)" if record.eager else ""
    invalid = f" · invalid: {text(record.error)}" if record.invalid else ""
    return f"call <b>{text(record.name)}</b>{eager}{invalid}" + _arguments(record)


def _approval(record: ApprovalGiven) -> str:
    decision = str(record.decision)
    style = "" if decision in ("allow", "edit") else " class=error"
    reason = f": {text(record.reason)}" if record.reason else ""
    by = record.who
    who = f" by {text(by)}" if by else ""
    edited = _arguments(record) if decision == "edit" else ""
    return (
        f"approval of <b>{text(record.name)}</b>: "
        f"<span{style}>{text(decision)}</span>{who}{reason}{edited}"
    )


def _answer(record: AnswerGiven) -> str:
    who = f" by {text(record.principal)}" if record.principal else ""
    return f"result of <b>{text(record.name)}</b> given{who}" + value(
        record.content or "", label="result"
    )


def _run_suspended(record: RunSuspended) -> str:
    pending = [p for p in record.pending if isinstance(p, dict)]
    calls = ", ".join(
        f"{text(p.get('name'))} ({text(p.get('awaiting') or 'approval')})" for p in pending
    )
    return f"<b>suspended</b>: waits on {len(pending)} call(s): {calls}"


def _tool_outcome(record: ToolOutcome) -> str:
    result = record.result or {}
    name = text(result.get("name"))
    if record.interrupted:
        return f"<b>{name}</b> <span class=error>{MAY_HAVE_RUN}</span>"
    attempts = result.get("attempts")
    timing = f" in {duration(result.get('elapsed'))}, {text(attempts)} attempt(s)"
    verdict = "ok" if result.get("ok") else f"<span class=error>{text(result.get('error'))}</span>"
    parts = [f"<b>{name}</b> {verdict}{timing}", value(result.get("content", ""), label="result")]
    if isinstance(result.get("traceback"), str):
        parts.append(
            f"<details><summary class=error>traceback</summary>"
            f"<pre>{text(result['traceback'])}</pre></details>"
        )
    return "".join(parts)


def _run_finished(record: RunFinished) -> str:
    output = value(record.output, label="answer") if record.output else ""
    return (
        f"run {text(record.outcome)} after {text(record.turns)} turns"
        f"{_tokens(record.usage)}{_cost(record.cost)}{output}"
    )


def _run_failed(record: RunFailed) -> str:
    return f"<span class=error>run {text(record.ending)}</span>" + _error(record.error)


def _body(event: JournalEvent) -> str:
    """What the event's block says, by the kind of its record."""
    record = event.record
    match record:
        case RunStarted():
            return _run_started(record)
        case RunResumed():
            return "<b>resumed</b> in a new process from the last recorded step"
        case ModelRequest():
            return _model_request(event, record)
        case ModelResponse():
            return _model_response(record)
        case ModelFailed():
            return _model_failed(record)
        case ModelAttempt():
            return _model_attempt(record)
        case ModelStreaming():
            return value(payload_of(record), label=record.kind)
        case ToolIntent():
            return _tool_intent(record)
        case ApprovalGiven():
            return _approval(record)
        case AnswerGiven():
            return _answer(record)
        case QuestionAnswered():
            who = f" by {text(record.principal)}" if record.principal else ""
            return (
                f"question of <b>{text(record.name)}</b> answered ({text(record.action)}){who}"
                + (value(record.content, label="answer") if record.content else "")
            )
        case RunSuspended():
            return _run_suspended(record)
        case ToolOutcome():
            return _tool_outcome(record)
        case RunFinished():
            return _run_finished(record)
        case RunFailed():
            return _run_failed(record)
        case ToolsChanged():
            return f"tools of <b>{text(record.source)}</b> changed" + value(
                payload_of(record), label=record.kind
            )
        case ModelSampled():
            said = f"refused: {text(record.error)}" if record.error else "answered"
            return f"<b>{text(record.source)}</b> sampled the model ({said})" + value(
                payload_of(record), label=record.kind
            )
        case SteerApplied():
            return f"steered ({text(record.how)})" + (
                value(record.text, label="steer") if record.text is not None else ""
            )
        case _:
            assert_never(record)


def render_event(event: JournalEvent, start: float) -> str:
    """The event's block; ``start`` is the run's first time (for offsets)."""
    body = _body(event)
    call = f" · call {ident(event.call_id)}" if event.call_id else ""
    turn = f"turn {event.turn} · " if event.turn is not None else ""
    return (
        f'<div class=event id="e{event.seq}" data-seq="{event.seq}" '
        f'data-kind="{ident(event.kind)}" data-turn="{"" if event.turn is None else event.turn}">'
        f"<div class=meta>{turn}+{event.at - start:.3f} s · #{event.seq}{call}</div>"
        f"<span class=kind>{ident(event.kind)}</span> {body}</div>"
    )


def event_json(event: JournalEvent, start: float) -> str:
    """The event as the live stream sends it: its seq, turn and block (made
    safe to send, as the pages are: :func:`toolwire.view._visible.clean`)."""
    return json.dumps(
        {"seq": event.seq, "turn": event.turn, "html": clean(render_event(event, start))},
        ensure_ascii=False,
    )
