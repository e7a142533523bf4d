"""Journal processes for the lease tests: opening a test's store the way the
tests do, and a worker that writes on command.

Usage: ``python -m tests.journal._holder STORE RUN_ID``: takes the run's lease,
prints ``{"held": token}``, then for each line on stdin records a
``model_request`` event whose data is the line, and prints ``{"wrote": seq}``
or ``{"refused": type_name}``. The line ``freeze`` (Postgres only) opens a
write transaction, checks the lease in it as every write does, prints
``{"freezing": pid}`` and stops the process there (``SIGSTOP``): a worker
frozen inside a write; once continued, it writes the event and prints as above.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from toolwire.journal import Journal, JournalError, PostgresJournal, SQLiteJournal

LEASE_TTL = 1.0
"""Seconds a test worker's Postgres lease lives unless renewed."""


def open_store(store: str, *, read_only: bool = False) -> Journal:
    """A journal on ``store``: a Postgres URL or a SQLite file."""
    if store.startswith("postgresql://"):
        return PostgresJournal(store, lease_ttl=LEASE_TTL, timeout=10.0, read_only=read_only)
    return SQLiteJournal(store, read_only=read_only)


def main() -> None:
    store, run_id = sys.argv[1:3]
    journal = open_store(store)
    with journal.lease(run_id):
        token = journal.token(run_id) if isinstance(journal, PostgresJournal) else None
        print(json.dumps({"held": token}), flush=True)
        for line in sys.stdin:
            try:
                if line.strip() == "freeze":
                    assert isinstance(journal, PostgresJournal)
                    seq = journal._write(run_id, lambda db: _freeze(journal, db, run_id))
                else:
                    seq = journal.record_event(run_id, "model_request", line.strip(), turn=1)
            except JournalError as exc:
                print(json.dumps({"refused": exc.type_name}), flush=True)
            else:
                print(json.dumps({"wrote": seq}), flush=True)
    journal.close()


def _freeze(journal: PostgresJournal, db: Any, run_id: str) -> int:
    """Inside a write transaction (the lease checked and share-locked): stop."""
    print(json.dumps({"freezing": os.getpid()}), flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)
    from toolwire.journal._records import Step

    return journal._append(db, run_id, Step("model_request", '{"from":"frozen"}', turn=1))


if __name__ == "__main__":
    main()
