"""The journal's records of what a run's tool sources did (kept apart from
:mod:`toolwire.journal._kinds`, which lists them among the kinds): a change
in a run's tool list, and a completion a tool asked of the run's model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

__all__ = ["ModelSampled", "ToolsChanged"]


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


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSampled:
    """A tool (an MCP server's, by sampling) asked the run's model for a
    completion in the middle of its call: served by the run's provider and
    counted in its usage, or refused (``error``). Its envelope names the
    call that asked."""

    kind: ClassVar[str] = "model_sampled"
    version: ClassVar[int] = 1
    source: str | None = None
    """Who asked (the MCP server's name)."""
    model: str | None = None
    text: str | None = None
    """The model's answer."""
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    cost: dict[str, Any] | None = None
    elapsed: float | None = None
    error: str | None = field(default=None, metadata={"omit": True})
    """Why nothing was answered (a usage limit, the provider's error)."""
    totals: dict[str, Any] | None = field(default=None, metadata={"omit": True})
    """The run's totals after this request (:mod:`toolwire.journal._totals`)."""
