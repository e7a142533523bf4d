"""``toolwire runs``: what agents did, read from the journal.

``list`` shows the latest runs; ``show RUN`` a timeline of one run (turns,
model answers with their times and tokens, tool calls with arguments,
attempts, times and results, approvals, errors, resumptions); ``export RUN``
prints the whole record as JSON Lines. ``RUN`` is a run id, a unique prefix
of one, or ``last``. Every command reads the journal agents write by default
(``$TOOLWIRE_JOURNAL`` or the user state directory), or ``--journal PATH``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import fields, is_dataclass, replace
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from toolwire.cli._console import PipeConsole
from toolwire.cost import Cost, cost_from_dict, format_usd
from toolwire.journal import (
    Journal,
    JournalError,
    JournalEvent,
    PostgresJournal,
    RunLog,
    RunSummary,
    SQLiteJournal,
    default_journal,
    pending_calls,
)
from toolwire.journal._postgres import is_postgres_url

__all__ = ["runs", "timeline"]

F = TypeVar("F", bound=Callable[..., Any])

_SHOWN = 160


class _JournalParam(click.ParamType[Path | str]):
    """A journal file, or a ``postgresql://`` URL."""

    name = "journal"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Path | str:
        if isinstance(value, Path):
            return value
        text = str(value)
        return text if is_postgres_url(text) else Path(text)


_JOURNAL = _JournalParam()


def _journal_option(function: F) -> F:
    decorated: F = click.option(
        "--journal",
        "journal_path",
        type=_JOURNAL,
        default=None,
        help="The journal file or postgresql:// URL "
        "(default: $TOOLWIRE_JOURNAL or the user state directory).",
    )(function)
    return decorated


class _RunsError(click.ClickException):
    exit_code = 2


def _fail(message: str) -> NoReturn:
    raise _RunsError(message)


def _open(path: Path | str | None) -> Journal | None:
    """The journal to read, or ``None`` when there is none yet (reading never
    creates a file, nor a table)."""
    chosen = path if path is not None else default_journal()
    if chosen is None:
        _fail("journaling is off (TOOLWIRE_JOURNAL=off) and no --journal was given")
    try:
        if isinstance(chosen, str):
            return PostgresJournal(chosen, read_only=True)
        if not chosen.exists():
            return None
        return SQLiteJournal(chosen, read_only=True)
    except JournalError as exc:
        _fail(exc.message)


def _load(path: Path | str | None, ref: str) -> RunLog:
    journal = _open(path)
    if journal is None:
        where = path if path is not None else default_journal()
        _fail(f"no run {ref!r}: there is no journal at {where}")
    try:
        return journal.load_run(journal.find_run(ref))
    except JournalError as exc:
        _fail(exc.message)
    finally:
        journal.close()


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


def _cost(cost: Any) -> str:
    """A recorded cost's total as ``$0.0123``; ``-`` when unknown."""
    known = cost_from_dict(cost)
    return format_usd(known.total if known is not None else None)


def _cost_sum(log: RunLog) -> dict[str, Any] | None:
    """The run's cost from its responses (a run still going, or ended by an
    error); ``None`` when one of them has no known cost."""
    total = Cost(total=Decimal(0))
    for event in log.events:
        if event.kind == "model_response" or (
            event.kind == "model_failed" and "cost" in event.data
        ):
            cost = cost_from_dict(event.data.get("cost"))
            if cost is None:
                return None
            total = total + cost
    return total.to_dict()


def _count(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else "-"


def _usage_sum(log: RunLog) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for event in log.events:
        usage = event.data.get("usage") if event.kind == "model_response" else None
        if isinstance(usage, dict):
            for key, value in usage.items():
                if isinstance(value, int):
                    total[key] = total.get(key, 0) + value
    return total


def _arguments(data: dict[str, Any]) -> str:
    if "arguments" in data:
        return json.dumps(data["arguments"], ensure_ascii=False)
    if "arguments_preview" in data:
        return f"{data['arguments_preview']} ({data.get('arguments_chars')} chars)"
    return str(data.get("raw_arguments", ""))


# -- the structured timeline --------------------------------------------------------


def timeline(log: RunLog) -> dict[str, Any]:
    """One run as a JSON-ready object: the run, then each turn with its model
    requests, answer and tool calls (``toolwire runs show --json``)."""
    turns: dict[int, dict[str, Any]] = {}
    calls: dict[tuple[int, str], dict[str, Any]] = {}

    def turn_of(number: int) -> dict[str, Any]:
        return turns.setdefault(
            number,
            {"turn": number, "attempts": 0, "errors": [], "answer": None, "tool_calls": []},
        )

    for event in log.events:
        if event.turn is None:
            continue
        turn = turn_of(event.turn)
        data = event.data
        if event.kind == "model_request":
            turn["attempts"] += 1
            turn.setdefault("requested_at", event.at)
        elif event.kind == "model_failed":
            turn["errors"].append({**data.get("error", {}), "elapsed": data.get("elapsed")})
        elif event.kind == "model_response":
            assistant = data.get("assistant") or {}
            turn["answer"] = {
                "elapsed": data.get("elapsed"),
                "finish_reason": data.get("finish_reason"),
                "usage": data.get("usage"),
                "cost": data.get("cost"),
                "text": assistant.get("text", ""),
                "tool_calls": len(assistant.get("tool_calls", [])),
            }
        elif event.kind == "run_suspended":
            turn["pending"] = event.data.get("pending", [])
        elif event.call_id is not None and event.kind in (
            "tool_intent",
            "approval",
            "answer",
            "tool_outcome",
        ):
            key = (event.turn, event.call_id)
            call = calls.get(key)
            if call is None:
                call = {"id": event.call_id, "name": data.get("name"), "starts": 0}
                calls[key] = call
                turn["tool_calls"].append(call)
            if event.kind == "tool_intent":
                call["starts"] += 1
                call["arguments"] = data.get("arguments", data.get("arguments_preview"))
                call["eager"] = data.get("eager", False)
                call["repaired"] = data.get("repaired", False)
            elif event.kind in ("approval", "answer"):
                call[event.kind] = {k: v for k, v in data.items() if k != "name"}
            else:
                result = data.get("result", {})
                call["name"] = result.get("name", call["name"])
                call.update(
                    ok=result.get("ok"),
                    error=result.get("error"),
                    attempts=result.get("attempts"),
                    elapsed=result.get("elapsed"),
                    content=result.get("content"),
                    interrupted=data.get("interrupted", False),
                )
                if isinstance(result.get("traceback"), str):
                    call["traceback"] = result["traceback"]
    run = log.run.to_dict()
    if run["usage"] is None:
        run["usage"] = _usage_sum(log)
    if run["cost"] is None and log.run.status in ("running", "limit", "failed", "cancelled"):
        run["cost"] = _cost_sum(log)
    return {"run": run, "turns": [turns[n] for n in sorted(turns)]}


# -- rendering ----------------------------------------------------------------------


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
    usage = run.usage if run.usage is not None else _usage_sum(log)
    cost = run.cost if run.cost is not None or run.finished else _cost_sum(log)
    lines = [
        first,
        Text(
            f"model {run.model} · {run.provider} ({run.dialect}) · started {_when(run.started_at)}"
            f" · {elapsed:.3f} s" + (f" · resumed {run.resumes}×" if run.resumes else ""),
            style="dim",
        ),
        Text(
            f"{turns} turns · {calls} tool calls · tokens {_tokens(usage)} · cost {_cost(cost)}",
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
        f"{what} · tokens {_tokens(data.get('usage'))} · {_cost(data.get('cost'))}",
    )


def _model_streaming(event: JournalEvent, names: dict[str, str]) -> Text:
    response_id = _short(str(event.data.get("response_id", "?")))
    return Text.assemble(_turn(event), f"  streaming response {response_id} (kept by the provider)")


def _model_failed(event: JournalEvent, names: dict[str, str]) -> Text:
    error = event.data.get("error", {})
    used = ""
    if "usage" in event.data:  # cut by a usage limit: what it had used
        used = f" (tokens {_tokens(event.data.get('usage'))} · {_cost(event.data.get('cost'))})"
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
        return Text.assemble("    ✗ ", (name, "bold"), (" interrupted, not run again", "red"))
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


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(value: Any) -> Any:
    """``value`` (a record, a dataclass of them) with every control character
    of its strings shown as an escape (``\x1b``): model text, tool output and
    names reach the terminal as text, never as terminal commands."""
    if isinstance(value, str):
        return _CONTROL.sub(lambda m: repr(m.group())[1:-1], value)
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


# -- commands -----------------------------------------------------------------------


@click.group("runs")
def runs() -> None:
    """What agents did: list runs, show one as a timeline, export it; approve,
    deny or answer the calls a suspended run waits on."""


def _interrupted(journal: Journal, summary: RunSummary) -> RunSummary:
    """A ``running`` run that no live process holds was killed: ``interrupted``
    (for a journal that can tell, as a SQLite file can)."""
    leased = getattr(journal, "leased", None)
    if summary.status != "running" or leased is None or leased(summary.run_id):
        return summary
    return replace(summary, status="interrupted")


@runs.command("list")
@_journal_option
@click.option("--limit", default=20, show_default=True, help="How many runs, newest first.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def list_command(journal_path: Path | str | None, limit: int, as_json: bool) -> None:
    """The latest runs."""
    journal = _open(journal_path)
    summaries: list[RunSummary] = []
    if journal is not None:
        try:
            summaries = [_interrupted(journal, s) for s in journal.list_runs(limit=limit)]
        except JournalError as exc:
            _fail(exc.message)
        finally:
            journal.close()
    if as_json:
        click.echo(json.dumps({"runs": [s.to_dict() for s in summaries]}, ensure_ascii=False))
        return
    console = PipeConsole(soft_wrap=True)
    if not console.is_terminal:  # a pipe or a file: whole rows, never cut
        console.width = max(console.width, 160)
    if not summaries:
        console.print("no runs recorded yet", highlight=False)
        return
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for column in ("run", "started", "status", "model", "turns", "tools", "tokens", "cost"):
        table.add_column(column, no_wrap=True)
    totals = {"input_tokens": 0, "output_tokens": 0}
    total_cost, unknown = Decimal(0), 0
    for s in visible(summaries):
        usage = s.usage or {}
        for key in totals:
            value = usage.get(key)
            totals[key] += value if isinstance(value, int) and not isinstance(value, bool) else 0
        cost = cost_from_dict(s.cost)
        if cost is None:
            unknown += 1
        else:
            total_cost += cost.total
        table.add_row(
            s.run_id[:12],
            datetime.fromtimestamp(s.started_at).strftime("%m-%d %H:%M"),
            s.status,
            escape(s.model),
            "-" if s.turns is None else str(s.turns),
            "-" if s.tool_calls is None else str(s.tool_calls),
            "/".join(_count(usage.get(key)) for key in ("input_tokens", "output_tokens")),
            _cost(s.cost),
        )
    # The total of what is known: runs of unknown cost are counted apart.
    shown = format_usd(total_cost) + (f" + {unknown} unknown" if unknown else "")
    table.add_section()
    table.add_row(
        "total", "", "", "", "", "", f"{totals['input_tokens']}/{totals['output_tokens']}", shown
    )
    console.print(table)


@runs.command("show")
@click.argument("run_ref", metavar="RUN")
@_journal_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--verbose", "-v", is_flag=True, help="Show each failed tool's traceback under its line."
)
def show_command(
    run_ref: str, journal_path: Path | str | None, as_json: bool, verbose: bool
) -> None:
    """A run as a timeline: turns, tool calls with timings, errors, usage.

    A tool that raised has its traceback in the journal (cleaned of
    credentials, its last 8,000 characters): --verbose shows it, --json
    always carries it."""
    log = _load(journal_path, run_ref)
    if as_json:
        click.echo(json.dumps(timeline(log), ensure_ascii=False))
        return
    render(log, PipeConsole(soft_wrap=True), verbose=verbose)


@runs.command("export")
@click.argument("run_ref", metavar="RUN")
@_journal_option
def export_command(run_ref: str, journal_path: Path | str | None) -> None:
    """A run's whole record as JSON Lines (the run, its messages, its events)."""
    log = _load(journal_path, run_ref)
    for record in log.records():
        click.echo(json.dumps(record, ensure_ascii=False))
