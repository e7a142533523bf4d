"""HttpxTransport over real HTTP on 127.0.0.1: retries, timeouts, typed errors."""

from __future__ import annotations

import logging

import httpx
import pytest

from toolwire import (
    Anthropic,
    Backoff,
    ConnectError,
    Event,
    HttpRequest,
    HttpRetryPolicy,
    HttpxTransport,
    OpenAIChat,
    ProviderError,
    RateLimited,
    ReadError,
    RemoteProtocolError,
    StreamEnded,
    TextDelta,
    Timeouts,
    TransportTimeout,
    UsageError,
    UserMessage,
)

from .conftest import SSE_EVENTS, LoopbackServer

pytestmark = pytest.mark.anyio


class SleepRecorder:
    """Stands in for ``anyio.sleep``: records the delays, does not wait."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def post(url: str, body: dict[str, object] | None = None, *, stream: bool = False) -> HttpRequest:
    return HttpRequest(
        method="POST",
        url=url,
        headers={"content-type": "application/json"},
        json=body or {"hello": "world"},
        stream=stream,
    )


async def test_send_returns_the_json_response(server: LoopbackServer) -> None:
    path = server.path("ok")
    async with HttpxTransport() as transport:
        response = await transport.send(post(server.url + path, {"q": "杭州"}))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"ok": True, "echo": {"q": "杭州"}}
    assert server.counts[path] == 1


async def test_connections_are_pooled(server: LoopbackServer) -> None:
    path = server.path("ok")
    async with HttpxTransport() as transport:
        for _ in range(3):
            await transport.send(post(server.url + path))
    ports = server.client_ports[path]
    assert len(ports) == 3 and len(set(ports)) == 1  # one TCP connection, reused


async def test_429_with_retry_after_then_success(
    server: LoopbackServer, caplog: pytest.LogCaptureFixture
) -> None:
    path = server.path("rate-limited")
    sleep = SleepRecorder()
    caplog.set_level(logging.INFO, logger="toolwire.http.transport")
    async with HttpxTransport(sleep=sleep) as transport:
        response = await transport.send(post(server.url + path + "?after=2"))
    assert response.status_code == 200
    assert server.counts[path] == 2  # counted by the server
    assert sleep.delays == [2.0]  # exactly what Retry-After said
    records = [r for r in caplog.records if r.name == "toolwire.http.transport"]
    assert len(records) == 1 and records[0].levelno == logging.INFO
    assert "HTTP 429" in records[0].getMessage() and "attempt 2 of 3" in records[0].getMessage()


async def test_retry_after_is_capped(server: LoopbackServer) -> None:
    path = server.path("rate-limited")
    sleep = SleepRecorder()
    policy = HttpRetryPolicy(backoff=Backoff(max_retry_after=5.0))
    async with HttpxTransport(sleep=sleep, retry=policy) as transport:
        await transport.send(post(server.url + path + "?after=3600"))
    assert sleep.delays == [5.0]


async def test_500_storm_ends_in_a_typed_error_after_n_attempts(server: LoopbackServer) -> None:
    path = server.path("storm")
    sleep = SleepRecorder()
    policy = HttpRetryPolicy(
        retries=3, backoff=Backoff(initial_delay=0.5, multiplier=2.0, jitter=0.5)
    )
    provider = OpenAIChat(api_key="k", base_url=server.url)
    async with HttpxTransport(sleep=sleep, retry=policy, random=lambda: 0.5) as transport:
        with pytest.raises(ProviderError) as caught:
            await transport.send(post(server.url + path), parse_error=provider.parse_error)
    assert server.counts[path] == 4
    # exponential backoff, each delay less a quarter (jitter 0.5 * rand 0.5)
    assert sleep.delays == [0.375, 0.75, 1.5]
    error = caught.value
    assert type(error) is ProviderError
    assert error.status_code == 500 and "boom" in error.message
    assert error.provider == "openai"


async def test_client_errors_are_not_retried(server: LoopbackServer) -> None:
    path = server.path("bad-request")
    sleep = SleepRecorder()
    async with HttpxTransport(sleep=sleep) as transport:
        with pytest.raises(ProviderError) as caught:
            await transport.send(post(server.url + path))
    assert server.counts[path] == 1 and sleep.delays == []
    # without a provider mapping the body is still kept
    assert caught.value.body == {"error": {"message": "bad tool schema"}}


async def test_connect_refused_is_a_connect_error(refused_url: str) -> None:
    sleep = SleepRecorder()
    async with HttpxTransport(sleep=sleep, random=lambda: 0.0) as transport:
        with pytest.raises(ConnectError) as caught:
            await transport.send(post(refused_url))
    assert isinstance(caught.value.__cause__, httpx.ConnectError)
    assert sleep.delays == [0.5, 1.0]  # three attempts in all


async def test_a_connect_error_names_the_url_without_its_credentials(refused_url: str) -> None:
    where = refused_url.removeprefix("http://")
    url = f"http://someone:hunter2@{where}/v1/chat/completions?key=sekrit-key&alt=sse"
    async with HttpxTransport(retry=HttpRetryPolicy(retries=0)) as transport:
        with pytest.raises(ConnectError) as caught:
            await transport.send(post(url))
    message = caught.value.message
    shown = f"http://{where}/v1/chat/completions?key=<redacted>&alt=sse"
    assert message.startswith(f"could not connect to {shown}: ")
    assert not any(secret in str(caught.value) for secret in ("someone", "hunter2", "sekrit"))


async def test_read_timeout_is_a_transport_timeout_and_not_retried(
    server: LoopbackServer,
) -> None:
    path = server.path("slow")
    sleep = SleepRecorder()
    async with HttpxTransport(timeouts=Timeouts(read=0.2), sleep=sleep) as transport:
        with pytest.raises(TransportTimeout, match="read timeout") as caught:
            await transport.send(post(server.url + path))
    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)
    assert server.counts[path] == 1 and sleep.delays == []


async def test_read_timeouts_can_be_retried_when_asked(server: LoopbackServer) -> None:
    path = server.path("slow")
    sleep = SleepRecorder()
    policy = HttpRetryPolicy(retries=1, retry_read_timeouts=True)
    async with HttpxTransport(timeouts=Timeouts(read=0.1), sleep=sleep, retry=policy) as t:
        with pytest.raises(TransportTimeout):
            await t.send(post(server.url + path))
    assert server.counts[path] == 2 and len(sleep.delays) == 1


async def test_total_timeout_covers_the_whole_exchange(server: LoopbackServer) -> None:
    path = server.path("slow")
    async with HttpxTransport(timeouts=Timeouts(read=30, total=0.2)) as transport:
        # The server holds the answer for 5 s, well inside the read timeout:
        # only the total deadline can end the exchange, and it says so.
        with pytest.raises(TransportTimeout, match="total timeout"):
            await transport.send(post(server.url + path))


async def test_a_body_cut_before_it_is_handed_on_is_retried(server: LoopbackServer) -> None:
    path = "/cut-once/" + server.path("x").rsplit("/", 1)[1]
    sleep = SleepRecorder()
    async with HttpxTransport(sleep=sleep) as transport:
        response = await transport.send(post(server.url + path))
    assert response.json() == {"ok": True, "attempt": 2}
    assert server.counts[path] == 2 and len(sleep.delays) == 1


async def test_stream_yields_bytes_as_they_come(server: LoopbackServer) -> None:
    path = server.path("sse")
    async with HttpxTransport() as transport:
        async with transport.stream(post(server.url + path, stream=True)) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            body = b"".join([chunk async for chunk in response.aiter_bytes()])
    assert body == b"".join(SSE_EVENTS)


async def test_a_compressed_stream_is_decompressed(server: LoopbackServer) -> None:
    path = server.path("gzip-sse")
    async with HttpxTransport() as transport:
        async with transport.stream(post(server.url + path, stream=True)) as response:
            assert response.headers["content-encoding"] == "gzip"
            body = b"".join([chunk async for chunk in response.aiter_bytes()])
    assert body == b"".join(SSE_EVENTS)


async def test_a_reader_left_early_is_closed_with_the_stream(server: LoopbackServer) -> None:
    path = server.path("sse")
    async with HttpxTransport() as transport:
        async with transport.stream(post(server.url + path, stream=True)) as response:
            reader = response.aiter_bytes()
            first = await reader.__anext__()
    assert first and b"".join(SSE_EVENTS).startswith(first)
    # Closed when the stream ended, not left half-read for the garbage collector.
    with pytest.raises(StopAsyncIteration):
        await reader.__anext__()


async def test_stream_retries_before_anything_is_handed_on(server: LoopbackServer) -> None:
    path = server.path("rate-limited")
    sleep = SleepRecorder()
    async with HttpxTransport(sleep=sleep) as transport:
        async with transport.stream(post(server.url + path, stream=True)) as response:
            body = b"".join([chunk async for chunk in response.aiter_bytes()])
    assert b'"ok"' in body
    assert server.counts[path] == 2 and sleep.delays == [1.0]


async def test_stream_cut_after_bytes_were_handed_on_is_not_retried(
    server: LoopbackServer,
) -> None:
    path = "/cut-stream/" + server.path("x").rsplit("/", 1)[1]
    sleep = SleepRecorder()
    received: list[bytes] = []
    async with HttpxTransport(sleep=sleep) as transport:
        with pytest.raises(ReadError) as caught:
            async with transport.stream(post(server.url + path, stream=True)) as response:
                async for chunk in response.aiter_bytes():
                    received.append(chunk)
    assert b"".join(received) == SSE_EVENTS[0]  # the caller did get bytes...
    assert server.counts[path] == 1 and sleep.delays == []  # ...so nothing was replayed
    assert isinstance(caught.value.__cause__, httpx.RemoteProtocolError)  # closed mid-body
    assert f"the connection to {server.url + path} broke" in caught.value.message


async def test_provider_stream_cut_mid_way_raises_after_its_events(
    server: LoopbackServer,
) -> None:
    token = server.path("x").rsplit("/", 1)[1]
    provider = OpenAIChat(api_key="k", base_url=f"{server.url}/cut-stream/{token}")
    request = provider.build_request(model="m", messages=[UserMessage("hi")])
    events: list[Event] = []
    sleep = SleepRecorder()
    async with HttpxTransport(sleep=sleep) as transport:
        with pytest.raises(ReadError):
            async for event in provider.stream(request, transport=transport):
                events.append(event)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel"]
    assert server.counts[f"/cut-stream/{token}/chat/completions"] == 1 and sleep.delays == []


async def test_provider_stream_decodes_events(server: LoopbackServer) -> None:
    token = server.path("x").rsplit("/", 1)[1]
    provider = OpenAIChat(api_key="k", base_url=f"{server.url}/sse/{token}")
    request = provider.build_request(model="m", messages=[UserMessage("hi")])
    async with HttpxTransport() as transport:
        events = [e async for e in provider.stream(request, transport=transport)]
        result = await provider.complete(request, transport=transport)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello"
    assert isinstance(events[-1], StreamEnded)
    assert (result.text, result.choices[0].finish_reason) == ("Hello", "stop")
    with pytest.raises(UsageError, match="stream=True"):
        async for _ in provider.stream(
            provider.build_request(model="m", messages=[], stream=False), transport=transport
        ):
            pass  # pragma: no cover


async def test_complete_with_a_body_that_is_not_json(server: LoopbackServer) -> None:
    token = server.path("x").rsplit("/", 1)[1]
    provider = OpenAIChat(api_key="k", base_url=f"{server.url}/sse/{token}")
    request = provider.build_request(model="m", messages=[UserMessage("hi")], stream=False)
    async with HttpxTransport() as transport:
        with pytest.raises(RemoteProtocolError, match="not JSON") as caught:
            await provider.complete(request, transport=transport)
    assert caught.value.raw is not None and caught.value.raw.startswith("data:")


async def test_stream_http_errors_go_through_the_provider_mapping(
    server: LoopbackServer,
) -> None:
    path = server.path("storm")
    provider = Anthropic(api_key="k", base_url=server.url)
    async with HttpxTransport(retry=HttpRetryPolicy(retries=0)) as transport:
        with pytest.raises(ProviderError) as caught:
            async with transport.stream(
                post(server.url + path, stream=True), parse_error=provider.parse_error
            ):
                pytest.fail("an error status must not be handed on")
    assert caught.value.provider == "anthropic" and caught.value.status_code == 500
    assert server.counts[path] == 1


async def test_stream_open_read_timeout(server: LoopbackServer) -> None:
    path = server.path("slow")
    async with HttpxTransport(timeouts=Timeouts(read=0.15)) as transport:
        with pytest.raises(TransportTimeout, match="read timeout"):
            async with transport.stream(post(server.url + path, stream=True)):
                pytest.fail("no response may be handed on")
    assert server.counts[path] == 1


async def test_stream_total_timeout_while_reading_the_body(server: LoopbackServer) -> None:
    path = "/stall-stream/" + server.path("x").rsplit("/", 1)[1]
    received: list[bytes] = []
    async with HttpxTransport(timeouts=Timeouts(read=30, total=1.5)) as transport:
        with pytest.raises(TransportTimeout, match="total timeout"):
            async with transport.stream(post(server.url + path, stream=True)) as response:
                async for chunk in response.aiter_bytes():
                    received.append(chunk)
    assert b"".join(received) == SSE_EVENTS[0]
    assert server.counts[path] == 1


async def test_tiny_real_backoff(server: LoopbackServer, anyio_sleeps: list[float]) -> None:
    path = server.path("rate-limited-ms")
    async with HttpxTransport() as transport:  # no sleep given: anyio's, on any event loop
        response = await transport.send(post(server.url + path))
    assert response.status_code == 200 and server.counts[path] == 2
    assert anyio_sleeps == [0.02], "the server's retry-after-ms, waited for once"


async def test_provider_complete_over_loopback(server: LoopbackServer) -> None:
    token = server.path("x").rsplit("/", 1)[1]
    provider = OpenAIChat(api_key="k", base_url=f"{server.url}/chat/{token}/ok")
    request = provider.build_request(model="m", messages=[], stream=False)
    async with HttpxTransport() as transport:
        result = await provider.complete(request, transport=transport)
    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("call_1", "get_weather", {"city": "杭州"})
    ]
    assert result.usage is not None and result.usage.total_tokens == 7
    assert server.seen_headers[f"/chat/{token}/ok/chat/completions"]["authorization"] == "Bearer k"


async def test_provider_rate_limit_surfaces_typed(server: LoopbackServer) -> None:
    path = server.path("rate-limited")
    provider = OpenAIChat(api_key="k", base_url=server.url)
    async with HttpxTransport(retry=HttpRetryPolicy(retries=0)) as transport:
        with pytest.raises(RateLimited) as caught:
            await transport.send(post(server.url + path), parse_error=provider.parse_error)
    assert caught.value.retry_after == 1.0 and "slow down" in caught.value.message


async def test_closed_transport_refuses_requests(server: LoopbackServer) -> None:
    transport = HttpxTransport()
    await transport.aclose()
    await transport.aclose()  # idempotent
    with pytest.raises(UsageError, match="closed"):
        await transport.send(post(server.url + server.path("ok")))


async def test_provider_creates_and_closes_its_own_transport(server: LoopbackServer) -> None:
    token = server.path("x").rsplit("/", 1)[1]
    async with OpenAIChat(
        api_key="k", base_url=f"{server.url}/chat/{token}/ok", timeout=5.0
    ) as provider:
        request = provider.build_request(model="m", messages=[], stream=False)
        first = await provider.complete(request)
        second = await provider.complete(request)
    assert first.tool_calls[0].id == second.tool_calls[0].id == "call_1"
    ports = server.client_ports[f"/chat/{token}/ok/chat/completions"]
    assert len(set(ports)) == 1  # the provider kept one transport, one connection


def test_retry_policy_delays_and_validation() -> None:
    backoff = Backoff(initial_delay=1.0, multiplier=3.0, max_delay=5.0, jitter=0.2)
    policy = HttpRetryPolicy(backoff=backoff)
    assert [policy.delay(n, retry_after=None, rand=0.0) for n in (1, 2, 3)] == [1.0, 3.0, 5.0]
    assert policy.delay(1, retry_after=None, rand=1.0) == pytest.approx(0.8)
    assert policy.delay(3, retry_after=2.5, rand=0.9) == 2.5
    assert policy.delay(1, retry_after=-4, rand=0.0) == 0.0
    with pytest.raises(UsageError):
        HttpRetryPolicy(retries=-1)
    for bad in ({"jitter": 1.5}, {"initial_delay": -1.0}, {"max_delay": float("inf")}):
        with pytest.raises(UsageError):
            Backoff(**bad)


def test_timeouts_coercion() -> None:
    assert Timeouts.coerce(None) == Timeouts()
    assert Timeouts.coerce(3) == Timeouts(connect=3.0, read=3.0, write=3.0, pool=3.0)
    custom = Timeouts(read=1.0, total=9.0)
    assert Timeouts.coerce(custom) is custom
    for bad in (0, -1, True, "5"):
        with pytest.raises(UsageError):
            Timeouts.coerce(bad)  # type: ignore[arg-type]


async def test_a_large_pool_is_split_and_every_request_leaves_its_pool(
    server: LoopbackServer,
) -> None:
    # httpcore scans every connection of a pool on each request: a pool of
    # 10 becomes three of at most 4, each request to the least busy one.
    transport = HttpxTransport(max_connections=10, retry=HttpRetryPolicy(retries=0))
    assert len(transport._clients) == 3
    url = server.url + server.path("sse")
    async with transport:
        contexts = [transport.stream(post(url, stream=True)) for _ in range(9)]
        responses = [await c.__aenter__() for c in contexts]
        assert transport._busy == [3, 3, 3]
        for context in contexts:
            await context.__aexit__(None, None, None)
        assert transport._busy == [0, 0, 0]
        assert len(responses) == 9
        with pytest.raises(ProviderError):  # HTTP 500, no retry left
            await transport.send(post(server.url + server.path("storm")))
        with pytest.raises(ProviderError):
            async with transport.stream(post(server.url + server.path("storm"), stream=True)):
                pass
        await transport.send(post(server.url + server.path("ok")))
        assert transport._busy == [0, 0, 0]


async def test_requests_carry_httpx_default_headers_and_no_cookie(server: LoopbackServer) -> None:
    # Requests go straight to the connection pools, past the client's cookie
    # jar: a cookie one response sets is not sent with the next request.
    path = server.path("cookie")
    async with HttpxTransport() as transport:
        first = await transport.send(post(server.url + path))
        assert "session=from-the-server" in first.headers["set-cookie"]
        await transport.send(post(server.url + path))
    headers = server.seen_headers[path]
    assert "cookie" not in headers
    assert headers["user-agent"] == f"python-httpx/{httpx.__version__}"
    assert headers["content-type"] == "application/json"
    assert "gzip" in headers["accept-encoding"]


async def test_a_header_given_in_any_case_replaces_the_default(server: LoopbackServer) -> None:
    path = server.path("ok")
    request = HttpRequest(
        method="POST",
        url=server.url + path,
        headers={"Accept": "application/x-test", "User-Agent": "mine/1", "X-Tenant": "t"},
        json={},
    )
    async with HttpxTransport() as transport:
        await transport.send(request)
    names = server.seen_header_names[path]
    assert names.count("accept") == 1 and names.count("user-agent") == 1
    headers = server.seen_headers[path]
    assert (headers["accept"], headers["user-agent"], headers["x-tenant"]) == (
        "application/x-test",
        "mine/1",
        "t",
    )


async def test_a_proxy_named_by_the_environment_is_used(
    server: LoopbackServer, refused_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing listens at refused_url: only through the proxy (the loopback
    # server, which answers 404 to a request for another host) is there an
    # answer at all.
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.setenv("http_proxy", server.url)
    async with HttpxTransport(retry=HttpRetryPolicy(retries=0)) as transport:
        with pytest.raises(ProviderError) as caught:
            await transport.send(post(refused_url))
    assert caught.value.status_code == 404
    monkeypatch.delenv("HTTP_PROXY")
    monkeypatch.delenv("http_proxy")
    async with HttpxTransport(retry=HttpRetryPolicy(retries=0)) as transport:
        with pytest.raises(ConnectError):
            await transport.send(post(refused_url))
