"""Where the journal lives by default, and one open journal per file per process.

Theory of operation: an :class:`~toolwire.Agent` records to
``$TOOLWIRE_JOURNAL`` when it is set (``off`` disables journaling), else to
the user's state directory (``$XDG_STATE_HOME/toolwire/journal.sqlite3``, or
``~/.local/state/toolwire/journal.sqlite3``). Agents that name the same file
share one :class:`~toolwire.journal.SQLiteJournal` (one connection), cached
per process id so that a forked child opens its own.
"""

from __future__ import annotations

import atexit
import os
import threading
from pathlib import Path

from toolwire.journal._postgres import PostgresJournal, is_postgres_url
from toolwire.journal._protocol import Journal
from toolwire.journal._store import SQLiteJournal

__all__ = ["ENV_VAR", "close_journals", "default_journal", "default_journal_path", "open_journal"]

ENV_VAR = "TOOLWIRE_JOURNAL"
"""The environment variable that names the default journal (see
:func:`default_journal`)."""
_OFF = frozenset({"off", "none", "0", "false", "no"})

_lock = threading.Lock()
_open: dict[tuple[str, int], Journal] = {}


def default_journal() -> Path | str | None:
    """The journal agents use when not told otherwise: a ``postgresql://``
    URL in ``$TOOLWIRE_JOURNAL``, else :func:`default_journal_path`."""
    value = os.environ.get(ENV_VAR, "").strip()
    return value if is_postgres_url(value) else default_journal_path()


def default_journal_path() -> Path | None:
    """The journal file agents use when not told otherwise (``None``: off, or
    a ``postgresql://`` URL: see :func:`default_journal`)."""
    value = os.environ.get(ENV_VAR)
    if value is not None and value.strip():
        if value.strip().lower() in _OFF or is_postgres_url(value.strip()):
            return None
        return Path(value).expanduser()
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state).expanduser() if state else Path.home() / ".local" / "state"
    return base / "toolwire" / "journal.sqlite3"


def open_journal(path: str | os.PathLike[str]) -> Journal:
    """The process's journal for ``path``, opened on first use: a
    :class:`PostgresJournal` for a ``postgresql://`` URL, else a
    :class:`SQLiteJournal` file."""
    resolved = os.fspath(path)
    postgres = is_postgres_url(resolved)
    if not postgres and resolved != ":memory:":
        resolved = os.path.abspath(resolved)
    key = (resolved, os.getpid())
    with _lock:
        journal = _open.get(key)
        if journal is None:
            journal = PostgresJournal(resolved) if postgres else SQLiteJournal(resolved)
            _open[key] = journal
    return journal


def close_journals() -> None:
    """Close every journal :func:`open_journal` opened in this process."""
    with _lock:
        journals = [j for (_, pid), j in _open.items() if pid == os.getpid()]
        _open.clear()
    for journal in journals:
        journal.close()


atexit.register(close_journals)
