"""Leases that hold across machines: a row per run with an expiry and a
fencing token, kept alive by a background renewer.

Theory of operation
-------------------
``toolwire_leases`` holds one row per leased run: the fencing ``token`` (drawn
from one sequence, so a later owner always has a larger token than any
earlier one), the ``owner`` (host and process id, for messages) and
``expires_at``, in the database's clock (the workers' clocks never matter).

Taking a lease inserts the row, or takes over one whose expiry has passed,
in one statement; a live row means :class:`~toolwire.journal.RunLeased`, and
so does a row still locked by a write in flight once the connection's
``lock_timeout`` has passed (a frozen worker's transaction is ended by the
server after ``idle_in_transaction_session_timeout``: see
:mod:`toolwire.journal._postgres`).
While the lease is held, :class:`Renewer` (one thread per journal, on its
own connection) pushes its expiry forward every third of the lease's life.
A worker that stops (``SIGSTOP``, a partition, a long pause) stops renewing,
its lease expires, and another worker may take the run over.

Every write of a run checks, in its transaction and under a share lock of the
lease row, that the writer still holds the token it was given
(:func:`check_fence`): a worker that was presumed dead and comes back gets
:class:`~toolwire.journal.LeaseLost`, and its write does not land. A
takeover's update of the row waits for a write in flight to commit, so a
write either lands before the takeover or is refused after it.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any

from toolwire.journal._records import LeaseLost, RunLeased

if TYPE_CHECKING:
    import psycopg

__all__ = ["Renewer", "acquire", "check_fence", "release"]

_ACQUIRE = (
    "INSERT INTO toolwire_leases AS l (run_id, token, owner, expires_at) "
    "VALUES (%s, nextval('toolwire_lease_tokens'), %s, now() + %s * interval '1 second') "
    "ON CONFLICT (run_id) DO UPDATE SET token = EXCLUDED.token, owner = EXCLUDED.owner, "
    "expires_at = EXCLUDED.expires_at WHERE l.expires_at <= now() RETURNING token"
)
_RENEW = (
    "UPDATE toolwire_leases SET expires_at = now() + %s * interval '1 second' "
    "WHERE run_id = %s AND token = %s"
)


def acquire(db: psycopg.Connection[Any], run_id: str, owner: str, ttl: float) -> int:
    """Take the run's lease for ``ttl`` seconds; its fencing token.

    Raises:
        RunLeased: a live lease of another holder (or of this process) exists,
            or a write in flight held the lease row past the lock timeout.
    """
    from psycopg import errors

    try:
        with db.transaction():
            row = db.execute(_ACQUIRE, (run_id, owner, ttl)).fetchone()
            if row is not None:
                return int(row[0])
            holder = db.execute(
                "SELECT owner FROM toolwire_leases WHERE run_id = %s", (run_id,)
            ).fetchone()
    except (errors.LockNotAvailable, errors.QueryCanceled):
        raise RunLeased(
            f"run {run_id!r} is being written by another worker (its lease row stayed "
            "locked past the journal's lock timeout): one worker at a time may run or "
            "resume it; a worker frozen inside a write loses its transaction once it has "
            "been idle for the lease's life, so try again then"
        ) from None
    who = holder[0] if holder else "another worker"
    raise RunLeased(
        f"run {run_id!r} is leased by {who}: one worker at a time may run or resume "
        "it (a worker that died holds it until its lease expires)"
    )


def release(db: psycopg.Connection[Any], run_id: str, token: int) -> None:
    """Give the lease up (nothing, if another worker took it over since)."""
    with db.transaction():
        db.execute("DELETE FROM toolwire_leases WHERE run_id = %s AND token = %s", (run_id, token))


def check_fence(db: psycopg.Connection[Any], run_id: str, token: int | None) -> None:
    """In a write's transaction: refuse it unless this writer may write the run.

    A writer holding a lease (``token``) must still hold that very token; a
    writer holding none may write only a run nobody holds a live lease of.

    Raises:
        LeaseLost: the writer's lease was taken over.
        RunLeased: another worker holds a live lease of the run.
    """
    row = db.execute(
        "SELECT token, owner, expires_at > now() FROM toolwire_leases WHERE run_id = %s FOR SHARE",
        (run_id,),
    ).fetchone()
    if token is not None:
        if row is None or int(row[0]) != token:
            raise LeaseLost(
                f"the lease of run {run_id!r} expired and was taken over"
                + (f" by {row[1]}" if row else "")
                + f": this worker's fencing token {token} is stale; the write was refused"
            )
    elif row is not None and row[2]:
        raise RunLeased(f"run {run_id!r} is leased by {row[1]}; it alone may write the run")


class Renewer:
    """Keeps a journal's leases alive from a daemon thread with its own
    connection (opened by ``connect`` on first use)."""

    def __init__(self, connect: Any, ttl: float) -> None:
        self._connect = connect
        self._ttl = ttl
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, run_id: str, token: int) -> None:
        with self._lock:
            self._held[run_id] = token
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="toolwire-lease-renewer", daemon=True
                )
                self._thread.start()

    def discard(self, run_id: str) -> None:
        with self._lock:
            self._held.pop(run_id, None)

    def _loop(self) -> None:
        db: psycopg.Connection[Any] | None = None
        while not self._stop.wait(self._ttl / 3):
            with self._lock:
                held = list(self._held.items())
            if not held:
                continue
            try:
                if db is None or db.closed:
                    db = self._connect()
                with db.transaction():
                    for run_id, token in held:
                        db.execute(_RENEW, (self._ttl, run_id, token))
            except Exception:
                if db is not None:
                    with contextlib.suppress(Exception):
                        db.close()
                db = None
        if db is not None:
            with contextlib.suppress(Exception):
                db.close()

    def close(self, timeout: float = 5.0) -> None:
        """Stop renewing (the leases then expire unless released)."""
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
