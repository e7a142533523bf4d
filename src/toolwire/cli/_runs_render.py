"""``toolwire runs show``: one run as a readable timeline on a terminal.

Each journal record kind has its one-line description (:func:`_describe`);
what the model and the tools wrote reaches the terminal with its control
characters escaped (:func:`visible`).
"""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass, replace
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.text import Text
from typing_extensions import assert_never

from toolwire.cli._runs_timeline import cost_sum, usage_sum
from toolwire.cli._terminal import terminal_text
from toolwire.cost import cost_from_dict, format_usd
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
    RunLog,
    RunResumed,
    RunStarted,
    RunSummary,
    RunSuspended,
    SteerApplied,
    ToolIntent,
    ToolOutcome,
    ToolsChanged,
    part_line,
    pending_calls,
)

__all__ = ["cost_text", "count_text", "render", "visible"]

_SHOWN = 160


def _short(text: str, limit: int = _SHOWN) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _when(at: float) -> str:
    return datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S")


def _tokens(usage: dict[str, Any] | None) -> str:
    if not usage:
        return "-"
    parts = [
        f"{usage[k]} {label}"
        for k, label in (("input_tokens", "in"), ("output_tokens", "out"))
        if isinstance(usage.get(k), int)
    ]
    return " / ".join(parts) if parts else "-"


def cost_text(cost: Any) -> str:
    """A recorded cost's total as ``$0.0123``; ``-`` when unknown."""
    known = cost_from_dict(cost)
    return format_usd(known.total if known is not None else None)


def count_text(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "-"


def _arguments(record: ToolIntent) -> str:
    if record.arguments is not None:
        return json.dumps(record.arguments, ensure_ascii=False)
    if record.arguments_preview is not None:
        return f"{record.arguments_preview} ({record.arguments_chars} chars)"
    return record.raw_arguments or ""


def _header(run: RunSummary, log: RunLog) -> list[Text]:
    status_style = {
        "answered": "bold green",
        "max_turns": "bold yellow",
        "failed": "bold red",
        "cancelled": "bold red",
        "limit": "bold red",
    }.get(run.status, "bold cyan")
    status = run.status if run.status != "running" else "running (or interrupted)"
    if run.status == "suspended":
        waiting = len(pending_calls(log))
        status = f"suspended: waiting on {waiting} call{'s' if waiting != 1 else ''}"
    first = Text.assemble(("run ", "bold"), (run.run_id, "bold"), "  ", (status, status_style))
    turns = max((e.turn or 0 for e in log.events), default=0)
    calls = sum(1 for e in log.events if e.kind == "tool_outcome")
    elapsed = (log.events[-1].at - log.events[0].at) if log.events else 0.0
    usage = run.usage if run.usage is not None else usage_sum(log)
    cost = run.cost if run.cost is not None or run.finished else cost_sum(log)
    lines = [
        first,
        Text(
            f"model {run.model} · {run.provider} ({run.dialect}) · started {_when(run.started_at)}"
            f" · {elapsed:.3f} s" + (f" · resumed {run.resumes}×" if run.resumes else ""),
            style="dim",
        ),
        Text(
            f"{turns} turns · {calls} tool calls · tokens {_tokens(usage)}"
            f" · cost {cost_text(cost)}",
            style="dim",
        ),
    ]
    for message in log.messages:
        if message.get("kind") in ("system", "user"):
            said = _short(str(message.get("text", "")))
            lines.append(Text(f"{message['kind']}: {said}{_part_lines(message.get('content'))}"))
        else:
            break
    return lines


def _part_lines(items: Any) -> str:
    """`` [image/png 34 KB sha256:ab12cd34…]`` for each part of a message's
    or a result's content (nothing for its text)."""
    if not isinstance(items, list):
        return ""
    shown = [line for line in map(part_line, items) if line is not None]
    return "".join(" " + line for line in shown)


def _event_line(event: JournalEvent, start: float, names: dict[str, str]) -> Text:
    stamp = Text(f"{event.at - start:+9.3f}s  ", style="dim")
    return stamp + _describe(event, names)


def _describe(event: JournalEvent, names: dict[str, str]) -> Text:
    """The event's one-line description."""
    record = event.record
    match record:
        case RunStarted():
            return Text("run started")
        case RunResumed():
            return Text("run resumed in a new process", style="bold cyan")
        case ModelRequest():
            attempt = f", attempt {event.attempt}" if event.attempt and event.attempt > 1 else ""
            return Text.assemble(_turn(event), f"  request ({record.messages} messages{attempt})")
        case ModelResponse():
            return _model_response(event, record)
        case ModelFailed():
            return _model_failed(event, record)
        case ModelAttempt():
            return _model_attempt(event, record)
        case ModelStreaming():
            stream_id = _short(str(record.response_id or "?"))
            return Text.assemble(
                _turn(event), f"  streaming response {stream_id} (kept by the provider)"
            )
        case ToolIntent():
            return _tool_intent(event, record, names)
        case ApprovalGiven():
            return _approval(record)
        case AnswerGiven():
            return _answer(record)
        case QuestionAnswered():
            return _question_answered(record)
        case RunSuspended():
            return _suspended(record)
        case ToolOutcome():
            return _tool_outcome(event, record, names)
        case RunFinished():
            return Text(f"run {record.outcome}", style="bold green")
        case RunFailed():
            return _run_failed(record)
        case ToolsChanged():
            added, removed = ", ".join(record.added) or "none", ", ".join(record.removed) or "none"
            return Text.assemble(
                _turn(event), f"  tools of {record.source} changed: +{added} -{removed}"
            )
        case ModelSampled():
            said = f"refused: {_short(record.error)}" if record.error else "answered"
            return Text.assemble(
                _turn(event),
                f"  {record.source} sampled the model {record.elapsed or 0:.3f} s · {said} · "
                f"tokens {_tokens(record.usage)} · {cost_text(record.cost)}",
            )
        case SteerApplied():
            said = "" if record.text is None else f": {_short(record.text, 100)}"
            return Text.assemble(_turn(event), f"  steered ({record.how}){said}")
        case _:
            assert_never(record)


def _turn(event: JournalEvent) -> tuple[str, str]:
    return (f"turn {event.turn}" if event.turn is not None else "", "bold")


def _model_response(event: JournalEvent, record: ModelResponse) -> Text:
    calls = record.call_count
    what = f"{calls} tool calls" if calls else "answer"
    return Text.assemble(
        _turn(event),
        f"  model {record.elapsed or 0:.3f} s · finish {record.finish_reason} · "
        f"{what} · tokens {_tokens(record.usage)} · {cost_text(record.cost)}",
    )


def _model_failed(event: JournalEvent, record: ModelFailed) -> Text:
    error = record.error or {}
    used = ""
    if record.priced:  # cut by a usage limit: what it had used
        used = f" (tokens {_tokens(record.usage)} · {cost_text(record.cost)})"
    return Text.assemble(
        _turn(event),
        (
            f"  model failed after {record.elapsed or 0:.3f} s: "
            f"{error.get('type')}: {_short(str(error.get('message', '')))}{used}",
            "red",
        ),
    )


def _model_attempt(event: JournalEvent, record: ModelAttempt) -> Text:
    where = f"  provider {record.position} {record.provider} ({record.model})"
    if record.error is None:
        return Text.assemble(_turn(event), f"{where} answered")
    error = record.error
    failed = f"{where} failed: {error.get('type')}: {_short(str(error.get('message', '')))}"
    return Text.assemble(_turn(event), (failed, "yellow"))


def _tool_intent(event: JournalEvent, record: ToolIntent, names: dict[str, str]) -> Text:
    names[event.call_id or ""] = str(record.name)
    eager = " (eager)" if record.eager else ""
    repaired = " (arguments repaired)" if record.repaired else ""
    return Text.assemble(
        "    ▶ ",
        (str(record.name), "bold"),
        f" {_short(_arguments(record), 100)}{eager}{repaired}",
    )


def _approval(record: ApprovalGiven) -> Text:
    style = "green" if record.decision in ("allow", "edit") else "red"
    reason = f": {record.reason}" if record.reason else ""
    given = f" by {record.who}" if record.who else ""
    if record.given_at is not None:
        given += f" at {_when(record.given_at)}"
    if record.repaired:
        given += " (repaired arguments)"
    return Text.assemble(
        "    ? ",
        (str(record.name), "bold"),
        (f" approval {record.decision}{reason}", style),
        (given, "dim"),
    )


def _answer(record: AnswerGiven) -> Text:
    given = f" by {record.principal}" if record.principal else ""
    return Text.assemble(
        "    ← ",
        (str(record.name), "bold"),
        f" result given{given}",
        (f" → {_short(record.content or '', 100)}", "dim"),
    )


def _question_answered(record: QuestionAnswered) -> Text:
    given = f" by {record.principal}" if record.principal else ""
    content = json.dumps(record.content, ensure_ascii=False) if record.content else ""
    return Text.assemble(
        "    ← ",
        (str(record.name), "bold"),
        f" question answered ({record.action}){given}",
        (f" → {_short(content, 100)}" if content else "", "dim"),
    )


def _suspended(record: RunSuspended) -> Text:
    lines = Text("run suspended, waiting on:", style="bold yellow")
    for item in record.pending:
        repaired = " (repaired arguments)" if item.get("repaired") else ""
        lines += Text(
            f"\n      {item.get('call_id')} {item.get('name')} awaiting {item.get('awaiting')} "
            f"{_short(json.dumps(item.get('arguments'), ensure_ascii=False), 100)} "
            f"{item.get('digest')}{repaired}"
        )
    return lines


def _tool_outcome(event: JournalEvent, record: ToolOutcome, names: dict[str, str]) -> Text:
    result = record.result or {}
    name = str(result.get("name") or names.get(event.call_id or "", "?"))
    if record.interrupted:
        return Text.assemble("    ✗ ", (name, "bold"), (f" {MAY_HAVE_RUN}", "red"))
    attempts = result.get("attempts", 0)
    plural = "s" if attempts != 1 else ""
    timing = f" {result.get('elapsed', 0):.3f} s, {attempts} attempt{plural}"
    if result.get("ok"):
        content = _short(str(result.get("content", "")), 100) + _part_lines(result.get("parts"))
        return Text.assemble("    ✓ ", (name, "bold"), timing, (f" → {content}", "dim"))
    message = _failure_message(str(result.get("content", "")))
    return Text.assemble(
        "    ✗ ", (name, "bold"), timing, (f" {result.get('error')}: {_short(message, 100)}", "red")
    )


def _failure_message(content: str) -> str:
    """The message of a failed result's ``{"error": ..., "message": ...}`` content."""
    try:
        payload = json.loads(content)
    except ValueError:
        return content
    if isinstance(payload, dict) and isinstance(payload.get("message"), str):
        return str(payload["message"])
    return content


def _run_failed(record: RunFailed) -> Text:
    error = record.error or {}
    return Text(
        f"run {record.ending}: {error.get('type')}: {_short(str(error.get('message', '')))}",
        style="bold red",
    )


def _traceback(event: JournalEvent) -> Text | None:
    """A failed tool's recorded traceback, indented under its line."""
    record = event.record
    result = record.result if isinstance(record, ToolOutcome) else None
    text = result.get("traceback") if result is not None else None
    if not isinstance(text, str) or not text:
        return None
    return Text("\n".join("        " + line for line in text.splitlines()), style="dim")


def visible(value: Any) -> Any:
    """``value`` (a record, a dataclass of them) with every control character
    of its strings shown as an escape (``\x1b``): model text, tool output and
    names reach the terminal as text, never as terminal commands."""
    if isinstance(value, str):
        return terminal_text(value)
    if isinstance(value, dict):
        return {visible(k): visible(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(visible(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        shown = {f.name: visible(getattr(value, f.name)) for f in fields(value) if f.init}
        return replace(value, **shown)
    return value


def render(log: RunLog, console: Console, *, verbose: bool = False) -> None:
    """Print a run as a readable timeline; ``verbose`` adds each failed
    tool's traceback under its line (control characters escaped)."""
    log = visible(log)
    for line in _header(log.run, log):
        console.print(line, highlight=False)
    console.print()
    start = log.events[0].at if log.events else log.run.started_at
    names: dict[str, str] = {}
    for event in log.events:
        console.print(_event_line(event, start, names), highlight=False)
        trace = _traceback(event) if verbose else None
        if trace is not None:
            console.print(trace, highlight=False)
    if log.run.output:
        console.print()
        console.print(Text("answer: ", style="bold") + Text(log.run.output), highlight=False)
    problems = log.problems()
    if problems and log.run.status != "running":
        console.print(Text("journal problems: " + "; ".join(problems), style="yellow"))
