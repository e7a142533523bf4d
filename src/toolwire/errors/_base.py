"""The root of toolwire's error tree."""

from __future__ import annotations

from typing import Any

__all__ = ["ToolwireError"]


class ToolwireError(Exception):
    """Base class of every error toolwire raises."""

    #: A short machine-readable name, used in ``--json`` output and results.
    type_name = "toolwire_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description: ``{"type", "message"}`` plus subclass details."""
        return {"type": self.type_name, "message": self.message}
