"""The transport builds each request for its pools itself: the headers
(in their order and case) and body are those the pool's httpx client would
send."""

from __future__ import annotations

import httpx
import pytest

from toolwire.http._pools import make_pools
from toolwire.http._settings import Timeouts

CASES = [
    (
        "POST",
        "http://127.0.0.1:8080/v1/chat/completions",
        {"Authorization": "Bearer k", "Content-Type": "application/json"},
        b'{"model":"m"}',
    ),
    ("POST", "https://api.example.com:8443/v1/messages", {"x-api-key": "k"}, b""),
    ("GET", "https://api.example.com/v1/responses/r1?stream=true&starting_after=3", {}, b""),
    ("POST", "http://[::1]:8000/v1/x", {"Host": "other.example"}, b"{}"),
    ("POST", "http://localhost/v1/x", {"Content-Length": "2"}, b"{}"),
    ("POST", "http://localhost/v1/x", {"User-Agent": "app/1"}, "é".encode()),
    # A default replaced goes where the caller put it, as httpx's merge puts it.
    ("POST", "http://localhost/v1/x", {"Accept-Encoding": "br", "X-Id": "1"}, b"{}"),
    ("POST", "http://localhost/v1/x", {"Accept": "a/b", "accept": "c/d"}, b"{}"),
    ("POST", "http://localhost/v1/x", {"Transfer-Encoding": "chunked"}, b"{}"),
    ("PUT", "http://localhost/v1/x", {"content-length": "0"}, b""),
    ("DELETE", "http://localhost/v1/x", {}, b""),
]


def raw(request: httpx.Request) -> list[tuple[bytes, bytes]]:
    return list(request.headers.raw)


@pytest.mark.parametrize(("method", "url", "headers", "content"), CASES)
def test_a_direct_request_is_the_one_the_client_would_build(
    method: str, url: str, headers: dict[str, str], content: bytes
) -> None:
    clients, direct = make_pools(8, Timeouts())
    assert direct is not None
    expected = clients[0].build_request(method, url, headers=headers, content=content)
    for _ in range(2):  # the URL parsed, then known
        built = direct.request(method, url, headers, content)
        assert built.method == expected.method and built.url == expected.url
        assert raw(built) == raw(expected)
        assert built.read() == expected.read() == content
