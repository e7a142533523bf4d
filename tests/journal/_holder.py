"""Journal processes for the lease tests: opening a test's store the way the
tests do, and a worker that writes on command.

Usage: ``python -m tests.journal._holder STORE RUN_ID``: takes the run's lease,
prints ``{"held": token}``, then for each line on stdin records a
``model_request`` event whose data is the line, and prints ``{"wrote": seq}``
or ``{"refused": type_name}``.
"""

from __future__ import annotations

import json
import sys

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
                seq = journal.record_event(run_id, "model_request", line.strip(), turn=1)
            except JournalError as exc:
                print(json.dumps({"refused": exc.type_name}), flush=True)
            else:
                print(json.dumps({"wrote": seq}), flush=True)
    journal.close()


if __name__ == "__main__":
    main()
