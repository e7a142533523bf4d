"""Rate limits shared by every worker on every machine: the budgets in PostgreSQL.

Theory of operation: :class:`PostgresRateStore` is a
:class:`~toolwire.http.RateStore` whose budgets live in the journal's
database, so that every worker with a :class:`~toolwire.http.RateLimiter` on
it shares one budget of requests and tokens per provider host and model.
``toolwire_rate_requests`` holds the requests of the last minute (when, and
their tokens); ``toolwire_rate_blocks`` the moment a spent budget or a 429's
``retry-after`` ends. Both are created by the journal's migrations. A hold
is shared by every worker, so it can be listed (:meth:`PostgresRateStore.holds`)
and lifted (:meth:`PostgresRateStore.lift`) from any of them, or from the
command line (``toolwire rates list``, ``toolwire rates lift MODEL``).

A reservation is one transaction under an advisory lock of its key, so that
two workers never both take the last request of a budget: it drops the rows
older than the window, reads the rest, decides as
:class:`~toolwire.http.LocalRateStore` does (the same function), and records
the request if it fits. Time is the database's clock (the workers' clocks
never matter): ``now`` given by the limiter is not used, and the ``until``
of :meth:`PostgresRateStore.block` is turned into a delay with the store's
``clock``, the limiter's (``time.monotonic`` by default).

The store is synchronous, as the protocol is, and says it waits on I/O
(``blocking``): the limiter asks it from a worker thread, so the event loop
goes on during the round trip to the database.

The HTTP layer knows nothing of the journal: importing this module makes
:func:`journal_rate_store` the default of every limiter built without a store
(``set_default_rate_store``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from toolwire.http.ratelimit import (
    WINDOW,
    LocalRateStore,
    RateHold,
    RateKey,
    RateLimit,
    RateStore,
    RateWindow,
    set_default_rate_store,
    wait_for,
)
from toolwire.journal._open import default_journal
from toolwire.journal._postgres import connect, migrate, url_scrubbed, url_where
from toolwire.journal._records import JournalError

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresRateStore", "journal_rate_store"]

T = TypeVar("T")

_NOW = "SELECT extract(epoch FROM clock_timestamp())::double precision"
_BLOCK = (
    "INSERT INTO toolwire_rate_blocks AS b VALUES "
    "(%s, %s, extract(epoch FROM clock_timestamp())::double precision + %s) "
    "ON CONFLICT (host, model) DO UPDATE SET until = greatest(b.until, EXCLUDED.until)"
)


class PostgresRateStore:
    """Budgets in a PostgreSQL database, shared by every process that uses it:
    ``RateLimiter(limit, store=PostgresRateStore(url))``.

    A :class:`~toolwire.http.RateLimiter` built without a store uses one on
    ``$TOOLWIRE_JOURNAL`` when that is a ``postgresql://`` URL.

    Args:
        url: a ``postgresql://`` connection URL (the journal's).
        timeout: seconds to wait to connect, for a lock, or for a statement.
        clock: the limiter's clock (see :meth:`block`).

    Raises:
        JournalError: psycopg is missing (from the first call: the store
            connects on first use).
    """

    blocking = True

    def __init__(
        self, url: str, *, timeout: float = 10.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._url = url
        self.where = url_where(url)
        self.timeout = timeout
        self.clock = clock
        self._db: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"PostgresRateStore({self.where!r})"

    def _connection(self) -> psycopg.Connection[Any]:
        if self._db is not None and not self._db.closed:
            return self._db
        try:
            import psycopg  # noqa: F401 - the error below, rather than a bare ImportError
        except ImportError:
            raise JournalError(
                "a postgresql:// rate store needs psycopg: pip install 'toolwire[postgres]'"
            ) from None
        # A worker frozen inside a reservation holds its key's advisory lock:
        # the server ends its transaction after ``timeout`` idle seconds.
        self._db = connect(self._url, self.timeout, lambda db: migrate(db, self.where))
        return self._db

    def _run(self, work: Callable[[psycopg.Connection[Any]], T]) -> T:
        with self._lock:
            try:
                db = self._connection()
                with db.transaction():
                    return work(db)
            except JournalError:
                raise
            except Exception as exc:  # psycopg's errors (libpq may quote the password)
                if self._db is not None:
                    self._db.close()
                    self._db = None
                said = url_scrubbed(self._url, str(exc))
                raise JournalError(f"cannot use the rate limits in {self.where}: {said}") from None

    def reserve(self, key: RateKey, tokens: int, limit: RateLimit, now: float) -> float:
        """See :meth:`RateStore.reserve` (``now`` is not used: the database's
        clock is).

        Raises:
            JournalError: the database cannot be reached or refused.
        """
        host, model = key

        def work(db: psycopg.Connection[Any]) -> float:
            db.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{key!r}",))
            row = db.execute(_NOW).fetchone()
            at = float(row[0]) if row else 0.0
            db.execute(
                "DELETE FROM toolwire_rate_requests WHERE host = %s AND model = %s AND at <= %s",
                (host, model, at - WINDOW),
            )
            window = RateWindow(blocked_until=_blocked(db, key))
            for when, count in db.execute(
                "SELECT at, tokens FROM toolwire_rate_requests WHERE host = %s AND model = %s "
                "ORDER BY at",
                (host, model),
            ).fetchall():
                window.requests.append(when)
                if count:
                    window.tokens.append((when, count))
                    window.token_sum += count
            wait = wait_for(window, tokens, limit, at)
            if wait <= 0:
                db.execute(
                    "INSERT INTO toolwire_rate_requests VALUES (%s, %s, %s, %s)",
                    (host, model, at, tokens),
                )
            return wait

        return self._run(work)

    def block(self, key: RateKey, until: float) -> None:
        """See :meth:`RateStore.block`; ``until`` is on the store's ``clock``.

        Raises:
            JournalError: the database cannot be reached or refused.
        """
        delay = max(0.0, until - self.clock())

        def work(db: psycopg.Connection[Any]) -> None:
            db.execute(_BLOCK, (*key, delay))

        self._run(work)

    def holds(self) -> list[RateHold]:
        """See :meth:`RateStore.holds`: every worker's, on the database's clock.

        Raises:
            JournalError: the database cannot be reached or refused.
        """

        def work(db: psycopg.Connection[Any]) -> list[RateHold]:
            rows = db.execute(
                "SELECT host, model, until - extract(epoch FROM clock_timestamp()) "
                "FROM toolwire_rate_blocks WHERE until > extract(epoch FROM clock_timestamp()) "
                "ORDER BY host, model"
            ).fetchall()
            return [RateHold(str(h), str(m), float(left)) for h, m, left in rows]

        return self._run(work)

    def lift(self, key: RateKey) -> bool:
        """See :meth:`RateStore.lift`: for every worker at once.

        Raises:
            JournalError: the database cannot be reached or refused.
        """

        def work(db: psycopg.Connection[Any]) -> bool:
            row = db.execute(
                "DELETE FROM toolwire_rate_blocks WHERE host = %s AND model = %s "
                "RETURNING until > extract(epoch FROM clock_timestamp())",
                key,
            ).fetchone()
            return bool(row and row[0])

        return self._run(work)

    def close(self) -> None:
        """Close the connection (the next call opens another)."""
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()


def _blocked(db: psycopg.Connection[Any], key: RateKey) -> float:
    row = db.execute(
        "SELECT until FROM toolwire_rate_blocks WHERE host = %s AND model = %s", key
    ).fetchone()
    return float(row[0]) if row else 0.0


def journal_rate_store(clock: Callable[[], float] = time.monotonic) -> RateStore:
    """A :class:`PostgresRateStore` on the journal when the journal is in
    PostgreSQL (``$TOOLWIRE_JOURNAL``), else a
    :class:`~toolwire.http.LocalRateStore`; ``clock``: the limiter's (what the
    holds it is given are measured on)."""
    journal = default_journal()
    if isinstance(journal, str):
        return PostgresRateStore(journal, clock=clock)
    return LocalRateStore(clock)


set_default_rate_store(journal_rate_store)
