"""URLs as they may be shown: split by their structure, never cut by a pattern.

Theory of operation: a URL is split once, by :func:`split_url`, into its
scheme, userinfo, host, path, query and fragment, and every place that shows
a URL or takes the secrets out of one (messages, logs, the journal, the
viewer, cassettes) goes through that split.

The split differs from RFC 3986 in one place, on purpose: the authority runs
to the first ``/``, and the userinfo to the *last* ``@`` before it. A
password written without percent-encoding may hold ``?`` or ``#`` (libpq
connects with ``postgresql://u:pa?ss#word@host/db`` as it is), and a parser
that ends the authority at ``?`` shows ``u:pa`` as the host and the rest as
the query: the password in two halves. Where the authority found so has no
``@`` but the URL has one further on, and the authority is no host (a ``:``
that no port follows: ``u:pa/ss@host``), all of it up to the last ``@`` is
taken as userinfo. Whatever is taken as userinfo is never shown.

Query strings are read by :func:`toolwire.http.credentials.redact_query`
(``&`` and ``;`` both separate parameters); the fragment is read the same
way, since an OAuth redirect carries ``#access_token=...``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

from toolwire.http.credentials import REDACTED, redact_query

__all__ = [
    "UrlParts",
    "authority",
    "hidden_in_text",
    "is_host",
    "redact_url",
    "split_url",
    "strip_userinfo",
    "url_secrets",
    "url_where",
]

# A host as written: a name (RFC 3986 reg-name characters) or a bracketed
# IP literal, and maybe a port; several, comma-separated, for libpq.
_ONE_HOST = r"(?:[\w.~%!$&'()*+=-]*|\[[0-9A-Za-z:.%]*\])(?::[0-9]*)?"
_HOSTS = re.compile(rf"{_ONE_HOST}(?:,{_ONE_HOST})*")
_AUTHORITY_END = re.compile(r"[/?#]")
_HIDDEN_TAIL = REDACTED + "/..."
# A URL in free text, from its "://" to a space, a quote or an angle bracket:
# the userinfo (to the last "@" before the first "/": what authority() says
# too, read here in one pass of the engine), the host and the rest.
_IN_TEXT = re.compile(
    r"(?<=[a-zA-Z0-9+.-])://(?=[^\s/?#'\"<>])(?:[^\s'\"<>/]*@)?([^\s'\"<>/?#]*)[^\s'\"<>]*"
)


@dataclass(frozen=True, slots=True)
class UrlParts:
    """A URL split into its parts, each as written (nothing decoded)."""

    scheme: str
    """Before ``://`` (``""`` for text without it)."""
    userinfo: str
    """Before the last ``@`` of the authority: ``user:password``, maybe empty."""
    host: str
    """``host``, ``host:port`` or, for libpq, ``h1:5432,h2:5433``."""
    path: str
    query: str | None
    """After ``?`` (``None`` when there is no ``?``)."""
    fragment: str | None
    """After ``#`` (``None`` when there is no ``#``)."""

    @property
    def hidden(self) -> bool:
        """True when the authority cannot be told from credentials: shown as
        ``<redacted>``."""
        return not is_host(self.host)

    def address(self) -> str:
        """``scheme://host``, no credentials."""
        return f"{self.scheme}://{REDACTED if self.hidden else self.host}"


def is_host(text: str) -> bool:
    """True when ``text`` is a host as written (``host``, ``host:port``, an
    IP literal; several, comma-separated, for libpq)."""
    return _HOSTS.fullmatch(text) is not None


def authority(url: str, body: int = 0, limit: int | None = None) -> tuple[int, int]:
    """Where the host begins and ends in the URL ``url[:limit]`` whose
    authority begins at ``body`` (just after its ``://``): its userinfo, if
    any, is ``url[body : start - 1]`` (see the module's docstring). Reads no
    further than ``limit``, for a URL inside a longer text."""
    limit = len(url) if limit is None else limit
    slash = url.find("/", body, limit)
    if slash < 0:
        slash = limit
    at = url.rfind("@", body, slash)
    if at < 0:
        stop = _AUTHORITY_END.search(url, body, limit)
        end = stop.start() if stop is not None else limit
        later = url.rfind("@", end, limit)
        if later >= 0 and ":" in url[body:end] and not is_host(url[body:end]):
            at = later
    start = at + 1 if at >= 0 else body
    stop = _AUTHORITY_END.search(url, start, limit)
    return start, stop.start() if stop is not None else limit


def hidden_in_text(text: str) -> list[tuple[int, int, str]]:
    """What must not be shown of the URLs of free text, in order:
    ``(start, end, replacement)`` for each URL's userinfo (removed), and for
    all after its host (``/...``), its host included when it cannot be told
    from a credential (``<redacted>/...``). Each URL is split as
    :func:`authority` splits one; one pass of the engine finds them all, so
    the cost is linear in the text. Any run of scheme characters before
    ``://`` makes a URL here: a digit for a scheme hides credentials all the
    same."""
    found: list[tuple[int, int, str]] = []
    hosts = _HOSTS.fullmatch
    for url in _IN_TEXT.finditer(text):
        body = url.start() + 3
        end = url.end()
        host, host_end = url.span(1)
        if host == body and text.find("@", host_end, end) >= 0:
            host, host_end = authority(text, body, end)  # maybe "u:pa/ss@host"
        if host > body:
            found.append((body, host, ""))
        if hosts(text, host, host_end) is None:
            found.append((host, end, _HIDDEN_TAIL))
        else:
            found.append((host_end, end, "/..."))
    return found


def split_url(url: str) -> UrlParts:
    """``url`` split into its parts (see the module's docstring for where the
    userinfo ends). Text without ``://`` is all path."""
    body = url.find("://") + 3
    if body < 3:
        return UrlParts("", "", "", *_tail(url))
    start, end = authority(url, body)
    userinfo = url[body : start - 1] if start > body else ""
    return UrlParts(url[: body - 3], userinfo, url[start:end], *_tail(url[end:]))


def _tail(text: str) -> tuple[str, str | None, str | None]:
    """(path, query, fragment) of what follows the authority."""
    text, hash_, fragment = text.partition("#")
    path, mark, query = text.partition("?")
    return path, query if mark else None, fragment if hash_ else None


def _userinfo_secrets(userinfo: str, *, bare_user: bool = True) -> list[str]:
    """The secrets of ``user:password`` (the user too, when no password
    follows it and ``bare_user``: ``https://TOKEN@host``), as written and
    decoded."""
    user, _, password = userinfo.partition(":")
    if not password and not (bare_user and user):
        return []
    found = [userinfo, unquote(userinfo), password, unquote(password)]
    if not password:
        found += [user, unquote(user)]
    return list(dict.fromkeys(s for s in found if s))


def url_secrets(url: str, *, bare_user: bool = True) -> list[str]:
    """The secrets ``url`` holds: its userinfo's, and the values of its
    credential parameters (query and fragment), as written and decoded.

    Args:
        url: the URL.
        bare_user: a user without a password is a secret (a token given as
            the user: ``https://TOKEN@host``); not so for a database role
            (``postgresql://postgres@host/db``).
    """
    parts = split_url(url)
    found = _userinfo_secrets(parts.userinfo, bare_user=bare_user)
    for part in (parts.query, parts.fragment):
        if part:
            found += redact_query(part)[1]
    return list(dict.fromkeys(found))


def strip_userinfo(url: str) -> tuple[str, list[str]]:
    """``url`` without ``user:password@``, and the secrets it held."""
    parts = split_url(url)
    if not parts.userinfo and "://@" not in url:
        return url, []
    bare = f"{parts.scheme}://{parts.host}" + _rest(parts.path, parts.query, parts.fragment)
    return bare, _userinfo_secrets(parts.userinfo)


def _rest(path: str, query: str | None, fragment: str | None) -> str:
    text = path
    if query is not None:
        text += "?" + query
    if fragment is not None:
        text += "#" + fragment
    return text


def redact_url(url: str, known: tuple[str, ...] = ()) -> str:
    """``url`` as it may be shown: no userinfo, the values of credential
    parameters (query and fragment) replaced, and the ``known`` secrets."""
    parts = split_url(url)
    secrets = (*_userinfo_secrets(parts.userinfo), *known)
    query = None if parts.query is None else redact_query(parts.query, secrets)[0]
    fragment = None if parts.fragment is None else redact_query(parts.fragment, secrets)[0]
    return (parts.address() if parts.scheme else "") + _rest(parts.path, query, fragment)


def url_where(url: str) -> str:
    """Where ``url`` points, and nothing else: ``postgresql://host/db``,
    without userinfo, query or fragment."""
    parts = split_url(url)
    return parts.address() + parts.path if parts.scheme else parts.path
