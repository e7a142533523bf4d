"""Holds have a ceiling: a 429 that asks for years, or a hold another worker
left, is a typed error past ``max_hold``, never a wait; a hold is kept at most
``max_hold``; a store lists its holds and lifts one (the Python API, and
``toolwire rates`` on the journal's PostgreSQL store, with real processes)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import pytest

from toolwire import Agent, HttpxTransport, RateHoldTooLong, RateLimited
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.errors import UsageError
from toolwire.http import LocalRateStore, RateHold, RateLimiter
from toolwire.journal import PostgresJournal, PostgresRateStore
from toolwire.testing import EmulationServer, Scenario

from .test_rate_limits import FakeTime, request

pytestmark = pytest.mark.anyio

KEY = ("api.openai.com", "gpt-4.1-mini")
YEARS = 1e9  # 31.7 years


async def test_a_429_asking_for_years_is_an_error_and_holds_the_model_at_most_the_ceiling() -> None:
    time = FakeTime()
    store = LocalRateStore(time)
    limiter = RateLimiter(store=store, clock=time, sleep=time.sleep, max_hold=120)
    scenario = Scenario.from_dict(
        {"turns": [{"text": "ok", "faults": [{"status": 429, "retry_after": YEARS}]}]}
    )
    with EmulationServer(scenario) as server:
        transport = HttpxTransport(rate_limiter=limiter, sleep=time.sleep)
        _, dialect, model = PROVIDERS["openai-chat"]
        provider = make_provider("openai-chat", base_url=server.url_for(dialect), api_key="k")
        agent = Agent(provider, model=model, transport=transport, journal=False)
        host = server.base_url.split("://")[1]
        try:
            with pytest.raises(RateHoldTooLong) as caught:
                await agent.run("question")
        finally:
            await transport.aclose()
            await agent.aclose()
    error = caught.value
    assert isinstance(error, RateLimited) and error.status_code == 429
    assert (error.model, error.asked, error.ceiling) == (model, YEARS, 120)
    assert model in str(error) and "1000000000 s" in str(error) and "120 s" in str(error)
    assert error.to_dict()["type"] == "rate_hold_too_long"
    assert pickle.loads(pickle.dumps(error)).to_dict() == error.to_dict()
    assert time.now == 0  # nothing waited
    # The model is held for the ceiling, not for the years asked.
    assert store.holds() == [RateHold(host, model, 120.0)]
    assert store.lift((host, model)) is True
    assert store.holds() == [] and store.lift((host, model)) is False


async def test_a_spent_budgets_reset_is_held_at_most_the_ceiling() -> None:
    time = FakeTime()
    limiter = RateLimiter(clock=time, sleep=time.sleep, max_hold=300)
    key = await limiter.acquire(request(), 0)
    limiter.observe(
        key, 200, {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1000h"}
    )
    await limiter.acquire(request(), 0)
    assert time.now == 300


async def test_a_hold_past_the_ceiling_found_in_the_store_is_an_error_not_a_wait() -> None:
    time = FakeTime()
    store = LocalRateStore(time)
    store.block(KEY, YEARS)  # left by a limiter of an older toolwire, or another ceiling
    limiter = RateLimiter(store=store, clock=time, sleep=time.sleep)
    with pytest.raises(RateHoldTooLong, match="ceiling of 300 s"):
        await limiter.acquire(request(), 0)
    assert time.now == 0
    store.lift(KEY)
    assert await limiter.acquire(request(), 0) == KEY


@pytest.mark.parametrize("value", [0, -1, float("inf"), float("nan"), True])
def test_the_ceiling_is_a_positive_number(value: float) -> None:
    with pytest.raises(UsageError, match="max_hold"):
        RateLimiter(max_hold=value)


def _toolwire(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolwire", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


async def test_a_shared_hold_is_listed_and_lifted_for_every_worker(postgres_url: str) -> None:
    PostgresJournal(postgres_url).close()  # the journal's tables
    first = PostgresRateStore(postgres_url)
    first.block(KEY, first.clock() + YEARS)  # another worker's 429, before the ceiling
    first.block(("api.anthropic.com", "claude"), first.clock() + 30)
    second = PostgresRateStore(postgres_url)
    limiter = RateLimiter(store=second, max_hold=300)
    try:
        with pytest.raises(RateHoldTooLong, match=r"gpt-4\.1-mini"):
            await limiter.acquire(request(), 0)
        holds = {hold.key: hold.seconds for hold in second.holds()}
        assert set(holds) == {KEY, ("api.anthropic.com", "claude")}
        assert YEARS - 60 < holds[KEY] <= YEARS

        listed = _toolwire("rates", "list", "--json", "--journal", postgres_url)
        assert listed.returncode == 0, listed.stderr
        lines = [json.loads(line) for line in listed.stdout.splitlines()]
        assert [(h["host"], h["model"]) for h in lines] == [
            ("api.anthropic.com", "claude"),
            ("api.openai.com", "gpt-4.1-mini"),
        ]
        lifted = _toolwire("rates", "lift", "gpt-4.1-mini", env={"TOOLWIRE_JOURNAL": postgres_url})
        assert lifted.returncode == 0, lifted.stderr
        assert "lifted the hold of gpt-4.1-mini at api.openai.com" in lifted.stdout
        assert [hold.key for hold in first.holds()] == [("api.anthropic.com", "claude")]
        assert await limiter.acquire(request(), 0) == KEY  # every worker goes on at once

        again = _toolwire("rates", "lift", "gpt-4.1-mini", "--journal", postgres_url)
        assert again.returncode == 2 and "no hold of 'gpt-4.1-mini'" in again.stderr
        text = _toolwire("rates", "list", "--journal", postgres_url)
        assert "claude at api.anthropic.com: held" in text.stdout
    finally:
        first.close()
        second.close()


def test_rates_on_a_sqlite_journal_says_holds_are_not_shared(tmp_path: object) -> None:
    done = _toolwire("rates", "list", env={"TOOLWIRE_JOURNAL": f"{tmp_path}/j.sqlite3"})
    assert done.returncode == 2
    assert "shared only in a PostgreSQL journal" in done.stderr
