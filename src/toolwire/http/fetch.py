"""Fetching a part's URL for a provider that fetches none, when asked
(``Image.from_url(url, fetch=True)``): safe and bounded.

Theory of operation: a part made with ``fetch`` carries a
:class:`~toolwire.UrlFetch`, its bounds. An agent run fetches such parts
before the prompt or the tool result that holds them is journaled (so a
resumed run sends the same bytes, and never fetches again), and sends
their bytes; outside a run, :func:`fetch_content` or :func:`fetch_messages`
do it. Each fetch:

* takes https only (http with ``allow_http``), and follows at most
  ``max_redirects`` redirects, each checked as the first URL is;
* refuses a host whose address, as resolved and as connected (a name that
  resolves again to another address is caught there), is not a global
  one: loopback, private, link-local, reserved, multicast; unless
  ``allow_private``;
* ignores the environment's proxies (the address checked is the one
  connected to), reads at most ``max_bytes`` of the decoded body (the
  ``Content-Length`` is checked first), within ``timeout`` seconds for all
  of it, redirects included;
* wants the part's own media type served (``Content-Type``): a page of
  HTML where a PNG was expected is refused, never sent as an image.

Every refusal is a :class:`~toolwire.errors.ContentFetchFailed` with the
URL's secrets taken out.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import os
from collections.abc import Iterable, Sequence
from urllib.parse import urljoin, urlsplit

import anyio
import httpx

from toolwire.content import Audio, ContentItem, ContentPart, Document, Image, UrlFetch
from toolwire.errors import ContentError, ContentFetchFailed
from toolwire.http.urls import redact_url
from toolwire.messages import Message, ToolResultMessage, UserMessage

__all__ = ["fetch_content", "fetch_messages", "fetch_part"]


def _wanted(item: ContentItem) -> bool:
    return isinstance(item, (Image, Document, Audio)) and item.fetch is not None


async def fetch_part(part: ContentPart, policy: UrlFetch | None = None) -> ContentPart:
    """``part``, a part by URL, fetched: the same part with its bytes.

    Args:
        part: a part made with ``from_url``.
        policy: the bounds (default: the part's own, else the defaults).

    Raises:
        ContentFetchFailed: refused, or not fetched within the bounds.
    """
    if part.url is None:
        return part
    bounds = policy or part.fetch or UrlFetch()
    shown = redact_url(part.url)
    try:
        with anyio.fail_after(bounds.timeout):
            data = await _get(part.url, shown, bounds, part)
    except TimeoutError:
        raise ContentFetchFailed(shown, f"not fetched within {bounds.timeout:g} s") from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise ContentFetchFailed(shown, f"{type(exc).__name__}: {exc}") from None
    name = part.name or os.path.basename(urlsplit(part.url).path) or None
    return type(part)(media_type=part.media_type, data=data, name=name)


async def fetch_content(items: Iterable[ContentItem]) -> tuple[ContentItem, ...]:
    """``items`` with each part made with ``fetch`` fetched (the others as they are).

    Raises:
        ContentFetchFailed: a part could not be fetched.
    """
    out: list[ContentItem] = []
    for item in items:
        wanted = isinstance(item, (Image, Document, Audio)) and item.fetch is not None
        out.append(await fetch_part(item) if wanted else item)  # type: ignore[arg-type]
    return tuple(out)


async def fetch_messages(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with every part made with ``fetch`` fetched, in user
    messages and tool results (a run does this before journaling them).

    Raises:
        ContentFetchFailed: a part could not be fetched.
    """
    out: list[Message] = []
    for message in messages:
        if isinstance(message, UserMessage) and any(map(_wanted, message.content)):
            message = UserMessage(content=await fetch_content(message.content))
        elif isinstance(message, ToolResultMessage) and any(map(_wanted, message.parts)):
            message = dataclasses.replace(message, parts=await fetch_content(message.parts))
        out.append(message)
    return out


async def _get(url: str, shown: str, bounds: UrlFetch, part: ContentPart) -> bytes:
    timeout = httpx.Timeout(bounds.timeout)
    async with httpx.AsyncClient(timeout=timeout, trust_env=False) as client:
        for _ in range(bounds.max_redirects + 1):
            await _check_target(url, shown, bounds)
            headers = {"accept": part.media_type}
            async with client.stream("GET", url, headers=headers) as response:
                _check_peer(response, shown, bounds)
                if response.is_redirect and "location" in response.headers:
                    url = urljoin(url, response.headers["location"])
                    continue
                if response.status_code != 200:
                    raise ContentFetchFailed(shown, f"HTTP {response.status_code}")
                _check_type(response, shown, part)
                return await _body(response, shown, bounds.max_bytes)
    raise ContentFetchFailed(shown, f"more than {bounds.max_redirects} redirects")


async def _check_target(url: str, shown: str, bounds: UrlFetch) -> None:
    """The scheme, and every address the host resolves to."""
    split = urlsplit(url)
    schemes = ("https", "http") if bounds.allow_http else ("https",)
    if split.scheme not in schemes:
        only = " or ".join(schemes)
        raise ContentFetchFailed(shown, f"only {only} URLs are fetched (UrlFetch allow_http)")
    host = split.hostname
    if not host:
        raise ContentFetchFailed(shown, "the URL has no host")
    if bounds.allow_private:
        return
    port = split.port or (443 if split.scheme == "https" else 80)
    try:
        found = await anyio.getaddrinfo(host, port)
    except OSError as exc:
        raise ContentFetchFailed(shown, f"the host does not resolve ({exc.strerror})") from None
    for *_, address in found:
        _check_address(str(address[0]), shown)


def _check_address(text: str, shown: str) -> None:
    address = ipaddress.ip_address(text.split("%", 1)[0])
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if not address.is_global or address.is_multicast:
        raise ContentFetchFailed(
            shown,
            f"the host is at {address}, a loopback, private or reserved address "
            "(UrlFetch allow_private)",
        )


def _check_peer(response: httpx.Response, shown: str, bounds: UrlFetch) -> None:
    """The address actually connected to (a name may resolve anew)."""
    if bounds.allow_private:
        return
    stream = response.extensions.get("network_stream")
    peer = stream.get_extra_info("server_addr") if stream is not None else None
    if not peer:
        raise ContentFetchFailed(shown, "the address connected to is not known")
    _check_address(str(peer[0]), shown)


def _check_type(response: httpx.Response, shown: str, part: ContentPart) -> None:
    served = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    try:
        same = type(part)(media_type=served, data=b"").media_type == part.media_type
    except ContentError:
        same = False
    if not same:
        raise ContentFetchFailed(
            shown, f"the server sent {served or 'no media type'}, not {part.media_type}"
        )


async def _body(response: httpx.Response, shown: str, cap: int) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise ContentFetchFailed(shown, f"the body is {int(declared):,} bytes, over {cap:,}")
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > cap:
            raise ContentFetchFailed(shown, f"the body is over {cap:,} bytes")
    return bytes(body)
