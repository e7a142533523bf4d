"""Redaction: what must never reach a model, a log or a journal.

:func:`scrub` cleans free text (an exception message) of anything shaped like
a credential, of file paths and of URLs' paths and queries, because such text
goes back to the model. :func:`redact` does the same but keeps paths and
length, to show a recorded value to its user; :func:`traceback_text` keeps a
failure's traceback for the user's own records (the journal), cleaned of
credentials and bounded.

Theory of operation: redaction costs time linear in its text, whatever the
text. Each pattern is searched once over the original text, none over
another's output; what they find are spans, which are merged where they
overlap, and the text is rebuilt once (:func:`hidden_spans` gives the spans
themselves, for a page that masks what it hides character by character).
No pattern reads a run of the text again from each of its later starting
points: where a candidate fails, every later start inside the same run
fails the same way, and the JWT pattern consumes the run in a second branch
that matches nothing (``eyJ-eyJ-eyJ-...`` was read once per ``eyJ``, which
was quadratic). A URL is found by its ``://`` and split by
:func:`toolwire.http.urls.split_url`, never cut by a pattern: its userinfo
and everything after its host are hidden, a password holding ``?`` or ``#``
included.
"""

from __future__ import annotations

import re
import traceback
from itertools import chain, zip_longest
from operator import itemgetter, lt
from typing import TypeAlias

from toolwire.http.urls import hidden_in_text

__all__ = [
    "TRACEBACK_LIMIT",
    "describe_exception",
    "hidden_spans",
    "redact",
    "scrub",
    "traceback_text",
]

TRACEBACK_LIMIT = 8_000
"""The most characters of a traceback kept (its end: where it was raised)."""

REDACTED = "<redacted>"

_RUN = r"[A-Za-z0-9_\-]"
# Each literal head comes first and the word boundary before it is a
# lookbehind after it (the same as a leading \b): the engine then jumps from
# one occurrence of the literal to the next instead of trying every position.
_WHOLE = (
    re.compile(r"sk-(?<!\wsk-)[A-Za-z0-9_\-]{6,}"),
    re.compile(r"AKIA(?<!\wAKIA)[0-9A-Z]{16}\b"),
    re.compile(r"(?:gh[pos](?<!\wgh[pos])|xox[abprs](?<!\wxox[abprs]))[-_][A-Za-z0-9_\-]{8,}"),
    re.compile(r"\b[0-9a-fA-F]{32,}\b"),
    # Long base64-like runs that mix letters and digits (plain long words stay).
    re.compile(
        r"(?<![A-Za-z0-9+/_\-])(?=[A-Za-z0-9+/_\-]*\d)(?=[A-Za-z0-9+/_\-]*[A-Za-z])"
        r"[A-Za-z0-9+/_\-]{32,}={0,2}"
    ),
)
"""Patterns whose whole match is the secret."""
# A JWT; its second branch matches the rest of a run that holds no JWT (group
# 1 unset), so that the run's later "eyJ" are not tried one by one.
_JWT = re.compile(rf"eyJ(?<!\weyJ)(?:({_RUN}+\.{_RUN}+\.{_RUN}*)|{_RUN}*)")
_SCHEMED = re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=\-]{6,}")
_ASSIGNED = re.compile(
    r"(?i)\b(a(?:pi[_-]?key|pikey|ccess[_-]?token|uthorization|uth)|secret|p(?:assword|asswd|wd)"
    r"|token)(\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s,;&]+)"
)
_POSIX_PATH = re.compile(r"(?<![\w:/.~-])(?:~|\.{1,2})?(?:/[\w.\-@+]+){2,}/?")
_WINDOWS_PATH = re.compile(r"\b[A-Za-z]:\\[^\s'\"<>]*")


_Span: TypeAlias = tuple[int, int, str]
"""``(start, end, replacement)``: plain tuples, made by the hundred thousand."""
_START = itemgetter(0)
_END = itemgetter(1)
_REPLACEMENT = itemgetter(2)


def scrub(text: str, *, limit: int = 240, keep_paths: bool = False) -> str:
    """Remove what must never reach a model from an exception message.

    URLs keep their scheme and host (their path and query may hold tokens),
    file paths become ``<path>``, and anything shaped like a credential
    (``sk-...``, ``Bearer ...``, ``password=...``, JWTs, long hex or base64
    strings) becomes ``<redacted>``. The result is cut to ``limit`` characters;
    the work is bounded by ``limit`` too, whatever the length of ``text``.

    Args:
        text: the message.
        limit: the maximum length of the result.
        keep_paths: keep file and URL-less paths (``POST /v1/messages``): for
            the user's own records, where they help and reveal nothing.
    """
    text = " ".join(text.split())
    bound = 4 * limit + 4096
    if len(text) > bound:
        # Only the first ``limit`` characters are kept: redact a bounded
        # prefix, cut at a space so no secret is cut in two (its head might
        # no longer look like one).
        cut = text[:bound]
        space = cut.rfind(" ", bound - 512)
        text = (cut[:space] if space > 0 else cut) + " ..."
    text = redact(text)
    if not keep_paths:
        text = _WINDOWS_PATH.sub("<path>", text)
        text = _POSIX_PATH.sub("<path>", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def redact(text: str) -> str:
    """``text`` cleaned of credentials as :func:`scrub` cleans it (URLs cut to
    their host), its layout, paths and length kept: for showing a recorded
    value to its user. Linear in the length of ``text``."""
    spans = _spans(text)
    if not spans:
        return text
    starts = chain(map(_START, spans), (len(text),))
    kept = map(text.__getitem__, map(slice, chain((0,), map(_END, spans)), starts))
    return "".join(chain.from_iterable(zip_longest(kept, map(_REPLACEMENT, spans), fillvalue="")))


def hidden_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each part of ``text`` that :func:`redact`
    replaces, in order and apart."""
    return [(start, end) for start, end, _ in _spans(text)]


def _spans(text: str) -> list[_Span]:
    """What :func:`redact` replaces, merged: overlapping spans become one,
    replaced as the span covering them all says, or by ``<redacted>``."""
    found = hidden_in_text(text)
    for pattern in _WHOLE:
        found += [(*m.span(), REDACTED) for m in pattern.finditer(text)]
    found += [(*m.span(), REDACTED) for m in _JWT.finditer(text) if m.group(1)]
    found += [(m.end(1), m.end(), " " + REDACTED) for m in _SCHEMED.finditer(text)]
    found += [(*m.span(3), REDACTED) for m in _ASSIGNED.finditer(text)]
    if not found:
        return []
    found.sort(key=_START)  # stable: spans of one pattern stay in their order
    starts = map(_START, found)
    next(starts)
    if not any(map(lt, starts, map(_END, found))):
        return found  # apart already (one pattern's spans are): nothing to merge
    merged = [found[0]]
    whole = True  # merged[-1] is one span as found, not several made one
    for span in found[1:]:
        start, end, _ = merged[-1]
        if span[0] >= end:
            merged.append(span)
            whole = True
        elif span[1] > end:
            if span[0] == start and whole:  # a longer span from the same start
                merged[-1] = span
            else:  # overlapping, not inside: one span, redacted
                merged[-1] = (start, span[1], REDACTED)
                whole = False
    return merged


def traceback_text(exc: BaseException, *, limit: int = TRACEBACK_LIMIT) -> str:
    """``exc``'s traceback (its causes included), for the user's own records.

    Each line is cleaned as :func:`scrub` cleans a message, file paths and
    line breaks kept (they are what a traceback is for). A traceback longer
    than ``limit`` characters keeps its end, where the error was raised; only
    a bounded end is read (cut at a space or a line break, so that no secret
    is cut in two), whatever the size of the values it quotes.
    """
    whole = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip("\n")
    bound = limit + 4096
    dropped = 0
    if len(whole) > bound:
        start = len(whole) - bound
        gap = max(whole.rfind(" ", start, start + 512), whole.rfind("\n", start, start + 512))
        dropped = gap + 1 if gap >= 0 else start
    text = "\n".join(_redact_line(line) for line in whole[dropped:].split("\n"))
    if len(text) <= limit:
        return text
    return f"...({dropped + len(text) - limit} characters cut)\n" + text[len(text) - limit :]


_FRAME = re.compile(r'(\s*File ")([^"]*)(".*)')


def _redact_line(line: str) -> str:
    """A traceback line redacted, the path of a frame's file kept as it is (a
    path such as ``/home/user2/project_v1/...`` would look like a credential)."""
    frame = _FRAME.fullmatch(line)
    if frame is None:
        return redact(line)
    return frame.group(1) + frame.group(2) + redact(frame.group(3))


def describe_exception(exc: BaseException) -> str:
    message = scrub(str(exc))
    name = type(exc).__name__
    return f"{name}: {message}" if message else name
