"""A cut stream continued where it stopped, for the providers that keep
their streams (see the glossary's "continuation" in docs/architecture.md):
how one is reopened (:class:`Continuation`), and a provider's settings of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from toolwire import _compat
from toolwire.errors import UsageError
from toolwire.http import HttpRequest

__all__ = ["Continuation", "continuation_settings", "reopening"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Continuation:
    """How a provider continues one of its streams after a cut."""

    request: Callable[[str, str | None], HttpRequest]
    """The request that streams stream ``id``'s events after the event
    ``after`` (``None``: from the first), as the dialect's
    ``continuation_path`` addresses them."""
    attempts: int = 3
    """The most reopenings of one stream (every cut and every failed
    reopening counts)."""
    timeout: float = 30.0
    """Seconds for each reopening to be answered (its body then reads under
    the transport's own timeouts)."""


def reopening(
    base: str,
    headers: dict[str, str],
    path: Callable[[str, str | None], str],
    dialect: str,
) -> Callable[[str, str | None], HttpRequest]:
    """The ``GET`` that reopens a kept stream at ``base + path(id, after)``."""

    def reopen(stream_id: str, after: str | None) -> HttpRequest:
        return HttpRequest(
            method="GET",
            url=base + path(stream_id, after),
            headers=headers,
            stream=True,
            dialect=dialect,
        )

    return reopen


def continuation_settings(
    name: str,
    owner: str,
    attempts: int,
    timeout: float,
    old_attempts: int | None = None,
    old_timeout: float | None = None,
) -> tuple[int, float]:
    """A provider's ``(continuation_attempts, continuation_timeout)``, given
    them or their older keywords (``resume_attempts``, ``resume_timeout``,
    with a warning naming ``owner``, the class whose keywords they are).

    Raises:
        UsageError: ``attempts`` below 0, or ``timeout`` not positive.
    """
    if old_attempts is not None:
        _compat.renamed_argument(owner, "resume_attempts")
        attempts = old_attempts
    if old_timeout is not None:
        _compat.renamed_argument(owner, "resume_timeout")
        timeout = old_timeout
    if attempts < 0 or not timeout > 0:
        raise UsageError(
            f"{name}: continuation_attempts must be 0 or more and continuation_timeout positive"
        )
    return attempts, timeout
