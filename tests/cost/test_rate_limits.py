"""Rate limits shared by every run of a process: budgets per provider and
model, learned from headers, a 429's Retry-After honoured by every run; and
fifty concurrent runs against a rate-limited emulation server, on a fake clock."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from toolwire import Agent, HttpxTransport
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.errors import TransportTimeout, UsageError
from toolwire.http import HttpRequest, RateLimit, RateLimiter
from toolwire.http.ratelimit import _announced, _duration, rate_key
from toolwire.testing import EmulationServer, Scenario, ServerRateLimit

pytestmark = pytest.mark.anyio


class FakeTime:
    """A clock that moves only when every task that waits on it is asleep
    and every request let through has reached the server: then it jumps to
    the earliest wake-up. So the server sees each request at the moment the
    limiter let it through, and the test takes no real minutes."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleepers: list[float] = []
        self.settled = lambda: True

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        target = self.now + seconds
        self.sleepers.append(target)
        try:
            with anyio.fail_after(30):  # real seconds: a test never hangs
                while self.now < target:
                    if target <= min(self.sleepers) and self.settled():
                        self.now = target
                    else:
                        await anyio.sleep(0.002)
        finally:
            self.sleepers.remove(target)


def request(model: str = "gpt-4.1-mini", url: str = "https://api.openai.com/v1/x") -> HttpRequest:
    return HttpRequest(method="POST", url=url, json={"model": model})


async def test_fifty_concurrent_runs_share_one_budget_and_never_see_a_429() -> None:
    per_minute = 10
    time = FakeTime()
    limiter = RateLimiter(RateLimit(requests_per_minute=per_minute), clock=time, sleep=time.sleep)
    server_limit = ServerRateLimit(RateLimit(requests_per_minute=per_minute), clock=time)
    time.settled = lambda: limiter.granted == len(server_limit.accepted) + server_limit.refused
    scenario = Scenario.from_dict({"turns": [{"text": "ok"}]})
    outputs: list[str] = []
    with EmulationServer(scenario, rate_limit=server_limit) as server:
        # One transport, one limiter: every run of the process shares them.
        transport = HttpxTransport(rate_limiter=limiter, sleep=time.sleep)
        _, dialect, model = PROVIDERS["openai-chat"]
        provider = make_provider("openai-chat", base_url=server.url_for(dialect), api_key="k")
        agent = Agent(provider, model=model, transport=transport, journal=False)

        async def one(n: int) -> None:
            result = await agent.run(f"question {n}")
            outputs.append(result.output)

        try:
            async with anyio.create_task_group() as tg:
                for n in range(50):
                    tg.start_soon(one, n)
        finally:
            await transport.aclose()
            await agent.aclose()
    assert outputs == ["ok"] * 50
    assert server_limit.refused == 0  # no 429 at all, so none reached a run
    assert len(server_limit.accepted) == 50 and limiter.granted == 50
    assert server_limit.most_in_a_minute() == per_minute
    assert time.now >= 4 * 60  # fifty requests at ten a minute: four minutes of waiting


async def test_a_limit_learned_from_the_headers_keeps_later_runs_under_it() -> None:
    per_minute = 5
    time = FakeTime()
    limiter = RateLimiter(clock=time, sleep=time.sleep)  # nothing configured
    server_limit = ServerRateLimit(RateLimit(requests_per_minute=per_minute), clock=time)
    time.settled = lambda: limiter.granted == len(server_limit.accepted) + server_limit.refused
    scenario = Scenario.from_dict({"turns": [{"text": "ok"}]})
    with EmulationServer(scenario, rate_limit=server_limit) as server:
        transport = HttpxTransport(rate_limiter=limiter, sleep=time.sleep)
        provider = make_provider(
            "anthropic", base_url=server.url_for("anthropic-messages"), api_key="k"
        )
        agent = Agent(provider, model="claude-sonnet-4-5", transport=transport, journal=False)
        key = (server.base_url.split("://")[1], "claude-sonnet-4-5")
        try:
            await agent.run("first")  # its answer announces the limit
            async with anyio.create_task_group() as tg:
                for n in range(12):
                    tg.start_soon(agent.run, f"q{n}")
        finally:
            await transport.aclose()
            await agent.aclose()
    assert limiter.limit_for(key) == RateLimit(requests_per_minute=per_minute)
    assert server_limit.refused == 0 and server_limit.most_in_a_minute() <= per_minute


async def test_a_429s_retry_after_holds_every_run_of_that_model() -> None:
    time = FakeTime()
    limiter = RateLimiter(clock=time, sleep=time.sleep)
    key = await limiter.acquire(request(), 100)
    limiter.observe(key, 429, {"Retry-After": "30"})
    other = await limiter.acquire(request(), 100)  # another run, same provider and model
    assert other == key and time.now == 30
    # Another model of the same provider is not held.
    await limiter.acquire(request("gpt-4.1"), 100)
    assert time.now == 30


async def test_a_spent_budget_waits_for_the_announced_reset() -> None:
    time = FakeTime()
    limiter = RateLimiter(clock=time, sleep=time.sleep)
    key = await limiter.acquire(request(), 0)
    limiter.observe(
        key,
        200,
        {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1m30s"},
    )
    await limiter.acquire(request(), 0)
    assert time.now == 90


async def test_tokens_per_minute_are_a_budget_too() -> None:
    time = FakeTime()
    limiter = RateLimiter(RateLimit(tokens_per_minute=1_000), clock=time, sleep=time.sleep)
    await limiter.acquire(request(), 2_400)  # 600 tokens
    await limiter.acquire(request(), 1_600)  # 400: the minute's budget is spent
    assert time.now == 0
    await limiter.acquire(request(), 400)  # waits for the first to leave the window
    assert time.now == 60
    # A request larger than the whole budget goes alone, once the window is empty.
    await limiter.acquire(request(), 8_000)
    assert time.now == 120


async def test_a_turn_that_never_comes_is_a_timeout() -> None:
    time = FakeTime()
    limiter = RateLimiter(
        RateLimit(requests_per_minute=1), clock=time, sleep=time.sleep, max_wait=10
    )
    await limiter.acquire(request(), 0)
    with pytest.raises(TransportTimeout, match="gave no turn within 10 s"):
        await limiter.acquire(request(), 0)


def test_the_key_is_the_host_and_the_model() -> None:
    assert rate_key(request()) == ("api.openai.com", "gpt-4.1-mini")
    gemini = HttpRequest(
        method="POST",
        url="https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        json={"contents": []},
    )
    assert rate_key(gemini) == ("generativelanguage.googleapis.com", "gemini-2.5-flash")


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (
            {
                "x-ratelimit-limit-requests": "500",
                "x-ratelimit-remaining-requests": "499",
                "x-ratelimit-reset-requests": "120ms",
            },
            (500.0, 499, 0.12),
        ),
        ({"x-ratelimit-reset-requests": "6m0s"}, (None, None, 360.0)),
        ({"anthropic-ratelimit-requests-limit": "50"}, (50.0, None, None)),
        ({"x-ratelimit-limit-requests": "lots", "x-ratelimit-reset-requests": "soon"}, None),
    ],
)
def test_announced_limits_are_read_and_garbage_is_ignored(
    headers: dict[str, str], expected: Any
) -> None:
    assert _announced(headers, "requests") == (expected or (None, None, None))


def test_durations_and_limits_are_checked() -> None:
    assert _duration("1h2m3.5s") == 3723.5 and _duration("5x") is None and _duration("") is None
    with pytest.raises(UsageError):
        RateLimit(requests_per_minute=0)
    with pytest.raises(UsageError):
        RateLimit(tokens_per_minute=float("inf"))


def test_toolwire_serve_enforces_a_rate_limit() -> None:
    import os
    import subprocess
    import sys

    import httpx

    args = [sys.executable, "-m", "toolwire", "serve", "--port", "0", "--rate-limit", "2"]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    process = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()  # printed once it serves
        base_url = first.rsplit(" ", 1)[1].strip()
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        answers = [
            httpx.post(base_url + "/v1/chat/completions", json=body, timeout=10) for _ in range(3)
        ]
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert [a.headers["x-ratelimit-remaining-requests"] for a in answers] == ["1", "0", "0"]
    assert float(answers[2].headers["retry-after"]) > 0


class _ThreadNoting:
    """A store whose calls wait on I/O: it notes the thread each runs in."""

    blocking = True

    def __init__(self) -> None:
        self.threads: list[int] = []

    def reserve(self, key: Any, tokens: int, limit: RateLimit, now: float) -> float:
        self.threads.append(threading.get_ident())
        return 0.0

    def block(self, key: Any, until: float) -> None:
        self.threads.append(threading.get_ident())


async def test_a_store_that_waits_on_io_is_asked_off_the_event_loop() -> None:
    store = _ThreadNoting()
    limiter = RateLimiter(RateLimit(requests_per_minute=10), store=store)
    await limiter.acquire(request(), 100)
    assert store.threads and threading.get_ident() not in store.threads
    assert limiter.granted == 1


class _BlockNoting(_ThreadNoting):
    """As :class:`_ThreadNoting`, and it notes the threads of its holds apart."""

    def __init__(self) -> None:
        super().__init__()
        self.holds: list[int] = []

    def block(self, key: Any, until: float) -> None:
        self.holds.append(threading.get_ident())


async def test_a_hold_from_an_answer_is_given_to_such_a_store_off_the_event_loop() -> None:
    # One request a minute: the answer says the budget is spent until its reset.
    server_limit = ServerRateLimit(RateLimit(requests_per_minute=1))
    store = _BlockNoting()
    limiter = RateLimiter(RateLimit(requests_per_minute=10), store=store)
    scenario = Scenario.from_dict({"turns": [{"text": "ok"}]})
    with EmulationServer(scenario, rate_limit=server_limit) as server:
        transport = HttpxTransport(rate_limiter=limiter)
        _, dialect, model = PROVIDERS["openai-chat"]
        provider = make_provider("openai-chat", base_url=server.url_for(dialect), api_key="k")
        agent = Agent(provider, model=model, transport=transport, journal=False)
        try:
            assert (await agent.run("question")).output == "ok"
        finally:
            await transport.aclose()
            await agent.aclose()
    assert store.holds and threading.get_ident() not in store.holds


def test_the_rate_limit_headers_are_each_dialects_registration() -> None:
    from toolwire.stream.codecs import registered

    server = ServerRateLimit(RateLimit(requests_per_minute=7), clock=lambda: 0.0)
    assert set(server.headers("openai-responses")) == {
        "x-ratelimit-limit-requests",
        "x-ratelimit-remaining-requests",
        "x-ratelimit-reset-requests",
    }
    anthropic = server.headers("anthropic-messages")
    assert anthropic["anthropic-ratelimit-requests-limit"] == "7"
    # Gemini's and Bedrock's services announce no limits: the server makes up none.
    assert server.headers("gemini") == server.headers("bedrock-converse") == {}
    for dialect in registered():
        scheme = dialect.provider.rate_limit_headers if dialect.provider else None
        sent = server.headers(dialect.name) if dialect.provider else {}
        assert set(sent) == (set(scheme.names("requests")) if scheme else set())
        # The client learns from what the server sends, whatever the dialect.
        if sent:
            assert _announced(sent, "requests")[:2] == (7.0, 7)
