"""A run read as a conversation: the user's words (with their images), then
per turn the model's answer, each tool call as a card (its arguments as
formatted JSON, the result, the time, the attempts, the approval decision in
place), the usage and cost of the turn; and the run's typed output as
formatted JSON. Everything from the journal goes through :func:`text` or
:func:`value` (escaped, cleaned of secrets). An image of a raster type shows
inline from the viewer's own route of the journal's blobs (an older
journal's inline image as a ``data:`` URL), never from an outside address,
which the page's policy would refuse anyway; any other part is a download
from that route.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

from toolwire.journal import (
    ApprovalGiven,
    BlobRef,
    JournalEvent,
    ModelFailed,
    ModelResponse,
    RunLog,
    ToolIntent,
    ToolOutcome,
)
from toolwire.tools.redaction import redact
from toolwire.view._blobs import RASTER
from toolwire.view._html import duration, href, ident, money, text, value

__all__ = ["blob_path", "conversation", "first_prompt"]

_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")


BRIEF_AT = 4000
"""Characters of a value the conversation shows (the raw records show up to
:data:`toolwire.view._html.CUT_AT`): the page's size stays bounded."""


def _brief(raw: Any, label: str) -> str:
    """``raw`` as :func:`value` shows it, cut at :data:`BRIEF_AT` characters
    (redacted before the cut, so a secret across it is hidden whole)."""
    whole = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, indent=2)
    if len(whole) <= BRIEF_AT:
        return value(raw, label=label)
    shown = redact(whole[: BRIEF_AT + 4096])[:BRIEF_AT]
    more = f"<p class=cut>{len(whole) - BRIEF_AT:,} more characters: see the raw records</p>"
    return value(shown, label=label) + more


def first_prompt(messages: tuple[dict[str, Any], ...] | list[dict[str, Any]]) -> str:
    """The text of the first user message (``""``: none)."""
    for message in messages:
        if isinstance(message, dict) and message.get("kind") == "user":
            return str(message.get("text") or "")
    return ""


def blob_path(run_id: str, sha256: str) -> str:
    """The viewer's route of a part's bytes (:meth:`_Viewer.blob`), under its root."""
    return href(f"/runs/{quote(run_id, safe='')}/blobs/{quote(sha256, safe='')}")


def _image(part: dict[str, Any], run_id: str) -> str:
    """A part: an image inline, anything else a download (from the journal's
    blobs); a part an older journal kept inline shows as a ``data:`` URL."""
    ref = BlobRef.from_dict(part)
    media, data = part.get("media_type"), part.get("data")
    name = text(part.get("name") or media or "image")
    if ref is not None:
        link = ident(blob_path(run_id, ref.sha256))
        if ref.media_type in RASTER:
            return f'<img class=part alt="{name}" src="{link}">'
        return f'<a class=part href="{link}" download>[{text(ref.describe())}]</a>'
    if media in RASTER and isinstance(data, str) and _BASE64.match(data):
        return f'<img class=part alt="{name}" src="data:{media};base64,{ident(data)}">'
    return f"<span class=part>[{text(part.get('type', 'part'))}: {name}]</span>"


def _parts(items: Any, run_id: str) -> str:
    """The image and other non-text parts of a message's ``content`` or a
    result's ``parts`` (their text shows apart)."""
    if not isinstance(items, list):
        return ""
    return "".join(
        _image(p, run_id) for p in items if isinstance(p, dict) and p.get("type") != "text"
    )


def _bubble(role: str, body: str) -> str:
    return f'<div class="msg {role}"><b class=role>{role}</b>{body}</div>'


def _user_turns(log: RunLog) -> str:
    out = []
    for message in log.messages:
        if not isinstance(message, dict) or message.get("kind") not in ("system", "user"):
            continue
        words = message.get("text") or ""
        body = (_brief(words, "message") if words else "") + _parts(
            message.get("content"), log.run.run_id
        )
        out.append(_bubble(str(message["kind"]), body))
    return "".join(out)


def _card(call_id: str, events: list[JournalEvent], run_id: str) -> str:
    """One tool call's card from its records."""
    mine = [e.record for e in events if e.call_id == call_id]
    intent = next((r for r in mine if isinstance(r, ToolIntent)), None)
    outcome = next((r.result for r in mine if isinstance(r, ToolOutcome)), None)
    facts: list[str] = []
    approval = next((r for r in mine if isinstance(r, ApprovalGiven)), None)
    if approval is not None:
        decision = text(approval.decision or "?")
        reason = approval.reason
        facts.append(
            f"<span class=approval>approval: <b>{decision}</b>"
            + (f" ({text(reason)})" if reason else "")
            + "</span>"
        )
    result = ""
    if isinstance(outcome, dict):
        facts.append(f"took {duration(outcome.get('elapsed'))}")
        facts.append(f"attempts {text(outcome.get('attempts', '-'))}")
        state = "ok" if outcome.get("ok") else f"error {text(outcome.get('error') or '')}"
        facts.append(f"<span class=outcome>{state}</span>")
        result = "<div class=label>result</div>" + _brief(outcome.get("content", ""), "result")
        result += _parts(outcome.get("parts"), run_id)
    else:
        facts.append("<span class=outcome>no result yet</span>")
    name = text((intent.name if intent is not None else None) or "?")
    arguments = (intent.arguments if intent is not None else None) or {}
    return (
        f'<article class=call data-call="{ident(call_id)}"><h4>tool call <code>{name}</code></h4>'
        f"<div class=meta>{' · '.join(facts)}</div><div class=label>arguments</div>"
        f"{_brief(arguments, 'arguments')}{result}</article>"
    )


def _turn_usage(events: list[JournalEvent]) -> str:
    parts: list[str] = []
    for event in events:
        record = event.record
        if not isinstance(record, (ModelResponse, ModelFailed)):
            continue
        usage = record.usage or {}
        counts = [f"{text(k)} {v}" for k, v in usage.items() if isinstance(v, int) and v]
        parts.append(", ".join(counts) + f" · cost {money(record.cost)}")
    return "; ".join(parts)


def _model_turn(number: int, events: list[JournalEvent], run_id: str) -> str:
    answers = [e.record.assistant or {} for e in events if isinstance(e.record, ModelResponse)]
    words = "".join(_brief(a["text"], "answer") for a in answers if a.get("text"))
    calls = [e.call_id for e in events if e.kind == "tool_intent" and e.call_id]
    cards = "".join(_card(call, events, run_id) for call in dict.fromkeys(calls))
    usage = _turn_usage(events)
    meta = f"<div class=meta>turn {number} · usage: {usage}</div>" if usage else ""
    body = meta + (words or "") + cards
    return _bubble("model", body) if body else ""


def _output(log: RunLog) -> str:
    output = log.run.output
    if output is None:
        return ""
    try:
        typed = json.loads(output)
    except ValueError:
        return ""
    if not isinstance(typed, (dict, list)):
        return ""
    return f"<div class=output><b>typed output</b>{_brief(typed, 'output')}</div>"


def conversation(log: RunLog) -> str:
    """The run as a conversation (a ``<section id=conversation>``)."""
    turns: dict[int, list[JournalEvent]] = {}
    for event in log.events:
        if event.turn is not None:
            turns.setdefault(event.turn, []).append(event)
    run_id = log.run.run_id
    body = _user_turns(log) + "".join(_model_turn(n, es, run_id) for n, es in turns.items())
    return f"<section id=conversation><h3>conversation</h3>{body}{_output(log)}</section>"
