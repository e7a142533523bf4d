"""What a scenario's turn expects the request it answers to carry.

A turn's ``expect`` (``{"images": 1}``) names how many images, documents and
audio parts the request must hold, counted in the dialect's own shapes
(prompts and tool results alike: ``media_counts``). A request that carries
another number is answered with HTTP 400 naming the turn and the count, so a
test sees at once that a part was lost or sent twice.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from toolwire.errors import ScenarioError

__all__ = ["Expect", "check_expected"]


class Expect(BaseModel):
    """How many parts of each kind a request must carry (``None``: any)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    images: int | None = Field(default=None, ge=0)
    documents: int | None = Field(default=None, ge=0)
    audio: int | None = Field(default=None, ge=0)


def check_expected(expect: Expect | None, media: Mapping[str, int], turn: int) -> None:
    """Refuse a request whose parts are not what its turn expects.

    Raises:
        ScenarioError: naming the turn, the kind, and both counts.
    """
    if expect is None:
        return
    for kind in ("images", "documents", "audio"):
        wanted = getattr(expect, kind)
        found = media.get(kind, 0)
        if wanted is not None and wanted != found:
            raise ScenarioError(
                f"turn {turn} expects the request to carry {wanted} {kind}, it carries {found}"
            )
