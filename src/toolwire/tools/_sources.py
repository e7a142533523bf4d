"""Tools whose list can change while a run goes on (an MCP server's), and
how a toolbox takes the new list in between turns.

A tool made from such a list carries its :class:`ToolSource` on its
function (``tool.function.tool_source``); :meth:`Toolbox.refresh` asks each
source of its tools whether its list changed, and swaps that source's tools
for the new ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from toolwire.tools._tool import Tool

__all__ = ["ToolSource", "ToolsChange", "source_of"]


@runtime_checkable
class ToolSource(Protocol):
    """Where some tools came from, when their list can change."""

    @property
    def name(self) -> str:
        """How the journal and errors name the source (the MCP server's name)."""
        ...

    @property
    def protocol(self) -> str | None:
        """The protocol spoken with the source, as agreed with it (an MCP
        server's negotiated version), recorded with each run; ``None``: none."""
        ...

    @property
    def changed(self) -> bool:
        """True once the source announced that its list changed, until reloaded."""
        ...

    async def reload(self) -> list[Tool]:
        """The source's tools as they are now (clears :attr:`changed`)."""
        ...


@dataclass(frozen=True, slots=True)
class ToolsChange:
    """What a refresh changed in a toolbox: the tools of ``source`` added and removed."""

    source: str
    added: tuple[str, ...]
    removed: tuple[str, ...]


def source_of(t: Tool) -> ToolSource | None:
    """The source a tool came from, if its list can change."""
    found: Any = getattr(t.function, "tool_source", None)
    return found if isinstance(found, ToolSource) else None
