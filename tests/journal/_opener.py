"""A worker that opens a journal when told (tests/journal/test_store.py): a
module of its own, so a fresh worker process imports only this and the journal."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

from toolwire.journal import SQLiteJournal


def open_when_told(path: str, start: Any, report: str) -> None:
    """Wait for ``start``, open the journal at ``path`` and close it; a
    failure's traceback goes to the file ``report``."""
    start.wait(60)
    try:
        SQLiteJournal(path).close()
    except BaseException:
        Path(report).write_text(traceback.format_exc())
        raise
