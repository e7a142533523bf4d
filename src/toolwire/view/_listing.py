"""The runs list: newest first, filtered by status, searched by run id or
model, paged by position (a keyset: each page is one index range read, as
fast at the 100,000th run as at the first)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from toolwire.errors import BadQuery
from toolwire.journal import RUN_STATUSES, JournalError, JournalReader, RunSummary
from toolwire.view._chart import usage_chart
from toolwire.view._conversation import first_prompt
from toolwire.view._html import duration, error_line, href, ident, layout, money, text, when

__all__ = ["PAGE_SIZE", "BadQuery", "ListQuery", "list_page"]

PAGE_SIZE = 50
_SEARCH_LIMIT = 200


@dataclass(frozen=True, slots=True)
class ListQuery:
    """What the list shows: a status filter, a search, the page's cursor."""

    status: str = ""
    search: str = ""
    before: int | None = None

    @classmethod
    def parse(cls, params: dict[str, str]) -> ListQuery:
        """From a request's query parameters.

        Raises:
            BadQuery: an unknown status, a cursor that is not a positive
                integer, or a search longer than 200 characters.
        """
        status = params.get("status", "")
        if status and status not in RUN_STATUSES:
            raise BadQuery(f"unknown status {status!r}")
        search = params.get("q", "").strip()
        if len(search) > _SEARCH_LIMIT:
            raise BadQuery("the search is too long")
        raw = params.get("before", "")
        if raw and not (raw.isascii() and raw.isdigit() and 0 < len(raw) < 19):
            raise BadQuery("before must be a positive integer")
        return cls(status=status, search=search, before=int(raw) if raw else None)

    def link(self, **changes: Any) -> str:
        """The list's URL with ``changes`` applied."""
        params = {"status": self.status, "q": self.search, "before": self.before, **changes}
        kept = {k: v for k, v in params.items() if v not in ("", None)}
        return href("/?" + urlencode(kept) if kept else "/")


def _tokens(usage: dict[str, Any] | None) -> str:
    if not usage:
        return "-"
    counts = [usage.get(k) for k in ("input_tokens", "output_tokens")]
    return " / ".join(str(c) if isinstance(c, int) else "-" for c in counts)


def _error(summary: RunSummary) -> str:
    return error_line(summary.error, "span") if summary.error else ""


_WAITING = (
    ' <span class=waiting title="waits for an approval or an outside result">'
    "waiting for approval</span>"
)


def _row(summary: RunSummary, prompt: str = "") -> str:
    ended = summary.status != "running"
    took = summary.updated_at - summary.started_at if ended else None
    resumed = f" (resumed {summary.resumes}×)" if summary.resumes else ""
    if summary.status == "suspended":
        resumed += _WAITING
    run = ident(summary.run_id)
    cells = (
        f'<td><a href="{ident(href("/runs/"))}{run}"><code>{run[:12]}</code></a></td>',
        f"<td class=prompt>{_short(prompt)}</td><td>{when(summary.started_at)}</td>",
        f'<td class="status {ident(summary.status)}">{ident(summary.status)}{resumed}</td>',
        f"<td>{ident(summary.model)}</td><td>{ident(summary.provider)}</td>",
        f"<td class=num>{'-' if summary.turns is None else summary.turns}</td>",
        f"<td class=num>{'-' if summary.tool_calls is None else summary.tool_calls}</td>",
        f"<td class=num>{_tokens(summary.usage)}</td>",
        f"<td class=num>{money(getattr(summary, 'cost', None))}</td>",
        f"<td class=num>{duration(took)}</td><td>{_error(summary)}</td>",
    )
    return f'<tr data-run="{run}">{"".join(cells)}</tr>'


def _filters(query: ListQuery) -> str:
    options = "".join(
        f'<option value="{s}"{" selected" if s == query.status else ""}>{s}</option>'
        for s in ("", *RUN_STATUSES)
    )
    return (
        f'<form method=get action="{ident(href("/"))}" class=filters>'
        f"<label>status <select name=status>{options}</select></label> "
        f'<label>search <input name=q value="{text(query.search)}" '
        'placeholder="run id or model" maxlength=200></label> '
        "<button>show</button> "
        f'<a class=waiting href="{ident(ListQuery(status="suspended").link())}">'
        "waiting for approval</a></form>"
    )


_HEAD = (
    "<tr><th>run</th><th>prompt</th><th>started</th><th>status</th><th>model</th><th>provider</th>"
    "<th>turns</th><th>tool calls</th><th>tokens in / out</th><th>cost</th>"
    "<th>duration</th><th>error</th></tr>"
)


PROMPT_CHARS = 80
"""How many characters of a run's first user message the list shows."""


def _short(prompt: str) -> str:
    words = " ".join(prompt.split())
    if len(words) <= PROMPT_CHARS:
        return text(words)
    return f'<span title="{text(words[:1000])}">{text(words[: PROMPT_CHARS - 1])}…</span>'


def _prompt(journal: JournalReader | None, summary: RunSummary) -> str:
    """The run's first user message (``""``: none, or unreadable)."""
    if journal is None:
        return ""
    try:
        return first_prompt(journal.load_run(summary.run_id).messages)
    except JournalError:
        return ""


def list_page(journal: JournalReader | None, query: ListQuery) -> str:
    """The list's page (``journal`` is ``None`` when there is no file yet)."""
    page = (
        journal.page_runs(
            before=query.before,
            status=query.status or None,
            search=query.search or None,
            limit=PAGE_SIZE + 1,
        )
        if journal is not None
        else []
    )
    more = len(page) > PAGE_SIZE
    page = page[:PAGE_SIZE]
    rows = "".join(_row(summary, _prompt(journal, summary)) for _, summary in page)
    if not rows:
        rows = "<tr><td colspan=12 class=empty>no runs</td></tr>"
    paging = []
    if query.before is not None:
        paging.append(f'<a href="{ident(query.link(before=None))}">newest</a>')
    if more:
        paging.append(f'<a rel=next href="{ident(query.link(before=page[-1][0]))}">older →</a>')
    body = (
        f"{_filters(query)}{usage_chart([summary for _, summary in page])}"
        f"<table id=runs><thead>{_HEAD}</thead><tbody>{rows}</tbody></table>"
        f"<nav class=pages>{' · '.join(paging)}</nav>"
    )
    return layout("runs", body)
