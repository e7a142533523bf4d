"""What a running tool may know about its call: :class:`ToolContext`, and the
idempotency key it carries."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolContext", "idempotency_key"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """What a running tool may know about its call.

    Declare a parameter annotated ``ToolContext`` (any name, ``ctx`` by
    convention) to receive it; it never appears in the tool's schema.
    """

    call_id: str
    """The id of the tool call being run."""
    idempotency_key: str
    """A key that is the same for every attempt of this call, and again when a
    journal resumes the run: pass it to services that deduplicate writes."""
    attempt: int = 1
    """1 for the first attempt, 2 for the first retry..."""
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Whatever the caller passed as ``metadata`` to ``execute()``."""
    tool_name: str = ""
    """The name of the tool being run."""
    run_id: str | None = None
    """The run id passed to ``execute()``, if any."""


def idempotency_key(run_id: str, call_id: str) -> str:
    """The idempotency key of a call: stable for the same run and call id, so
    a resumed run hands a tool the key its first attempt had. A lone
    surrogate in a model's call id is hashed as its code point's bytes
    (``surrogatepass``): the key of every other id is unchanged."""
    digest = hashlib.sha256(f"{run_id}\x00{call_id}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"tw-{digest[:32]}"
