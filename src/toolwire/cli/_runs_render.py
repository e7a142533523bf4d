"""``toolwire runs show``: one run as a readable timeline on a terminal.

Each journal event kind has its one-line description (:data:`_DESCRIBE`);
what the model and the tools wrote reaches the terminal with its control
characters escaped (:func:`visible`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import fields, is_dataclass, replace
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.text import Text

from toolwire.cli._runs_timeline import cost_sum, usage_sum
from toolwire.cli._terminal import terminal_text
from toolwire.cost import cost_from_dict, format_usd
from toolwire.journal import MAY_HAVE_RUN, JournalEvent, RunLog, RunSummary, pending_calls

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


def _arguments(data: dict[str, Any]) -> str:
    if "arguments" in data:
        return json.dumps(data["arguments"], ensure_ascii=False)
    if "arguments_preview" in data:
        return f"{data['arguments_preview']} ({data.get('arguments_chars')} chars)"
    return str(data.get("raw_arguments", ""))


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
            lines.append(Text(f"{message['kind']}: {_short(str(message.get('text', '')))}"))
        else:
            break
    return lines


def _event_line(event: JournalEvent, start: float, names: dict[str, str]) -> Text | None:
    describe = _DESCRIBE.get(event.kind)
    if describe is None:
        return None
    stamp = Text(f"{event.at - start:+9.3f}s  ", style="dim")
    return stamp + describe(event, names)


def _turn(event: JournalEvent) -> tuple[str, str]:
    return (f"turn {event.turn}" if event.turn is not None else "", "bold")


def _model_request(event: JournalEvent, names: dict[str, str]) -> Text:
    attempt = f", attempt {event.attempt}" if event.attempt and event.attempt > 1 else ""
    return Text.assemble(
        _turn(event), f"  request ({event.data.get('messages')} messages{attempt})"
    )


def _model_response(event: JournalEvent, names: dict[str, str]) -> Text:
    data = event.data
    calls = len((data.get("assistant") or {}).get("tool_calls", []))
    what = f"{calls} tool calls" if calls else "answer"
    return Text.assemble(
        _turn(event),
        f"  model {data.get('elapsed', 0):.3f} s · finish {data.get('finish_reason')} · "
        f"{what} · tokens {_tokens(data.get('usage'))} · {cost_text(data.get('cost'))}",
    )


def _model_streaming(event: JournalEvent, names: dict[str, str]) -> Text:
    stream_id = _short(str(event.data.get("response_id", "?")))
    return Text.assemble(_turn(event), f"  streaming response {stream_id} (kept by the provider)")


def _model_failed(event: JournalEvent, names: dict[str, str]) -> Text:
    error = event.data.get("error", {})
    used = ""
    if "usage" in event.data:  # cut by a usage limit: what it had used
        used = f" (tokens {_tokens(event.data.get('usage'))} · {cost_text(event.data.get('cost'))})"
    return Text.assemble(
        _turn(event),
        (
            f"  model failed after {event.data.get('elapsed', 0):.3f} s: "
            f"{error.get('type')}: {_short(str(error.get('message', '')))}{used}",
            "red",
        ),
    )


def _tool_intent(event: JournalEvent, names: dict[str, str]) -> Text:
    data = event.data
    names[event.call_id or ""] = str(data.get("name"))
    eager = " (eager)" if data.get("eager") else ""
    repaired = " (arguments repaired)" if data.get("repaired") else ""
    return Text.assemble(
        "    ▶ ",
        (str(data.get("name")), "bold"),
        f" {_short(_arguments(data), 100)}{eager}{repaired}",
    )


def _approval(event: JournalEvent, names: dict[str, str]) -> Text:
    data = event.data
    style = "green" if data.get("decision") in ("allow", "edit") else "red"
    reason = f": {data['reason']}" if data.get("reason") else ""
    given = f" by {data['principal']}" if data.get("principal") else ""
    if isinstance(data.get("given_at"), (int, float)):
        given += f" at {_when(data['given_at'])}"
    if data.get("repaired"):
        given += " (repaired arguments)"
    return Text.assemble(
        "    ? ",
        (str(data.get("name")), "bold"),
        (f" approval {data.get('decision')}{reason}", style),
        (given, "dim"),
    )


def _answer(event: JournalEvent, names: dict[str, str]) -> Text:
    data = event.data
    given = f" by {data['principal']}" if data.get("principal") else ""
    return Text.assemble(
        "    ← ",
        (str(data.get("name")), "bold"),
        f" result given{given}",
        (f" → {_short(str(data.get('content', '')), 100)}", "dim"),
    )


def _suspended(event: JournalEvent, names: dict[str, str]) -> Text:
    lines = Text("run suspended, waiting on:", style="bold yellow")
    for item in event.data.get("pending", ()):
        repaired = " (repaired arguments)" if item.get("repaired") else ""
        lines += Text(
            f"\n      {item.get('call_id')} {item.get('name')} awaiting {item.get('awaiting')} "
            f"{_short(json.dumps(item.get('arguments'), ensure_ascii=False), 100)} "
            f"{item.get('digest')}{repaired}"
        )
    return lines


def _tool_outcome(event: JournalEvent, names: dict[str, str]) -> Text:
    result = event.data.get("result", {})
    name = str(result.get("name") or names.get(event.call_id or "", "?"))
    if event.data.get("interrupted"):
        return Text.assemble("    ✗ ", (name, "bold"), (f" {MAY_HAVE_RUN}", "red"))
    attempts = result.get("attempts", 0)
    plural = "s" if attempts != 1 else ""
    timing = f" {result.get('elapsed', 0):.3f} s, {attempts} attempt{plural}"
    if result.get("ok"):
        content = _short(str(result.get("content", "")), 100)
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


def _run_failed(event: JournalEvent, names: dict[str, str]) -> Text:
    error = event.data.get("error", {})
    word = "cancelled" if event.data.get("cancelled") else "failed"
    if error.get("type") == "usage_limit_exceeded":
        word = "stopped by a usage limit"
    return Text(
        f"run {word}: {error.get('type')}: {_short(str(error.get('message', '')))}",
        style="bold red",
    )


_DESCRIBE: dict[str, Callable[[JournalEvent, dict[str, str]], Text]] = {
    "run_started": lambda event, names: Text("run started"),
    "run_resumed": lambda event, names: Text("run resumed in a new process", style="bold cyan"),
    "model_request": _model_request,
    "model_response": _model_response,
    "model_failed": _model_failed,
    "model_streaming": _model_streaming,
    "tool_intent": _tool_intent,
    "approval": _approval,
    "answer": _answer,
    "run_suspended": _suspended,
    "tool_outcome": _tool_outcome,
    "run_finished": lambda event, names: Text(
        f"run {event.data.get('outcome')}", style="bold green"
    ),
    "run_failed": _run_failed,
}


def _traceback(event: JournalEvent) -> Text | None:
    """A failed tool's recorded traceback, indented under its line."""
    text = event.data.get("result", {}).get("traceback") if event.kind == "tool_outcome" else None
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
        return replace(value, **{f.name: visible(getattr(value, f.name)) for f in fields(value)})
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
        shown = _event_line(event, start, names)
        if shown is not None:
            console.print(shown, highlight=False)
            trace = _traceback(event) if verbose else None
            if trace is not None:
                console.print(trace, highlight=False)
    if log.run.output:
        console.print()
        console.print(Text("answer: ", style="bold") + Text(log.run.output), highlight=False)
    problems = log.problems()
    if problems and log.run.status != "running":
        console.print(Text("journal problems: " + "; ".join(problems), style="yellow"))
