"""Who may use a viewer: its token, its secret root, its one-time code.

Theory of operation: a browser sends a cookie to every port of a host
(cookies ignore ports), so a cookie set by a viewer on ``127.0.0.1:8765``
is also sent to any other server on ``127.0.0.1``. The viewer therefore
serves everything under a random root path (``/<secret>/``) and sets its
cookie, ``HttpOnly`` and ``SameSite=Strict``, with that path: a server on
another port receives it only for a request to that secret path, which it
cannot make the browser send without knowing it. A request outside the root
is a 404 before any other check.

The credential reaches the browser in one of two ways:

* the URL the viewer prints carries ``?token=``: answered with a redirect
  to the same page without it, and the cookie;
* ``view --open`` never puts the token on the browser's command line (which
  other local users can read): it writes a private file (mode 0600, in a
  directory of mode 0700) that sends the browser to a URL carrying a
  one-time code, and opens that file. The code is exchanged once for the
  cookie and is dead from then on.
"""

from __future__ import annotations

import html
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from pathlib import Path

__all__ = ["COOKIE", "Access", "Opener", "cookie_value", "new_opener", "new_secret"]

COOKIE = "toolwire_view"


def new_secret() -> str:
    """A random secret (a token, a root or a one-time code): 256 bits, URL-safe."""
    return secrets.token_urlsafe(32)


def _same(offered: str, expected: str) -> bool:
    """Whether ``offered`` is ``expected``, in constant time, for any text."""
    return secrets.compare_digest(
        offered.encode("utf-8", "surrogateescape"), expected.encode("utf-8", "surrogateescape")
    )


@dataclass(slots=True)
class Access:
    """One viewer's credentials: its token, its root (``/<secret>``) and the
    one-time code ``--open`` hands to the browser (used at most once)."""

    token: str = field(repr=False)
    root: str = field(repr=False)
    code: str | None = field(default=None, repr=False)

    def within(self, path: str) -> bool:
        """Whether ``path`` is under the viewer's root."""
        return path == self.root or path.startswith(self.root + "/")

    def matches(self, offered: str | None) -> bool:
        """Whether ``offered`` is the token."""
        return offered is not None and _same(offered, self.token)

    def redeem(self, offered: str) -> bool:
        """Whether ``offered`` is the one-time code, which it kills."""
        if self.code is None or not _same(offered, self.code):
            return False
        self.code = None
        return True

    @property
    def cookie_path(self) -> str:
        """The path the cookie is bound to: the root, with its slash."""
        return self.root + "/"


def cookie_value(header: str) -> str | None:
    """The viewer's cookie in a ``Cookie`` header (``None``: none, or unreadable)."""
    cookie: SimpleCookie = SimpleCookie()
    try:
        cookie.load(header)
    except CookieError:
        return None
    morsel = cookie.get(COOKIE)
    return morsel.value if morsel is not None else None


@dataclass(frozen=True, slots=True)
class Opener:
    """The private file that sends a browser to the viewer with a one-time
    code: removed once the code is used, and when the viewer stops (a file
    left behind by a viewer killed holds a code no viewer takes)."""

    path: Path

    @property
    def uri(self) -> str:
        """What the browser is given: a ``file:`` URI, which holds no secret."""
        return self.path.as_uri()

    def write(self, url: str) -> None:
        """The page that goes to ``url`` (which carries the one-time code),
        in a file only its owner can read."""
        shown = html.escape(url, quote=True)
        page = (
            "<!doctype html><meta charset=utf-8><meta name=referrer content=no-referrer>"
            f'<meta http-equiv=refresh content="0;url={shown}">'
            f'<title>toolwire view</title><a href="{shown}">open toolwire view</a>\n'
        )
        descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(page)

    def remove(self) -> None:
        shutil.rmtree(self.path.parent, ignore_errors=True)


def new_opener() -> Opener:
    """Where the opener's file goes: a fresh directory only its owner can
    enter (0700); :meth:`Opener.write` writes it."""
    return Opener(Path(tempfile.mkdtemp(prefix="toolwire-view-")) / "open.html")
