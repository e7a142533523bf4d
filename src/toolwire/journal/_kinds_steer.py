"""The journal's record of steering input taking effect (kept apart from
:mod:`toolwire.journal._kinds`, which lists it among the kinds)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

__all__ = ["SteerApplied"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SteerApplied:
    """Steering input took effect in this turn: its response ended
    ``steered`` and a successor continues the turn. Recorded before the
    successor's request, which carries the steer's text (``how`` ``"cut"``:
    toolwire cut the response; ``"provider"``: the provider ended it and
    holds the input itself, ``text`` ``None``)."""

    kind: ClassVar[str] = "steer"
    version: ClassVar[int] = 1
    steer_id: str | None = None
    text: str | None = None
    how: str | None = None
