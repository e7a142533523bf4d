"""A JSON diff: what changed from one value to another, path by path.

Simple on purpose: dicts are compared key by key, lists position by
position, anything else by equality; each difference is one
``(op, path, value)`` with ``op`` ``+`` (added), ``-`` (removed) or ``~``
(changed: the new value). The run page uses it for the messages a turn sends
compared with the turn before.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolwire.view._html import text, value

__all__ = ["diff_html", "json_diff"]

_MOST = 200
"""The most differences shown for one pair of values."""


def json_diff(
    old: Any, new: Any, path: str = "$", *, first: int = 0
) -> Iterator[tuple[str, str, Any]]:
    """The differences from ``old`` to ``new``, in document order; ``first``:
    the index the two lists' items start at (they are the tails of lists
    whose first ``first`` items are the same)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                yield "-", f"{path}.{key}", old[key]
        for key in new:
            if key not in old:
                yield "+", f"{path}.{key}", new[key]
            else:
                yield from json_diff(old[key], new[key], f"{path}.{key}")
    elif isinstance(old, list) and isinstance(new, list):
        for index in range(max(len(old), len(new))):
            where = f"{path}[{first + index}]"
            if index >= len(new):
                yield "-", where, old[index]
            elif index >= len(old):
                yield "+", where, new[index]
            else:
                yield from json_diff(old[index], new[index], where)
    elif old != new or type(old) is not type(new):
        yield "~", path, new


def diff_html(old: Any, new: Any, *, first: int = 0) -> str:
    """The differences as a list (``+`` green, ``-`` red, ``~`` changed);
    ``first``: as for :func:`json_diff`."""
    items: list[str] = []
    for count, (op, path, changed) in enumerate(json_diff(old, new, first=first)):
        if count == _MOST:
            items.append("<li>… more differences not shown</li>")
            break
        style = {"+": "diff-add", "-": "diff-del"}.get(op, "")
        items.append(
            f'<li class="{style}"><code>{text(op)} {text(path)}</code>'
            f"{value(changed, label=path)}</li>"
        )
    if not items:
        return "<p class=meta>no change</p>"
    return f"<ul class=diff>{''.join(items)}</ul>"
