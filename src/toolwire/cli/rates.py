"""``toolwire rates``: the rate-limit holds every worker on a journal shares.

A :class:`~toolwire.http.RateLimiter` whose store is the journal's PostgreSQL
database (:class:`~toolwire.journal.PostgresRateStore`, the default when
``$TOOLWIRE_JOURNAL`` is a ``postgresql://`` URL) keeps a 429's hold there,
for every worker. ``list`` shows the holds not yet over; ``lift MODEL`` ends
the holds of a model at once (of one provider host with ``--host``). The
journal is ``--journal URL``, else ``$TOOLWIRE_JOURNAL``. A SQLite journal
shares no holds: each process keeps its own, in memory.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from toolwire.cli._console import PipeConsole
from toolwire.cli.runs import _fail, _journal_option
from toolwire.journal import JournalError, PostgresRateStore, default_journal

__all__ = ["rates"]


def _store(journal: Path | str | None) -> PostgresRateStore:
    chosen = journal if journal is not None else default_journal()
    if not isinstance(chosen, str):
        _fail(
            "rate holds are shared only in a PostgreSQL journal: give --journal "
            "postgresql://... or set $TOOLWIRE_JOURNAL to one (a SQLite journal's "
            f"workers each keep their holds in memory; the journal here is {chosen})"
        )
    return PostgresRateStore(chosen)


@click.group("rates")
def rates() -> None:
    """The rate-limit holds shared by every worker on a PostgreSQL journal:
    list them, lift one."""


@rates.command("list")
@_journal_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object per hold.")
def list_holds(journal_path: Path | str | None, as_json: bool) -> None:
    """The holds not yet over: provider host, model, seconds left."""
    store = _store(journal_path)
    try:
        holds = store.holds()
    except JournalError as exc:
        _fail(exc.message)
    finally:
        store.close()
    if as_json:
        for hold in holds:
            line = {"host": hold.host, "model": hold.model, "seconds": round(hold.seconds, 3)}
            click.echo(json.dumps(line))
        return
    console = PipeConsole()
    if not holds:
        console.print(f"no rate-limit holds in {store.where}")
    for hold in holds:
        console.print(f"{hold.model} at {hold.host}: held {hold.seconds:.0f} s more", markup=False)


@rates.command("lift")
@click.argument("model")
@click.option("--host", default=None, help="Only the hold of this provider host.")
@_journal_option
def lift(model: str, host: str | None, journal_path: Path | str | None) -> None:
    """End the holds of MODEL now, for every worker."""
    store = _store(journal_path)
    try:
        lifted = [
            hold
            for hold in store.holds()
            if hold.model == model and host in (None, hold.host) and store.lift(hold.key)
        ]
    except JournalError as exc:
        _fail(exc.message)
    finally:
        store.close()
    if not lifted:
        where = f" at {host}" if host is not None else ""
        _fail(f"no hold of {model!r}{where} in {store.where} (see: toolwire rates list)")
    for hold in lifted:
        click.echo(f"lifted the hold of {hold.model} at {hold.host} ({hold.seconds:.0f} s left)")
