"""Redaction: what must never reach a model, a log or a journal.

:func:`scrub` cleans free text (an exception message) of anything shaped like
a credential, of file paths and of URLs' paths and queries, because such text
goes back to the model. :func:`traceback_text` keeps a failure's traceback for
the user's own records (the journal), cleaned of credentials and bounded.
"""

from __future__ import annotations

import re
import traceback

__all__ = ["TRACEBACK_LIMIT", "describe_exception", "redact", "scrub", "traceback_text"]

TRACEBACK_LIMIT = 8_000
"""The most characters of a traceback kept (its end: where it was raised)."""

# A scheme is at most 32 characters: each candidate is read a bounded distance
# (unbounded, "a.a.a.a..." made every letter read to the end of the text).
_URL = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]{0,31}://[^\s/?#'\"<>]+)[^\s'\"<>]*")
_SECRETS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\b(?:ghp|gho|ghs|xox[abprs])[-_][A-Za-z0-9_\-]{8,}"),
    re.compile(r"\beyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*"),  # JWT
    re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=\-]{6,}"),
    re.compile(
        r"(?i)\b(api[_-]?key|apikey|access[_-]?token|secret|password|passwd|pwd|token|"
        r"authorization|auth)(\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s,;&]+)"
    ),
    re.compile(r"\b[0-9a-fA-F]{32,}\b"),
    # Long base64-like runs that mix letters and digits (plain long words stay).
    re.compile(
        r"(?<![A-Za-z0-9+/_\-])(?=[A-Za-z0-9+/_\-]*\d)(?=[A-Za-z0-9+/_\-]*[A-Za-z])"
        r"[A-Za-z0-9+/_\-]{32,}={0,2}"
    ),
)
_POSIX_PATH = re.compile(r"(?<![\w:/.~-])(?:~|\.{1,2})?(?:/[\w.\-@+]+){2,}/?")
_WINDOWS_PATH = re.compile(r"\b[A-Za-z]:\\[^\s'\"<>]*")


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
    text = _redact(text)
    if not keep_paths:
        text = _WINDOWS_PATH.sub("<path>", text)
        text = _POSIX_PATH.sub("<path>", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def redact(text: str) -> str:
    """``text`` cleaned of credentials as :func:`scrub` cleans it (URLs cut to
    their host), its layout, paths and length kept: for showing a recorded
    value to its user."""
    return _redact(text)


def _redact(text: str) -> str:
    """``text`` with URLs cut to their host and credential-shaped runs redacted."""
    text = _URL.sub(_url_host, text)
    for pattern in _SECRETS:
        if pattern.groups >= 3:
            text = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}<redacted>", text)
        elif pattern.groups == 1:
            text = pattern.sub(lambda m: f"{m.group(1)} <redacted>", text)
        else:
            text = pattern.sub("<redacted>", text)
    return text


def _url_host(match: re.Match[str]) -> str:
    """A URL cut to its scheme and host, without ``user:password@``."""
    scheme, _, netloc = match.group(1).partition("://")
    return f"{scheme}://{netloc.rpartition('@')[2]}/..."


def traceback_text(exc: BaseException, *, limit: int = TRACEBACK_LIMIT) -> str:
    """``exc``'s traceback (its causes included), for the user's own records.

    Each line is cleaned as :func:`scrub` cleans a message, file paths and
    line breaks kept (they are what a traceback is for). A traceback longer
    than ``limit`` characters keeps its end, where the error was raised.
    """
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = "\n".join(_redact_line(line) for line in "".join(lines).rstrip("\n").split("\n"))
    if len(text) <= limit:
        return text
    return f"...({len(text) - limit} characters cut)\n" + text[len(text) - limit :]


_FRAME = re.compile(r'(\s*File ")([^"]*)(".*)')


def _redact_line(line: str) -> str:
    """A traceback line redacted, the path of a frame's file kept as it is (a
    path such as ``/home/user2/project_v1/...`` would look like a credential)."""
    frame = _FRAME.fullmatch(line)
    if frame is None:
        return _redact(line)
    return frame.group(1) + frame.group(2) + _redact(frame.group(3))


def describe_exception(exc: BaseException) -> str:
    message = scrub(str(exc))
    name = type(exc).__name__
    return f"{name}: {message}" if message else name
