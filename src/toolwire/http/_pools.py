"""The HTTP transport's connection pools, and the short way to them.

Theory of operation: httpcore looks at every connection of its pool each time
a request starts or ends (an idle one with a system call), which costs more
than the rest of a request once a pool holds more than a few. So
:class:`~toolwire.http.transport.HttpxTransport` holds many small pools (of
:data:`POOL_SHARD` connections), sends each request to the least busy one,
and they share one TLS context (each would load the CA file).

Each pool has an ``httpx.AsyncClient``. Without a proxy in the environment
the clients only stand by: a request is built here (the client's default
headers, the transport's timeouts) and goes straight to the pool's httpx
transport, past the client's layers, which serve nothing for a model call
and cost more than the rest of a streamed request: building a request
through the client copies its cookie jar, and sending one runs the auth and
redirect flows, the hooks and the cookie extraction (through the client, an
agent run takes 1.16x the CPU 50 at a time, 1.21x 1 at a time:
``bench/bench_tricks.py``). The request is the one the client would send, to
the byte (``tests/transport/test_direct_differential.py``), but for its
cookies: no cookie a server sets is sent back, and redirects are never
followed (nor are they by the clients). With ``HTTP_PROXY``,
``HTTPS_PROXY`` or ``ALL_PROXY`` set, the clients build and send, through
the proxies they mount from the environment (which they do only when they
make their transports themselves).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

    from toolwire.http._settings import Timeouts

__all__ = ["POOL_SHARD", "DirectPools", "environment_proxies", "make_pools"]

POOL_SHARD = 4
"""Connections per httpx pool: a larger ``max_connections`` is split in pools
of at most this many. With 50 runs at once, pools of 4 cost a run 2.5-2.8 ms
of CPU where pools of 16 cost 3.1-3.9 ms (``bench/bench_agent.py``): the
connections waiting between a run's turns are looked at on every request of
their pool."""

URL_CACHE = 64
"""How many parsed URLs the direct way keeps (a provider sends to one or two)."""


class DirectPools:
    """The pools' httpx transports, and requests built for them.

    Args:
        pools: one ``httpx.AsyncHTTPTransport`` per pool.
        client: a client of these pools: its default headers and timeouts
            are those of every request.
    """

    def __init__(self, pools: list[httpx.AsyncHTTPTransport], client: httpx.AsyncClient) -> None:
        self.pools = pools
        # The client's default headers as it writes them, with their names lower-cased.
        self._defaults = [
            (name.decode("ascii"), name.decode("ascii").lower(), value.decode("latin-1"))
            for name, value in client.headers.raw
        ]
        self._extensions = {"timeout": client.timeout.as_dict()}
        self._urls: dict[str, tuple[httpx.URL, str]] = {}

    def request(
        self, method: str, url: str, headers: Mapping[str, str], content: bytes
    ) -> httpx.Request:
        """The request the pool's client would build (without cookies), to
        the byte: ``Host`` first, then the defaults the caller does not
        replace, the caller's headers in their order, the body's length
        last; written here rather than worked out by httpx on every request
        (``tests/transport/test_direct_differential.py`` holds the two to
        the same bytes on the wire)."""
        import httpx

        known = self._urls.get(url)
        if known is None:
            if len(self._urls) >= URL_CACHE:
                self._urls.clear()
            parsed = httpx.URL(url)
            known = self._urls[url] = (parsed, parsed.netloc.decode("ascii"))
        parsed, host = known
        given = {name.lower() for name in headers}
        pairs = [("Host", host)] if host and "host" not in given else []
        if content:
            length = "content-length" not in given
        elif method in ("POST", "PUT", "PATCH") and not given & _SIZED:
            pairs.append(("Content-Length", "0"))
            length = False
        else:
            length = False
        pairs += [(name, value) for name, lower, value in self._defaults if lower not in given]
        pairs += headers.items()
        if length:
            pairs.append(("Content-Length", str(len(content))))
        return httpx.Request(
            method,
            parsed,
            headers=pairs,
            stream=httpx.ByteStream(content),
            extensions=self._extensions,
        )


_SIZED = frozenset({"content-length", "transfer-encoding"})


def make_pools(
    max_connections: int, t: Timeouts
) -> tuple[list[httpx.AsyncClient], DirectPools | None]:
    """A client for each pool, and the direct way to the pools (``None``
    when a proxy in the environment means the clients must send)."""
    import httpx

    shards = max(1, math.ceil(max_connections / POOL_SHARD))
    size = math.ceil(max_connections / shards)
    tls = httpx.create_ssl_context()
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
    timeout = httpx.Timeout(connect=t.connect, read=t.read, write=t.write, pool=t.pool)
    pools = None
    if not environment_proxies():
        pools = [httpx.AsyncHTTPTransport(limits=limits, verify=tls) for _ in range(shards)]
    clients = [
        httpx.AsyncClient(
            timeout=timeout,
            limits=limits,
            follow_redirects=False,
            verify=tls,
            transport=pools[i] if pools is not None else None,
        )
        for i in range(shards)
    ]
    return clients, DirectPools(pools, clients[0]) if pools is not None else None


def environment_proxies() -> bool:
    """Whether the environment names an HTTP proxy (``HTTPS_PROXY``,
    ``HTTP_PROXY``, ``ALL_PROXY``), which httpx's clients mount."""
    from urllib.request import getproxies

    return any(scheme in getproxies() for scheme in ("http", "https", "all"))
