"""The transport's short way to its connection pools against httpx's plain way.

``HttpxTransport()`` builds each request itself and hands it straight to its
pool's httpx transport (``toolwire.http._pools.DirectPools``); given a client
made as the transport makes its own (``make_pools``), it sends through
``client.send(client.build_request(...))``, the plain way. Both are driven
through the same scenarios against a server on bare sockets that records
each request as it arrived, and must put the same requests on the wire
(method, target, HTTP version, header lines in their order and case, body)
and hand back the same responses and the same errors, with the same
messages.

The one difference is by design and pinned in ``test_httpx_transport.py``:
a cookie a server sets is never sent back by the short way (the client's jar
would send it), so no scenario here sets one.
"""

from __future__ import annotations

import string
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests._hypothesis import examples
from tests.transport._raw_server import Answer, RawServer, Seen
from toolwire.errors import ConnectError
from toolwire.http import HttpRequest
from toolwire.http._pools import make_pools
from toolwire.http.transport import HttpRetryPolicy, HttpxTransport, Timeouts

BACKENDS = ["asyncio", "trio"]


@pytest.fixture(scope="module", autouse=True)
def _no_proxy() -> Iterator[None]:
    """A proxy named by the environment would turn the short way off."""
    with pytest.MonkeyPatch.context() as patch:
        for scheme in ("http", "https", "all"):
            for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY"):
                patch.delenv(name, raising=False)
        yield


@pytest.fixture(scope="module")
def raw() -> Iterator[RawServer]:
    server = RawServer()
    server.start()
    yield server
    server.stop()


async def _no_sleep(_seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


@dataclass(frozen=True)
class Scenario:
    method: str
    tail: str
    """The path after the way's own prefix, and the query."""
    headers: dict[str, str]
    json: dict[str, Any]
    answers: list[Answer]
    stream: bool


async def _outcome(transport: HttpxTransport, request: HttpRequest, stream: bool) -> Any:
    try:
        if stream:
            async with transport.stream(request) as response:
                body = b"".join([piece async for piece in response.aiter_bytes()])
                return ("ok", response.status_code, sorted(response.headers.items()), body)
        sent = await transport.send(request)
        return ("ok", sent.status_code, sorted(sent.headers.items()), sent.content)
    except Exception as exc:  # the comparison is of the errors too
        return ("error", type(exc).__name__, str(exc), getattr(exc, "status_code", None))


@dataclass
class Ways:
    """The two transports over the same kind of pool, and how to use them."""

    server: RawServer
    timeouts: Timeouts
    retry: HttpRetryPolicy

    async def run(self, scenario: Scenario, *, requests: bool = True) -> tuple[Any, list[Seen]]:
        """Each way's outcome and the requests it sent, which must be equal
        (the requests only if asked: whether a request timed out before or
        after the server read it depends on the machine's load)."""
        results = []
        for way in ("direct", "plain"):
            path = f"/{way}/{uuid.uuid4().hex}"
            self.server.script(path, scenario.answers)
            request = HttpRequest(
                method=scenario.method,
                url=self.server.url + path + scenario.tail,
                headers=scenario.headers,
                json=scenario.json,
            )
            outcome = await self._through(way, request, scenario.stream)
            if outcome[0] == "error":  # its message names the URL
                outcome = (*outcome[:2], outcome[2].replace(path, "/way"), *outcome[3:])
            seen = [replace(s, target=s.target.removeprefix(path)) for s in self.server.seen[path]]
            results.append((outcome, seen if requests else []))
        assert results[0] == results[1]
        assert results[0][1] or not requests, "the server saw the requests"
        return results[0]

    async def _through(self, way: str, request: HttpRequest, stream: bool) -> Any:
        options: dict[str, Any] = {
            "timeouts": self.timeouts,
            "retry": self.retry,
            "sleep": _no_sleep,
            "random": lambda: 0.5,
        }
        if way == "direct":
            async with HttpxTransport(max_connections=4, **options) as transport:
                assert transport._direct is not None, "a proxy in the environment?"
                return await _outcome(transport, request, stream)
        clients, _ = make_pools(4, self.timeouts)
        try:
            async with HttpxTransport(client=clients[0], **options) as transport:
                assert transport._direct is None
                return await _outcome(transport, request, stream)
        finally:
            await clients[0].aclose()


_TOKEN = st.text(string.ascii_letters + string.digits + "-", min_size=1, max_size=10)
_NAMES = st.one_of(
    _TOKEN.map(lambda s: "X-" + s),
    st.sampled_from(
        [
            *("Accept", "accept", "User-Agent", "user-agent", "Accept-Encoding"),
            *("Authorization", "Content-Type", "x-api-key", "anthropic-version"),
        ]
    ),
)
_VALUES = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=30).map(str.strip)
_ANSWERS = st.builds(
    Answer,
    status=st.sampled_from([200, 201, 301, 400, 404, 429, 500, 503]),
    body=st.binary(max_size=600),
    headers=st.sampled_from([(), (("Retry-After", "1"),), (("X-Request-Id", "r-1"),)]),
    gzip=st.booleans(),
    cut=st.sampled_from([False, False, False, True]),
)
_TAILS = st.builds(
    lambda segment, query: f"/{segment}" + (f"?{query}" if query else ""),
    _TOKEN,
    st.text(string.ascii_letters + string.digits + "=&-._~% |é", max_size=20),
)
SCENARIOS = st.builds(
    Scenario,
    method=st.sampled_from(["POST", "GET", "PUT", "PATCH", "DELETE"]),
    tail=_TAILS,
    headers=st.dictionaries(_NAMES, _VALUES, max_size=5),
    json=st.dictionaries(
        st.text(max_size=8),
        st.one_of(st.text(max_size=200), st.integers(), st.booleans(), st.none()),
        max_size=4,
    ),
    answers=st.lists(_ANSWERS, min_size=1, max_size=3),
    stream=st.booleans(),
)


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=examples(25))
@given(scenario=SCENARIOS)
# A cut empty answer to be retried: the retry must not meet a closed connection.
@example(
    scenario=Scenario(
        "POST", "/e", {}, {}, [Answer(503, cut=True), Answer(503, b"|", gzip=True)], False
    )
)
def test_both_ways_send_the_same_requests_and_see_the_same_answers(
    raw: RawServer, backend: str, scenario: Scenario
) -> None:
    ways = Ways(raw, Timeouts(), HttpRetryPolicy(retries=2))
    anyio.run(ways.run, scenario, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_cut_body_is_the_same_error_after_the_same_retries(raw: RawServer, backend: str) -> None:
    cut = Answer(body=b'{"long": "' + b"x" * 400 + b'"}', cut=True)
    for stream in (False, True):
        scenario = Scenario("POST", "/c", {"Authorization": "k"}, {"a": 1}, [cut], stream)
        ways = Ways(raw, Timeouts(), HttpRetryPolicy(retries=1))
        outcome, seen = anyio.run(ways.run, scenario, backend=backend)
        # A whole body is read before it is handed on, so retried; a stream's is not.
        assert outcome[:2] == ("error", "ReadError") and len(seen) == (1 if stream else 2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "timeouts", [Timeouts(read=0.05), Timeouts(total=0.1)], ids=["read", "total"]
)
def test_a_timeout_is_the_same_error_in_both_ways(
    raw: RawServer, backend: str, timeouts: Timeouts
) -> None:
    silent = Answer(silent=True)
    for stream in (False, True):
        scenario = Scenario("POST", "/t", {}, {}, [silent], stream)
        ways = Ways(raw, timeouts, HttpRetryPolicy(retries=0))
        outcome, _ = anyio.run(partial(ways.run, requests=False), scenario, backend=backend)
        assert outcome[:2] == ("error", "TransportTimeout")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_request_cancelled_from_outside_is_cancelled_in_both_ways(
    raw: RawServer, backend: str
) -> None:
    async def cancelled(way: str) -> tuple[bool, list[Seen]]:
        path = f"/{way}/{uuid.uuid4().hex}"
        raw.script(path, [Answer(silent=True)])
        request = HttpRequest(method="POST", url=raw.url + path, json={"a": 1})
        clients, _ = make_pools(4, Timeouts())
        transport = (
            HttpxTransport(max_connections=4)
            if way == "direct"
            else HttpxTransport(client=clients[0])
        )
        try:
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(transport.send, request)
                    # Cancelled once the server has it.
                    await anyio.to_thread.run_sync(raw.wait_for, path, 1)
                    scope.cancel()
            # The pool is usable again: nothing of the cancelled request is held.
            raw.script(path, [Answer(body=b"after")])
            after = await transport.send(request)
            assert after.content == b"after"
        finally:
            await transport.aclose()
            await clients[0].aclose()
        return scope.cancelled_caught, [replace(s, target="") for s in raw.seen[path]]

    async def both() -> None:
        assert await cancelled("direct") == await cancelled("plain")

    anyio.run(both, backend=backend)


def test_the_plain_way_is_httpx_send() -> None:
    # What "plain" means here: the transport given a client sends through it.
    clients, direct = make_pools(4, Timeouts())
    assert direct is not None
    sent: list[httpx.Request] = []

    async def main() -> None:
        client = clients[0]
        client.event_hooks["request"] = [lambda request: _append(sent, request)]
        async with HttpxTransport(client=client, retry=HttpRetryPolicy(retries=0)) as transport:
            with pytest.raises(ConnectError):  # nothing listens there
                await transport.send(HttpRequest(method="GET", url="http://127.0.0.1:9/"))
        await client.aclose()

    anyio.run(main)
    assert [r.url.port for r in sent] == [9]


async def _append(sent: list[httpx.Request], request: httpx.Request) -> None:
    sent.append(request)
