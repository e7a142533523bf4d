"""``toolwire runs``: what agents did, read from the journal.

``list`` shows the latest runs; ``show RUN`` a timeline of one run (turns,
model answers with their times and tokens, tool calls with arguments,
attempts, times and results, approvals, errors, resumptions); ``export RUN``
prints the whole record as JSON Lines. ``RUN`` is a run id, a unique prefix
of one, or ``last``. Every command reads the journal agents write by default
(``$TOOLWIRE_JOURNAL`` or the user state directory), or ``--journal PATH``.

The timeline is written by :mod:`toolwire.cli._runs_render` (text) and
:mod:`toolwire.cli._runs_timeline` (JSON); ``approve``, ``deny``, ``answer``
and ``pending`` are :mod:`toolwire.cli.answers`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from rich.markup import escape
from rich.table import Table

from toolwire.cli._console import PipeConsole
from toolwire.cli._runs_render import cost_text, count_text, render, visible
from toolwire.cli._runs_timeline import timeline
from toolwire.cost import cost_from_dict, format_usd
from toolwire.journal import (
    Journal,
    JournalError,
    PostgresJournal,
    RunLog,
    RunSummary,
    SQLiteJournal,
    default_journal,
    is_postgres_url,
)

__all__ = ["runs", "timeline"]

F = TypeVar("F", bound=Callable[..., Any])


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


@click.group("runs")
def runs() -> None:
    """What agents did: list runs, show one as a timeline, export it; list
    (pending), approve, deny or answer the calls a suspended run waits on."""


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
            "/".join(count_text(usage.get(key)) for key in ("input_tokens", "output_tokens")),
            cost_text(s.cost),
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
