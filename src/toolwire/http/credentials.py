"""Credentials in HTTP traffic: where they travel, and removing them.

Theory of operation: a key travels in a header (``Authorization``,
``x-api-key``, ``x-goog-api-key``, Azure's ``api-key``, a gateway's own
``x-portkey-api-key``...), in the query (Gemini's ``?key=``), in a URL's
userinfo, and now and then back in a body (a gateway echoing the request, an
error quoting the header). Names are judged by their words, not by a list of
providers: a header or parameter is a credential when one of the words of its
name (split at ``-``, ``_``, ``.`` and camelCase humps) is one of
:data:`CREDENTIAL_WORDS` or ends like one (``accesstoken``, ``clientsecret``),
so ``x-goog-api-key``, ``access_token``, ``X-AccessToken``, ``X-API-Keys`` and
``Authentication`` are, and ``x-ratelimit-remaining-tokens`` is not. A query
parameter named ``code`` (an OAuth authorization code) is one too.

A known secret is also removed from every other header and parameter (a
``Referer`` quoting a URL with the key), and in its URL-encoded and base64
forms (:func:`secret_forms`: a key inside HTTP Basic credentials or any other
base64 text, at any of its three alignments), whatever the case of its
letters (a key quoted upper-cased, a percent-escape written ``%2f``). URLs
are split in :mod:`toolwire.http.urls`, request bodies read in
:mod:`toolwire.http.bodies`.

The values of such headers and parameters are the secrets; they are then
removed wherever else they occur by :class:`Scrubber`, which works on a stream
of chunks without buffering it. A value shorter than :data:`MIN_SECRET_LENGTH`
(a dummy key such as ``"x"`` that local servers accept) cannot be told apart
from ordinary text, so it is replaced where it is a credential's value and
nowhere else.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Sequence
from typing import Any, AnyStr
from urllib.parse import quote, unquote

__all__ = [
    "CREDENTIAL_WORDS",
    "LONG_SECRET_LENGTH",
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "Scrubber",
    "ascii_lower",
    "is_credential_name",
    "redact",
    "redact_headers",
    "redact_query",
    "secret_forms",
]

REDACTED = "<redacted>"
"""What a removed credential is replaced with."""

CREDENTIAL_WORDS = frozenset(
    {
        "apikey",
        "apikeys",
        "auth",
        "authentication",
        "authorization",
        "cookie",
        "credential",
        "credentials",
        "key",
        "keys",
        "password",
        "passwd",
        "secret",
        "session",
        "sig",
        "signature",
        "token",
    }
)
"""A name holding one of these words (whole, any case) carries a credential."""

MIN_SECRET_LENGTH = 8
"""Shorter values are replaced only where they are a credential's value."""

LONG_SECRET_LENGTH = 20
"""Values at least this long are replaced wherever they occur; shorter ones
(down to :data:`MIN_SECRET_LENGTH`) only where they are not part of a longer
word."""

_SPLIT = re.compile(r"[-_.]")
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_ENDINGS = ("token", "apikey", "secret", "password", "credential", "credentials")
_QUERY_WORDS = frozenset({"code"})
_PARAMETER_SEPARATOR = re.compile("([&;])")


_BODY_IGNORED = frozenset({"sig", "signature"})
"""Words that make no credential of a JSON member's name: a request body
carries the model's own signatures back (a thinking block's ``signature``,
Gemini's ``thoughtSignature``), which are provider state, not keys."""


def is_credential_name(name: str, *, query: bool = False, member: bool = False) -> bool:
    """True when a header (or, ``query``, a query parameter; ``member``, a
    JSON body's member) named ``name`` carries a credential."""
    words = _SPLIT.split(_HUMP.sub("-", name).lower())
    return any(
        (word in CREDENTIAL_WORDS and not (member and word in _BODY_IGNORED))
        or word.endswith(_ENDINGS)
        or (query and word in _QUERY_WORDS)
        for word in words
    )


def _base64_cores(secret: bytes) -> list[bytes]:
    """What ``secret`` looks like inside base64 text, at each of the three
    alignments it may have there: the characters that depend on its bytes
    alone (standard and URL-safe alphabets)."""
    cores = []
    for shift, skip in ((0, 0), (1, 2), (2, 3)):
        encoded = base64.b64encode(b"\0" * shift + secret)
        end = (8 * (shift + len(secret))) // 6
        core = encoded[skip:end]
        cores += [core, core.replace(b"+", b"-").replace(b"/", b"_")]
    return cores


def secret_forms(secrets: Iterable[str]) -> list[str]:
    """The secrets (at least :data:`MIN_SECRET_LENGTH` long) and the forms
    they take in other text: URL-encoded, ``/`` escaped as JSON may, and
    inside base64 at any alignment."""
    forms: dict[str, None] = {}
    for secret in secrets:
        if len(secret) < MIN_SECRET_LENGTH:
            continue
        raw = secret.encode("utf-8", "surrogateescape")
        forms[secret] = None
        forms[secret.replace("/", "\\/")] = None
        forms[quote(secret, safe="")] = None
        for core in _base64_cores(raw):
            if len(core) >= MIN_SECRET_LENGTH:
                forms[core.decode("ascii")] = None
    return list(forms)


def _secrets_of(value: str) -> list[str]:
    """The secret strings in a credential's value: the whole value, each word
    of it (``Bearer sk-...``), and the password of HTTP Basic credentials."""
    found = [value, *value.split()]
    scheme, _, token = value.partition(" ")
    if scheme.lower() == "basic" and token:
        try:
            decoded = base64.b64decode(token.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            decoded = ""
        if decoded:
            found += [decoded, decoded.partition(":")[2]]
    return [s for s in found if s]


def redact_headers(
    headers: Iterable[tuple[str, str]],
) -> tuple[list[tuple[str, str]], list[str]]:
    """The headers with credential values replaced, and the secrets they held."""
    kept: list[tuple[str, str]] = []
    secrets: list[str] = []
    headers = list(headers)
    for name, value in headers:
        if is_credential_name(name):
            secrets += _secrets_of(value)
            kept.append((name, REDACTED))
        else:
            kept.append((name, value))
    scrubber = Scrubber(secrets)
    if scrubber:  # a known key elsewhere: a Referer quoting it, an echo
        kept = [(name, scrubber.scrub_text(value)) for name, value in kept]
    return kept, secrets


def redact_query(query: str, known: Iterable[str] = ()) -> tuple[str, list[str]]:
    """A raw query string (or form body) with credential parameters' values
    replaced (the rest is kept byte for byte, but for the ``known`` secrets
    and those of its credential parameters, removed wherever they occur),
    and the secrets it held. Both ``&`` and ``;`` separate parameters (some
    servers take either: ``?alt=sse;key=...``)."""
    if not query:
        return "", []
    pieces = _PARAMETER_SEPARATOR.split(query)
    secrets: list[str] = []
    for i in range(0, len(pieces), 2):  # the odd items are the separators
        name, sep, value = pieces[i].partition("=")
        if sep and is_credential_name(unquote(name), query=True):
            secrets += [value, unquote(value)]
            pieces[i] = f"{name}={REDACTED}"
    text = "".join(pieces)
    scrubber = Scrubber([*secrets, *known])
    if scrubber:
        text = scrubber.scrub_text(text)
    return text, [s for s in secrets if s]


def ascii_lower(text: str) -> str:
    """``text`` with its ASCII letters in lower case and nothing else changed:
    the same length, so an index into one is an index into the other."""
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def _replace_all(data: AnyStr, low: AnyStr, secret: AnyStr, by: AnyStr) -> tuple[AnyStr, AnyStr]:
    """``data`` (and ``low``, its letters in lower case) with each ``secret``
    (in lower case) found in ``low`` replaced by ``by``."""
    kept: list[AnyStr] = []
    lows: list[AnyStr] = []
    at = 0
    found = low.find(secret)
    while found >= 0:
        kept += (data[at:found], by)
        lows += (low[at:found], by)
        at = found + len(secret)
        found = low.find(secret, at)
    kept.append(data[at:])
    lows.append(low[at:])
    return data[:0].join(kept), low[:0].join(lows)


class Scrubber:
    """Replaces secrets in a stream of byte chunks.

    A secret is found whatever the case of its ASCII letters (a key quoted
    upper-cased, a percent-escape written ``%2f``). :meth:`feed` returns
    each chunk with the secrets replaced. Only when a chunk ends with the
    beginning of a secret is that tail held back until the next chunk tells
    (so chunk boundaries move only around a possible secret); :meth:`finish`
    returns what is still held.

    Args:
        secrets: the secret strings; those shorter than
            :data:`MIN_SECRET_LENGTH` are ignored (see the module's docstring).
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        forms = {f.encode("utf-8", "surrogateescape").lower() for f in secret_forms(secrets)}
        self._secrets: Sequence[bytes] = sorted(
            (f for f in forms if len(f) >= MIN_SECRET_LENGTH), key=len, reverse=True
        )
        self._held = b""
        self._replacement = REDACTED.encode()

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def scrub(self, data: bytes) -> bytes:
        """``data`` with every secret replaced (a whole body, nothing held)."""
        if not self._secrets:
            return data
        low = data.lower()
        for secret in self._secrets:
            if secret in low:
                data, low = _replace_all(data, low, secret, self._replacement)
        return data

    def scrub_text(self, text: str) -> str:
        """:meth:`scrub` for text."""
        if not self._secrets:
            return text
        data = text.encode("utf-8", "surrogateescape")
        scrubbed = self.scrub(data)
        return text if scrubbed == data else scrubbed.decode("utf-8", "surrogateescape")

    def feed(self, chunk: bytes) -> bytes:
        """The next chunk, scrubbed, minus a tail that may begin a secret."""
        if not self._secrets:
            return chunk
        data = self.scrub(self._held + chunk) if self._held else self.scrub(chunk)
        keep = self._open_tail(data.lower())
        self._held = data[len(data) - keep :] if keep else b""
        return data[: len(data) - keep] if keep else data

    def finish(self) -> bytes:
        """What is still held back: the stream ended without completing a secret."""
        held, self._held = self._held, b""
        return held

    def _open_tail(self, low: bytes) -> int:
        """The length of the longest tail of ``low`` that begins a secret."""
        longest = 0
        for secret in self._secrets:
            start = max(0, len(low) - len(secret) + 1)
            at = low.find(secret[:1], start)
            while at != -1:
                if secret.startswith(low[at:]):
                    longest = max(longest, len(low) - at)
                    break
                at = low.find(secret[:1], at + 1)
        return longest


def redact(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` with every secret replaced by ``<redacted>`` in its strings,
    nothing else changed: a record keeps its shape (its keys are structure:
    only a long secret is replaced there) and serializes to well-formed JSON
    whatever the secrets are.

    A secret shorter than :data:`MIN_SECRET_LENGTH` is not a credential (a
    placeholder key) and is left alone; a plain lower-case word shorter than
    :data:`LONG_SECRET_LENGTH` is replaced where no letter or digit touches
    it; anything that looks like a key (a digit, a capital, a symbol), and
    anything longer, wherever it occurs. Their URL-encoded and base64 forms
    are replaced too (:func:`secret_forms`), and every form whatever the
    case of its letters (an upper-cased key is the same key).

    Args:
        value: JSON-like data (dicts, lists, strings, numbers...).
        secrets: the secret strings (empty ones are ignored).
    """
    rules = _Rules(secrets)
    return rules.apply(value) if rules else value


def _key_like(secret: str) -> bool:
    return not (secret.isalpha() and secret.islower())


class _Rules:
    def __init__(self, secrets: Iterable[str]) -> None:
        unique = sorted({s for s in secret_forms(secrets)}, key=len, reverse=True)
        # A short secret that looks like a key (a digit, an upper-case letter
        # or a symbol in it) is replaced wherever it occurs, letters touching
        # it or not; a plain word only where it stands alone.
        words = [
            s
            for s in unique
            if MIN_SECRET_LENGTH <= len(s) < LONG_SECRET_LENGTH and not _key_like(s)
        ]
        self.words = (
            re.compile(
                "|".join(rf"(?<![A-Za-z0-9]){re.escape(w)}(?![A-Za-z0-9])" for w in words),
                re.IGNORECASE,
            )
            if words
            else None
        )
        longs = [s for s in unique if len(s) >= LONG_SECRET_LENGTH or _key_like(s)]
        self.long = list(dict.fromkeys(ascii_lower(s) for s in longs))

    def __bool__(self) -> bool:
        return bool(self.words or self.long)

    def key(self, text: str) -> str:
        """``text`` without the long and key-like secrets, in any case."""
        low = ascii_lower(text)
        for secret in self.long:
            if secret in low:
                text, low = _replace_all(text, low, secret, REDACTED)
        return text

    def text(self, text: str) -> str:
        text = self.key(text)
        if self.words is not None:
            text = self.words.sub(REDACTED, text)
        return text

    def apply(self, value: Any) -> Any:
        # Iterative: a deeply nested record must not exhaust the stack.
        root: list[Any] = [value]
        stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
        while stack:
            parent, key, item = stack.pop()
            if isinstance(item, str):
                parent[key] = self.text(item)
            elif isinstance(item, dict):
                copy: dict[Any, Any] = {}
                for k, v in item.items():
                    new_key = self.key(k) if isinstance(k, str) else k
                    copy[new_key] = v
                    stack.append((copy, new_key, v))
                parent[key] = copy
            elif isinstance(item, (list, tuple)):
                items = list(item)
                parent[key] = items
                stack.extend((items, i, v) for i, v in enumerate(items))
        return root[0]
