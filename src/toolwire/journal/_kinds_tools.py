"""The journal's record of a change in a run's tool list (kept apart from
:mod:`toolwire.journal._kinds`, which lists it among the kinds)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

__all__ = ["ToolsChanged"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolsChanged:
    """A source of the run's tools (an MCP server) announced that its tool
    list changed, and the toolbox took the new list in before this turn's
    request: the tools it added and removed."""

    kind: ClassVar[str] = "tools_changed"
    version: ClassVar[int] = 1
    source: str | None = None
    """The source's name (the MCP server's)."""
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
