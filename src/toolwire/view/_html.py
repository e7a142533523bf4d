"""HTML for the viewer's pages: every value escaped and cleaned of secrets.

Theory of operation: pages are plain strings built by the functions of this
package. A value from the journal reaches a page only through :func:`text`
(or :func:`value`, which calls it): it is cleaned of anything shaped like a
credential (the tool layer's redaction, on top of the journal's own) and
then HTML-escaped, quotes included, so a tool result holding ``<script>``
shows as text. What is not escaped is this package's own markup. Long
values fold into ``<details>``.
"""

from __future__ import annotations

import html
import json
from datetime import datetime, timezone
from typing import Any

from toolwire.tools.redaction import redact

__all__ = ["FOLD_AT", "duration", "error_line", "ident", "layout", "money", "text", "value", "when"]

FOLD_AT = 240
"""Values longer than this many characters are folded (``<details>``)."""


def text(raw: Any) -> str:
    """``raw`` as text, cleaned of secrets and HTML-escaped."""
    return html.escape(redact(raw if isinstance(raw, str) else str(raw)), quote=True)


def ident(raw: Any) -> str:
    """An identifier toolwire made (a run or call id, a status, a model name),
    HTML-escaped: a run id is 32 hex digits, which redaction would hide."""
    return html.escape(raw if isinstance(raw, str) else str(raw), quote=True)


def _json(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    return json.dumps(raw, ensure_ascii=False, indent=2, sort_keys=False, default=str)


def value(raw: Any, *, label: str = "") -> str:
    """A recorded value in a ``<pre>``, folded when long (``label`` names the fold)."""
    shown = _json(raw)
    body = f"<pre>{text(shown)}</pre>"
    if len(shown) <= FOLD_AT:
        return body
    first = " ".join(shown.split())[:80]
    what = text(label) + " · " if label else ""
    return (
        f"<details><summary>{what}{len(shown):,} characters: "
        f"<code>{text(first)}…</code></summary>{body}</details>"
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
        return f"${float(cost['total']):.4f}"
    except (TypeError, ValueError):
        return text(cost["total"])


def layout(title: str, body: str) -> str:
    """A whole page: ``title`` is escaped, ``body`` is markup. Its style and
    script are files of the viewer (the page runs no inline script)."""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        '<meta name=referrer content="no-referrer">'
        f"<title>{text(title)} · toolwire view</title>"
        '<link rel=stylesheet href="/static/view.css"></head><body>'
        '<header><a href="/">toolwire view</a><span>' + text(title) + "</span></header>"
        f'{body}<script src="/static/view.js"></script></body></html>'
    )
