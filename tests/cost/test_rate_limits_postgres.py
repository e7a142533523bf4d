"""Rate limits in PostgreSQL: one budget per provider and model shared by
every process on the database, against a real server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests._postgres import other_connections
from toolwire.http import RateLimit, RateLimiter
from toolwire.http.ratelimit import LocalRateStore
from toolwire.journal import JournalError, PostgresJournal, PostgresRateStore

WORKER = Path(__file__).with_name("_rate_worker.py")
KEY = ("api.openai.com", "gpt-4.1-mini")


def test_two_processes_share_one_budget(postgres_url: str) -> None:
    # Five requests a minute between them: each asks for five at once, and
    # the two are given five in all; the rest wait past their max_wait.
    workers = [
        subprocess.Popen(
            [sys.executable, str(WORKER), postgres_url, "5", "0.5"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        for worker in workers:
            assert worker.stdout is not None
            assert worker.stdout.readline().strip() == "ready"
        outputs = [worker.communicate("go\n", timeout=60)[0] for worker in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait(10)
    assert [worker.returncode for worker in workers] == [0, 0]
    granted = [int(output.split()[-1]) for output in outputs]
    assert sum(granted) == 5, granted
    with psycopg.connect(postgres_url, autocommit=True) as db:
        rows = db.execute("SELECT count(*) FROM toolwire_rate_requests WHERE model = 'm'")
        assert rows.fetchone() == (5,)


def test_budgets_of_requests_tokens_and_holds(postgres_url: str) -> None:
    limit = RateLimit(requests_per_minute=3, tokens_per_minute=1000)
    first, second = PostgresRateStore(postgres_url), PostgresRateStore(postgres_url)
    try:
        assert first.reserve(KEY, 400, limit, 0.0) == 0
        assert second.reserve(KEY, 400, limit, 0.0) == 0
        # The tokens: 800 of 1000 spent in the last minute, 400 more do not fit.
        assert 59 < second.reserve(KEY, 400, limit, 0.0) <= 60
        assert first.reserve(KEY, 100, limit, 0.0) == 0
        # The requests: three in the last minute.
        assert 59 < first.reserve(KEY, 0, limit, 0.0) <= 60
        # Another model has its own budget; a hold (a 429) holds every process.
        other = ("api.openai.com", "o3")
        assert first.reserve(other, 0, limit, 0.0) == 0
        first.block(other, first.clock() + 30)
        assert 29 < second.reserve(other, 0, limit, 0.0) <= 30
        second.block(other, second.clock() + 5)  # a shorter hold does not shorten it
        assert 29 < first.reserve(other, 0, limit, 0.0) <= 30
    finally:
        first.close()
        second.close()


def test_the_journals_database_holds_the_budgets(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLWIRE_JOURNAL", postgres_url)
    limiter = RateLimiter(RateLimit(requests_per_minute=1))
    assert isinstance(limiter.store, PostgresRateStore)
    assert "@" not in repr(limiter.store)
    # The tables are the journal's, created by its migrations.
    PostgresJournal(postgres_url).close()
    assert limiter.store.reserve(KEY, 0, RateLimit(requests_per_minute=1), 0.0) == 0
    assert limiter.store.reserve(KEY, 0, RateLimit(requests_per_minute=1), 0.0) > 0
    limiter.store.close()  # type: ignore[attr-defined]
    monkeypatch.setenv("TOOLWIRE_JOURNAL", "off")
    assert isinstance(RateLimiter().store, LocalRateStore)


def test_a_refused_migration_closes_the_stores_connection(postgres_url: str) -> None:
    PostgresJournal(postgres_url).close()
    with psycopg.connect(postgres_url, autocommit=True) as db:
        db.execute("INSERT INTO toolwire_schema (version) VALUES (99)")  # a newer toolwire's
    store = PostgresRateStore(postgres_url)
    with pytest.raises(JournalError, match="newer toolwire"):
        store.reserve(KEY, 0, RateLimit(), 0.0)
    assert other_connections(postgres_url) == 0  # closed, not left to the collector


def test_an_unreachable_database_is_a_journal_error(tmp_path: Path) -> None:
    store = PostgresRateStore(f"postgresql://secret-user:hunter2@/none?host={tmp_path}", timeout=2)
    with pytest.raises(JournalError, match="cannot use the rate limits") as caught:
        store.reserve(KEY, 0, RateLimit(), 0.0)
    assert "hunter2" not in str(caught.value)
    assert "hunter2" not in repr(store)


@pytest.mark.parametrize("password", ["hun%zzter2", "hun ter2"])
def test_a_url_libpq_cannot_parse_is_refused_without_its_password(password: str) -> None:
    # libpq quotes the part it cannot parse: here, the password.
    store = PostgresRateStore(f"postgresql://u:{password}@127.0.0.1:1/db", timeout=1)
    with pytest.raises(JournalError, match="cannot use the rate limits") as caught:
        store.reserve(KEY, 0, RateLimit(), 0.0)
    assert "hun" not in str(caught.value)


def test_the_default_store_measures_holds_on_the_limiters_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A hold until 30 on the limiter's clock is 30 s from its now of 0; on
    # another clock it would be long past, and the 429's hold lost.
    monkeypatch.setenv("TOOLWIRE_JOURNAL", "postgresql://u@127.0.0.1:1/db")  # never reached

    def clock() -> float:
        return 0.0

    limiter = RateLimiter(clock=clock)
    assert isinstance(limiter.store, PostgresRateStore)
    assert limiter.store.clock is clock


def test_the_journal_sets_the_default_store_from_above() -> None:
    # The HTTP layer never imports the journal: a limiter built before the
    # journal is imported takes the journal's store on first use all the same.
    code = (
        "import sys\n"
        "from toolwire.http import RateLimiter\n"
        "limiter = RateLimiter()\n"
        "print('toolwire.journal' in sys.modules)\n"
        "import toolwire.journal\n"
        "print(type(limiter.store).__name__, type(RateLimiter().store).__name__)\n"
    )
    env = {**os.environ, "TOOLWIRE_JOURNAL": "postgresql://u@127.0.0.1:1/db"}  # never reached
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    ).stdout
    assert out.split() == ["False", "PostgresRateStore", "PostgresRateStore"]
