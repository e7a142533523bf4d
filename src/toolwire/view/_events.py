"""One journal event as HTML: what the run page lists, and what the live
stream sends to a page following a run.

Every kind the journal writes has its renderer (see :data:`RENDERERS`); a
kind this toolwire does not know (a newer writer's) shows its data as JSON,
so nothing recorded is hidden.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from toolwire.journal import MAY_HAVE_RUN, JournalEvent
from toolwire.view._html import duration, error_line, ident, money, text, value
from toolwire.view._visible import clean

__all__ = ["RENDERERS", "event_json", "render_event"]


def _tokens(usage: Any) -> str:
    if not isinstance(usage, dict) or not usage:
        return ""
    parts = [
        f"{text(k.removesuffix('_tokens'))} {text(v)}"
        for k, v in usage.items()
        if isinstance(v, int) and not isinstance(v, bool) and v
    ]
    return " · tokens " + ", ".join(parts) if parts else ""


def _cost(data: dict[str, Any]) -> str:
    shown = money(data.get("cost"))
    return f" · cost {shown}" if shown != "-" else ""


def _error(error: Any) -> str:
    if not isinstance(error, dict):
        return value(error, label="error") if error else ""
    return error_line(error)


def _arguments(data: dict[str, Any]) -> str:
    if "arguments" in data:
        return value(data["arguments"], label="arguments")
    if "arguments_preview" in data:
        chars = data.get("arguments_chars")
        return f"<div class=meta>arguments ({text(chars)} characters, shown cut):</div>" + value(
            data["arguments_preview"], label="arguments"
        )
    if "raw_arguments" in data:
        return "<div class=meta>raw (invalid) arguments:</div>" + value(data["raw_arguments"])
    return ""


def _run_started(event: JournalEvent) -> str:
    data = event.data
    tools = ", ".join(ident(t) for t in data.get("tools", []) if isinstance(t, str))
    return (
        f"run started · model {ident(data.get('model', ''))} · {ident(data.get('provider', ''))}"
        f" ({ident(data.get('dialect', ''))})" + (f" · tools {tools}" if tools else "")
    )


def _model_request(event: JournalEvent) -> str:
    attempt = f" · attempt {event.attempt}" if event.attempt and event.attempt > 1 else ""
    data = event.data
    return f"request carrying {text(data.get('messages'))} message(s){attempt}"


def _model_response(event: JournalEvent) -> str:
    data = event.data
    assistant = data.get("assistant") or {}
    head = (
        f"answer in {duration(data.get('elapsed'))} · finish {text(data.get('finish_reason'))}"
        f"{_tokens(data.get('usage'))}{_cost(data)}"
    )
    parts = [head]
    if isinstance(assistant, dict):
        if assistant.get("text"):
            parts.append(value(assistant["text"], label="answer"))
        calls = assistant.get("tool_calls") or []
        if calls:
            names = ", ".join(text(c.get("name")) for c in calls if isinstance(c, dict))
            parts.append(f"<div class=meta>asks for {len(calls)} tool calls: {names}</div>")
    return "".join(parts)


def _model_failed(event: JournalEvent) -> str:
    data = event.data
    return f"model failed after {duration(data.get('elapsed'))}{_cost(data)}" + _error(
        data.get("error")
    )


def _tool_intent(event: JournalEvent) -> str:
    data = event.data
    eager = " (eager: started while the answer streamed)" if data.get("eager") else ""
    invalid = f" · invalid: {text(data.get('error'))}" if data.get("invalid") else ""
    return f"call <b>{text(data.get('name'))}</b>{eager}{invalid}" + _arguments(data)


def _approval(event: JournalEvent) -> str:
    data = event.data
    decision = str(data.get("decision"))
    style = "" if decision in ("allow", "edit") else " class=error"
    reason = f": {text(data['reason'])}" if data.get("reason") else ""
    by = data.get("principal") or data.get("by")
    who = f" by {text(by)}" if by else ""
    edited = _arguments(data) if decision == "edit" else ""
    return (
        f"approval of <b>{text(data.get('name'))}</b>: "
        f"<span{style}>{text(decision)}</span>{who}{reason}{edited}"
    )


def _answer(event: JournalEvent) -> str:
    data = event.data
    who = f" by {text(data['principal'])}" if data.get("principal") else ""
    return f"result of <b>{text(data.get('name'))}</b> given{who}" + value(
        data.get("content", ""), label="result"
    )


def _run_suspended(event: JournalEvent) -> str:
    pending = [p for p in event.data.get("pending") or () if isinstance(p, dict)]
    calls = ", ".join(
        f"{text(p.get('name'))} ({'result' if p.get('awaiting') == 'result' else 'approval'})"
        for p in pending
    )
    return f"<b>suspended</b>: waits on {len(pending)} call(s): {calls}"


def _tool_outcome(event: JournalEvent) -> str:
    data = event.data
    result = data.get("result") or {}
    name = text(result.get("name"))
    if data.get("interrupted"):
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


def _run_resumed(event: JournalEvent) -> str:
    return "<b>resumed</b> in a new process from the last recorded step"


def _run_finished(event: JournalEvent) -> str:
    data = event.data
    output = value(data["output"], label="answer") if data.get("output") else ""
    return (
        f"run {text(data.get('outcome'))} after {text(data.get('turns'))} turns"
        f"{_tokens(data.get('usage'))}{_cost(data)}{output}"
    )


def _run_failed(event: JournalEvent) -> str:
    data = event.data
    word = "cancelled" if data.get("cancelled") else "failed"
    return f"<span class=error>run {word}</span>" + _error(data.get("error"))


def _unknown(event: JournalEvent) -> str:
    return value(event.data, label=event.kind)


RENDERERS: dict[str, Callable[[JournalEvent], str]] = {
    "run_started": _run_started,
    "run_resumed": _run_resumed,
    "model_request": _model_request,
    "model_response": _model_response,
    "model_failed": _model_failed,
    "tool_intent": _tool_intent,
    "approval": _approval,
    "answer": _answer,
    "run_suspended": _run_suspended,
    "tool_outcome": _tool_outcome,
    "run_finished": _run_finished,
    "run_failed": _run_failed,
}
"""The renderer of each kind the journal writes."""


def render_event(event: JournalEvent, start: float) -> str:
    """The event's block; ``start`` is the run's first time (for offsets)."""
    body = RENDERERS.get(event.kind, _unknown)(event)
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
