"""Reads one error response through HttpxTransport and reports its own peak
memory: ``python -m tests.transport._bounds_client URL``. Prints one JSON line:
``{"before_kib", "after_kib", "body_chars", "status"}`` (peak RSS in KiB)."""

from __future__ import annotations

import json
import resource
import sys

import anyio

from toolwire import HttpRetryPolicy, HttpxTransport, ProviderError
from toolwire.http import HttpRequest


def peak_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


async def main(url: str) -> None:
    before = peak_kib()
    request = HttpRequest(method="POST", url=url, json={"model": "m"}, stream=True)
    async with HttpxTransport(retry=HttpRetryPolicy(retries=0)) as transport:
        try:
            async with transport.stream(request) as response:
                status = response.status_code
                body = ""
        except ProviderError as exc:
            status = exc.status_code or 0
            body = json.dumps(exc.body)
    print(
        json.dumps(
            {
                "before_kib": before,
                "after_kib": peak_kib(),
                "body_chars": len(body),
                "status": status,
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
