"""A process that asks a shared rate limit for requests (for
``test_rate_limits_postgres``): it waits for ``go`` on stdin, then tries
``count`` requests of ``gpt-4.1-mini`` each waiting at most ``max_wait``
seconds, and prints how many it was given."""

from __future__ import annotations

import sys

import anyio

from toolwire.errors import TransportTimeout
from toolwire.http import HttpRequest, RateLimit, RateLimiter
from toolwire.journal import PostgresRateStore


async def main(url: str, count: int, max_wait: float) -> None:
    store = PostgresRateStore(url)
    limiter = RateLimiter(RateLimit(requests_per_minute=5), store=store, max_wait=max_wait)
    request = HttpRequest(method="POST", url="https://api.openai.com/v1/x", json={"model": "m"})
    store.reserve(("warm", "up"), 0, RateLimit(), 0.0)  # connected before the start
    print("ready", flush=True)
    sys.stdin.readline()
    for _ in range(count):
        try:
            await limiter.acquire(request, 400)
        except TransportTimeout:
            pass
    print(limiter.granted, flush=True)
    store.close()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], int(sys.argv[2]), float(sys.argv[3]))
