"""HTML for the viewer's pages: every value escaped and cleaned of secrets.

Theory of operation: pages are plain strings built by the functions of this
package. A value from the journal reaches a page only through :func:`text`
(or :func:`value`, which calls it): it is cleaned of anything shaped like a
credential (the tool layer's redaction, on top of the journal's own), made
safe to send (:func:`toolwire.view._visible.clean`: a lone surrogate or a
NUL shows as ``⟨U+XXXX⟩``) and then HTML-escaped, quotes included, so a tool
result holding ``<script>`` shows as text. What is not escaped is this
package's own markup. Long values fold into ``<details>``, and are cut at
:data:`CUT_AT` characters (the page says how much was cut).

Every link a page holds goes through :func:`href`: the viewer serves under
a secret root (:mod:`toolwire.view._access`), which :data:`ROOT` holds for
the request being answered.
"""

from __future__ import annotations

import html
import json
import math
from contextvars import ContextVar
from datetime import datetime, timezone
from typing import Any

from toolwire.tools.redaction import redact
from toolwire.view._visible import clean, reveal

__all__ = [
    "CUT_AT",
    "FOLD_AT",
    "ROOT",
    "duration",
    "error_line",
    "href",
    "ident",
    "layout",
    "money",
    "text",
    "value",
    "when",
]

FOLD_AT = 240
"""Values longer than this many characters are folded (``<details>``)."""
CUT_AT = 65_536
"""Values longer than this many characters are cut there (the page says so)."""
ROOT: ContextVar[str] = ContextVar("toolwire_view_root", default="")
"""The secret root the viewer answering this request serves under (``""``:
none, as when a page is rendered outside a viewer)."""


def href(path: str) -> str:
    """The link to the viewer's ``path`` (``/runs/...``), under its root (not escaped)."""
    return ROOT.get() + path


def text(raw: Any) -> str:
    """``raw`` as text, cleaned of secrets, made safe to send, HTML-escaped,
    and cut at :data:`CUT_AT` characters (saying so)."""
    shown, cut = _bounded(raw if isinstance(raw, str) else str(raw))
    return _escape(shown) + (f"… ({cut:,} more characters cut)" if cut else "")


_MARGIN = 4096
"""Characters past :data:`CUT_AT` that redaction still reads, so that a
secret across the cut is hidden whole."""


def _bounded(raw: str) -> tuple[str, int]:
    """``raw`` cleaned of secrets and cut at :data:`CUT_AT`; how many
    characters were cut. Redaction reads no more than is shown (and a margin):
    a page's work is bounded whatever the journal holds."""
    if len(raw) <= CUT_AT:
        return redact(raw), 0
    return redact(raw[: CUT_AT + _MARGIN])[:CUT_AT], len(raw) - CUT_AT


def _escape(shown: str, *, marked: bool = False) -> str:
    """Text made safe to send and HTML-escaped; ``marked``: invisible and
    bidirectional characters as marks."""
    escaped = html.escape(clean(shown), quote=True)
    return reveal(escaped) if marked else escaped


def ident(raw: Any) -> str:
    """An identifier toolwire made (a run or call id, a status, a model name),
    made safe to send and HTML-escaped: a run id is 32 hex digits, which
    redaction would hide."""
    return html.escape(clean(raw if isinstance(raw, str) else str(raw)), quote=True)


def _json(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    return json.dumps(raw, ensure_ascii=False, indent=2, sort_keys=False, default=str)


def value(raw: Any, *, label: str = "", marked: bool = False) -> str:
    """A recorded value in a ``<pre>``, folded when long (``label`` names the
    fold) and cut at :data:`CUT_AT` characters (a note says how many more the
    journal holds); ``marked``: invisible and bidirectional characters show
    as marks (:func:`toolwire.view._visible.reveal`)."""
    whole = _json(raw)
    shown, cut = _bounded(whole)
    note = (
        f"<p class=cut>cut: the first {CUT_AT:,} of {len(whole):,} characters are shown "
        f"({cut:,} more are in the journal)</p>"
        if cut
        else ""
    )
    body = f"<pre>{_escape(shown, marked=marked)}</pre>{note}"
    if len(whole) <= FOLD_AT:
        return body
    first = " ".join(shown[:1000].split())[:80]
    what = text(label) + " · " if label else ""
    return (
        f"<details><summary>{what}{len(whole):,} characters: "
        f"<code>{_escape(first, marked=marked)}…</code></summary>{body}</details>"
    )


def error_line(error: dict[str, Any], tag: str = "div") -> str:
    """A recorded ``{"type", "message"}`` error, in red."""
    kind, message = text(error.get("type", "error")), text(error.get("message", ""))
    return f"<{tag} class=error>{kind}: {message}</{tag}>"


def when(at: float | None) -> str:
    """A Unix time as UTC ISO text (the page converts it to local time)."""
    if at is None:
        return "-"
    moment = datetime.fromtimestamp(at, tz=timezone.utc)
    stamp = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return f'<time datetime="{stamp}">{moment:%Y-%m-%d %H:%M:%S} UTC</time>'


def duration(seconds: float | None) -> str:
    if seconds is None or seconds < 0:
        return "-"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.2f} s"
    return f"{seconds / 60:.1f} min"


def money(cost: Any) -> str:
    """A recorded cost (``{"total": ...}`` in US dollars), or ``-``."""
    if not isinstance(cost, dict) or cost.get("total") is None:
        return "-"
    try:
        total = float(cost["total"])
    except (TypeError, ValueError):
        return text(cost["total"])
    if total == 0 or not math.isfinite(total):
        return f"${total:.2f}"
    # Four significant digits (at least cents): $0.0001234 and $0.0001299
    # are two runs, which a fixed $0.0001 would show as one.
    places = max(2, 3 - math.floor(math.log10(abs(total))))
    return f"${total:.{places}f}"


def layout(title: str, body: str) -> str:
    """A whole page: ``title`` is escaped, ``body`` is markup. Its style and
    script are files of the viewer (the page runs no inline script)."""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        '<meta name=referrer content="no-referrer">'
        f"<title>{text(title)} · toolwire view</title>"
        f'<link rel=stylesheet href="{ident(href("/static/view.css"))}"></head><body>'
        f'<header><a href="{ident(href("/"))}">toolwire view</a><span>'
        + text(title)
        + "</span></header>"
        f'{body}<script src="{ident(href("/static/view.js"))}"></script></body></html>'
    )
