"""Request bodies as they may be recorded: credentials found by reading them.

Theory of operation: a JSON body is parsed and walked. The value of every
member whose name is a credential's (judged by its words, as header names
are: ``api_key``, ``apiKey``, ``access_token``, ``client_secret``,
``password``, ``Authorization``...; see
:func:`~toolwire.http.credentials.is_credential_name`) is replaced by
``<redacted>``, and what it held is returned as secrets, so that it is also
removed from everything else recorded of the exchange (a response that
echoes the request, a log line). Under such a member every string and
number is a secret (``"credentials": {"id": ..., "value": ...}``), but for
the schemas of a JSON Schema's ``properties`` (and ``patternProperties``,
``$defs``, ``definitions``): a tool whose parameter is named ``api_key``
describes a key, it holds none. Nothing else changes; a body without such
a member is returned byte for byte.

A form body (``application/x-www-form-urlencoded``) is read as a query
string is (:func:`~toolwire.http.credentials.redact_query`). A body that
looks like JSON but does not parse (cut short, nested past the limit) is
read token by token: a lexer that reads each string once finds the member
names, and the string or number that follows a credential's name is
replaced. Any other body is kept as it is, for the caller to remove the
secrets known from elsewhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

from toolwire.http.credentials import REDACTED, is_credential_name, redact_query
from toolwire.stream.jsonio import POSSESSIVE, check_depth

__all__ = [
    "BINARY_MIN_CHARS",
    "ScrubbedBody",
    "is_binary_text",
    "scrub_body",
    "scrub_keeping_binary",
]

_SCHEMA_MAPS: Final = frozenset({"properties", "patternProperties", "$defs", "definitions"})
"""JSON Schema keywords whose members are named by the user and hold schemas."""

# A JSON string, closed or running to the end of the body (so it always
# matches and no string is read twice), then, when it is a member's name,
# the string or the scalar that follows it.
_STRING: Final = rf'"[^"\\]*{POSSESSIVE}(?:\\.[^"\\]*{POSSESSIVE})*{POSSESSIVE}(?:"|\\?\Z)'
_TOKEN: Final = re.compile(
    rf"({_STRING})(?:[ \t\r\n]*:[ \t\r\n]*(?:({_STRING})|([^,{{}}\[\]\s\"]+)))?".encode(), re.S
)
_QUOTED_REDACTED: Final = json.dumps(REDACTED).encode()

BINARY_MIN_CHARS: Final = 256
"""A JSON string at least this long that is all base64 (or a ``data:`` URL
of it) is binary data (an image, a document, audio), not text."""
_BASE64_TEXT: Final = re.compile(r"(?:data:[\w.+-]+/[\w.+-]+;base64,)?[A-Za-z0-9+/_-]+={0,2}")


@dataclass(frozen=True, slots=True)
class ScrubbedBody:
    """A body with its credentials replaced, and what they were."""

    body: bytes
    secrets: tuple[str, ...]
    """The replaced values (as text), to remove wherever else they occur."""


def scrub_body(body: bytes, content_type: str | None = None) -> ScrubbedBody:
    """``body`` with the values of its credential members (or form fields)
    replaced, and the secrets they held (see the module's docstring)."""
    media = (content_type or "").split(";")[0].strip().lower()
    if media == "application/x-www-form-urlencoded":
        text = body.decode("latin-1")
        scrubbed, secrets = redact_query(text)
        return ScrubbedBody(scrubbed.encode("latin-1"), tuple(secrets))
    if body.lstrip()[:1] not in (b"{", b"["):
        return ScrubbedBody(body, ())
    try:
        check_depth(body)
        value = json.loads(body)
    except (ValueError, RecursionError):
        return _lexed(body)
    found: list[str] = []
    cleaned = _walk(value, found)
    if not found:
        return ScrubbedBody(body, ())
    return ScrubbedBody(_dumps(cleaned), tuple(found))


def is_binary_text(text: str) -> bool:
    """Whether a JSON string holds binary data as base64 (see :data:`BINARY_MIN_CHARS`)."""
    return len(text) >= BINARY_MIN_CHARS and _BASE64_TEXT.fullmatch(text) is not None


def scrub_keeping_binary(body: bytes, scrub: Callable[[bytes], bytes]) -> bytes:
    """``body`` with ``scrub`` (a :class:`~toolwire.http.credentials.Scrubber`'s)
    applied to its text, but not to the binary data a JSON body carries as
    base64 (:func:`is_binary_text`): a part's bytes are kept byte for byte,
    even where they happen to spell a secret (in any of the forms a secret
    takes in text, base64 included). A body ``scrub`` leaves alone is
    returned as it is; one that is not JSON is scrubbed whole."""
    scrubbed = scrub(body)
    if scrubbed == body or body.lstrip()[:1] not in (b"{", b"["):
        return scrubbed
    try:
        check_depth(body)
        value = json.loads(body)
    except (ValueError, RecursionError):
        return scrubbed

    def text(item: str) -> str:
        if is_binary_text(item):
            return item
        return scrub(item.encode("utf-8", "surrogatepass")).decode("utf-8", "surrogatepass")

    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while stack:
        parent, key, item = stack.pop()
        if isinstance(item, dict):
            copy = {text(k): v for k, v in item.items()}
            parent[key] = copy
            stack.extend((copy, k, v) for k, v in copy.items())
        elif isinstance(item, list):
            items = list(item)
            parent[key] = items
            stack.extend((items, i, v) for i, v in enumerate(items))
        elif isinstance(item, str):
            parent[key] = text(item)
    return _dumps(root[0])


def _secret_member(name: str, parent: str | None) -> bool:
    return parent not in _SCHEMA_MAPS and is_credential_name(name, member=True)


def _walk(value: Any, found: list[str]) -> Any:
    """``value`` with the scalars under credential members replaced (their
    text appended to ``found``); iterative, for any depth."""
    root: list[Any] = [value]
    # (container, key, item, the member name it is under, secret)
    stack: list[tuple[Any, Any, Any, str | None, bool]] = [(root, 0, value, None, False)]
    while stack:
        parent, key, item, name, secret = stack.pop()
        if isinstance(item, dict):
            copy: dict[str, Any] = dict(item)
            parent[key] = copy
            for k, v in item.items():
                schema = name in _SCHEMA_MAPS and isinstance(v, (dict, bool))
                hidden = secret or (not schema and _secret_member(k, name))
                stack.append((copy, k, v, k, hidden))
        elif isinstance(item, list):
            items = list(item)
            parent[key] = items
            stack.extend((items, i, v, name, secret) for i, v in enumerate(items))
        elif secret and isinstance(item, (str, int, float)) and not isinstance(item, bool):
            found.append(item if isinstance(item, str) else json.dumps(item))
            parent[key] = REDACTED
    return root[0]


def _dumps(value: Any) -> bytes:
    try:
        return json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:  # a lone surrogate: kept as its JSON escape
        return json.dumps(value).encode()


def _lexed(body: bytes) -> ScrubbedBody:
    """``body``, not JSON, with the string or scalar after each credential
    member's name replaced."""
    pieces: list[bytes] = []
    found: list[str] = []
    at = 0
    for start, end, raw in _credential_values(body):
        pieces += (body[at:start], _QUOTED_REDACTED)
        found.append(raw)
        at = end
    if not found:
        return ScrubbedBody(body, ())
    pieces.append(body[at:])
    return ScrubbedBody(b"".join(pieces), tuple(found))


def _credential_values(body: bytes) -> Iterator[tuple[int, int, str]]:
    """(start, end, text) of each value that follows a credential's name."""
    for match in _TOKEN.finditer(body):
        if match.lastindex == 1 or not is_credential_name(_text(match.group(1)), member=True):
            continue
        group = match.lastindex or 1
        raw = match.group(group)
        text = _text(raw) if group == 2 else raw.decode("utf-8", "replace")
        yield match.start(group), match.end(group), text


def _text(token: bytes) -> str:
    """A JSON string token's text (as it is written when it does not decode)."""
    try:
        text = json.loads(token)
    except (ValueError, UnicodeDecodeError):
        return token.strip(b'"').decode("utf-8", "replace")
    return text if isinstance(text, str) else ""
