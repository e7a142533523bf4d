"""A run's page: its header, then a timeline of turns (each request with the
messages it added, the streamed answer, the tool calls with their
arguments, attempts, outcomes and tracebacks, approvals, failures and
resumptions), a waterfall of model and tool time, the usage and cost of
each turn, and a JSON diff of the
messages each turn sent compared with the turn before.

A run in progress follows the journal live: the page's script opens the
event stream (:mod:`toolwire.view._live`) after the last event it shows and
appends each new block to its turn.
"""

from __future__ import annotations

from urllib.parse import quote

from toolwire.journal import JournalEvent, ModelFailed, ModelRequest, ModelResponse, RunLog
from toolwire.view._conversation import conversation
from toolwire.view._diff import diff_html
from toolwire.view._events import render_event
from toolwire.view._html import (
    duration,
    error_line,
    href,
    ident,
    layout,
    money,
    text,
    when,
)
from toolwire.view._pending import continuing, pending_section
from toolwire.view._replay import Replays, replay_for, scrubber
from toolwire.view._waterfall import waterfall

__all__ = ["TURNS_PER_PAGE", "run_page"]

TURNS_PER_PAGE = 100
"""The most turns one page of a run's timeline shows (a link per page)."""


def _usage(events: list[JournalEvent]) -> str:
    total: dict[str, int] = {}
    cost = 0.0
    priced = False
    for event in events:
        record = event.record
        if not isinstance(record, (ModelResponse, ModelFailed)):
            continue
        for key, count in (record.usage or {}).items():
            if isinstance(count, int) and not isinstance(count, bool):
                total[key] = total.get(key, 0) + count
        shown = record.cost
        if isinstance(shown, dict) and shown.get("total") is not None:
            try:
                cost += float(shown["total"])
                priced = True
            except (TypeError, ValueError):
                pass
    parts = [f"{text(k)} {v}" for k, v in total.items() if v]
    if priced:
        parts.append(f"cost {money({'total': cost})}")
    return " · ".join(parts)


def _messages_sent(log: RunLog, events: list[JournalEvent], before: int) -> tuple[str, int]:
    """The diff of the messages this turn's last request sent against the
    ``before`` messages the turn before sent; and how many it sent."""
    requests = [e.record for e in events if isinstance(e.record, ModelRequest)]
    if not requests:
        return "", before
    count = requests[-1].messages
    if count is None or count < 0:
        return "", before
    if not log.messages:
        return "", count
    # Both are the start of the same conversation: only their tails differ
    # (diffing the whole of each turn after turn would be quadratic).
    same = min(before, count)
    diff = diff_html(list(log.messages[same:before]), list(log.messages[same:count]), first=same)
    return (
        f"<details class=messages><summary>messages sent: {count} "
        f"({max(count - before, 0)} more than the turn before): JSON diff</summary>{diff}"
        f"</details>",
        count,
    )


def _block(event: JournalEvent, start: float, replays: Replays) -> str:
    """The event's block, and the replay of a call's arguments after its intent."""
    block = render_event(event, start)
    replay = replay_for(event, replays)
    return block if replay is None else block + scrubber(replay)


def _turn_section(
    log: RunLog,
    number: int,
    events: list[JournalEvent],
    sent: int,
    replays: Replays,
) -> tuple[str, int]:
    start = log.events[0].at if log.events else log.run.started_at
    usage = _usage(events)
    diff, sent = _messages_sent(log, events, sent)
    blocks = "".join(_block(e, start, replays) for e in events)
    head = f"<h3>turn {number}</h3>" + (f"<div class=meta>usage: {usage}</div>" if usage else "")
    return f'<section class=turn data-turn="{number}">{head}{diff}{blocks}</section>', sent


def _turn_pages(log: RunLog) -> int:
    """How many pages the run's turns take."""
    turns = {event.turn for event in log.events if event.turn is not None}
    return max(1, -(-len(turns) // TURNS_PER_PAGE))


def _timeline(log: RunLog, replays: Replays, page: int) -> str:
    """The timeline of the turns page ``page`` (1-based) shows, with the
    records outside any turn that come among them."""
    start = log.events[0].at if log.events else log.run.started_at
    out: list[str] = []
    sent = 0
    pending: list[JournalEvent] = []
    current: int | None = None
    turns_seen = 0
    shown = page == 1  # whether the records met now are on this page

    def flush() -> None:
        nonlocal sent, pending
        if current is not None and pending:
            section, sent = _turn_section(log, current, pending, sent, replays)
            out.append(section)
        pending = []

    for event in log.events:
        if event.turn is not None and event.turn != current:
            flush()
            current = event.turn
            turns_seen += 1
            shown = (turns_seen - 1) // TURNS_PER_PAGE + 1 == page
        if not shown:
            sent = _sent_by(event, sent)
        elif event.turn is None:
            flush()
            current = None
            out.append(render_event(event, start))
        else:
            pending.append(event)
    flush()
    return "".join(out)


def _sent_by(event: JournalEvent, before: int) -> int:
    """How many messages were sent as of ``event`` (on a page not shown)."""
    count = event.record.messages if isinstance(event.record, ModelRequest) else None
    return count if count is not None and count >= 0 else before


def _pages_nav(log: RunLog, page: int, pages: int) -> str:
    """Links to the run's other pages of turns (nothing for a one-page run)."""
    if pages == 1:
        return ""
    base = href(f"/runs/{quote(log.run.run_id, safe='')}")
    links = []
    for number in range(1, pages + 1):
        first = (number - 1) * TURNS_PER_PAGE + 1
        label = f"turns {first}–{first + TURNS_PER_PAGE - 1}"
        if number == page:
            links.append(f"<b aria-current=page>{label}</b>")
        else:
            links.append(f'<a href="{ident(base)}?page={number}">{label}</a>')
    return f"<nav class=pages>page {page} of {pages}: {' · '.join(links)}</nav>"


def _header(log: RunLog) -> str:
    run = log.run
    took = (log.events[-1].at - log.events[0].at) if log.events else None
    facts = [
        f'<span class="status {ident(run.status)}" id=status>{ident(run.status)}</span>',
        f"model {ident(run.model)} · {ident(run.provider)} ({ident(run.dialect)})",
        f"started {when(run.started_at)}",
        f"duration {duration(took)}",
        f"turns {'-' if run.turns is None else run.turns}",
        f"tool calls {'-' if run.tool_calls is None else run.tool_calls}",
    ]
    if run.usage:
        counts = [f"{text(k)} {text(v)}" for k, v in run.usage.items() if v is not None]
        facts.append("tokens " + ", ".join(counts))
    cost = money(getattr(run, "cost", None))
    if cost != "-":
        facts.append(f"cost {cost}")
    if run.resumes:
        facts.append(f"resumed {run.resumes}×")
    parts = [f"<h2><code>{ident(run.run_id)}</code></h2><p>{' · '.join(facts)}</p>"]
    if run.error:
        parts.append(error_line(run.error))
    problems = log.problems() if run.status != "running" else []
    if problems:
        parts.append(f"<div class=error>journal problems: {text('; '.join(problems))}</div>")
    return "".join(parts)


def run_page(
    log: RunLog,
    replays: Replays | None = None,
    notes: list[str] | None = None,
    *,
    page: int | None = None,
    signing: bool = False,
) -> str:
    """The page of one run; ``replays``: the calls whose argument stream was
    recorded, by call id; ``notes``: what could not be read for them;
    ``signing``: whether the viewer signs the decisions it records.

    The timeline shows :data:`TURNS_PER_PAGE` turns: ``page`` (1-based,
    past the last: the last); by default, the first, or the last for a run
    that is running or suspended (which the page follows live: only its last
    page does)."""
    pages = _turn_pages(log)
    live = log.run.status in ("running", "suspended")
    shown = min(page, pages) if page is not None else (pages if live else 1)
    last = log.events[-1].seq if log.events else 0
    nav = _pages_nav(log, shown, pages)
    body = (
        f'<main id=run data-run="{ident(log.run.run_id)}" data-status="{ident(log.run.status)}" '
        f'data-last="{last}" data-follow="{"yes" if shown == pages else "no"}">'
        f"{_header(log)}{pending_section(log, signing=signing)}{continuing(log)}{waterfall(log)}"
        + "".join(f"<p class=error>{text(note)}</p>" for note in notes or ())
        + f"{conversation(log)}<details id=records><summary>raw records</summary>"
        f"{nav}<div id=timeline>{_timeline(log, replays or {}, shown)}</div>{nav}</details></main>"
    )
    return layout(f"run {log.run.run_id[:12]}", body)
