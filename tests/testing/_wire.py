"""Plain parsing of the server's output for assertions (no toolwire decoder)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CONFORMANCE = Path(__file__).resolve().parent.parent / "fixtures" / "conformance"


def sse_events(body: bytes) -> list[tuple[str | None, str]]:
    """``(event, data)`` of each SSE event; LF or CRLF line ends."""
    text = body.decode("utf-8").replace("\r\n", "\n")
    events: list[tuple[str | None, str]] = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        event: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[len("event:") :].strip()
            elif line.startswith("data:"):
                data.append(line[len("data:") :].removeprefix(" "))
        events.append((event, "\n".join(data)))
    return events


def sse_json(body: bytes) -> list[tuple[str | None, Any]]:
    """Like :func:`sse_events`, with the data parsed (``[DONE]`` kept as text)."""
    return [(e, d if d == "[DONE]" else json.loads(d)) for e, d in sse_events(body)]


def collapse(names: list[str]) -> list[str]:
    """Runs of the same name reduced to one (fragment counts differ, shapes do not)."""
    out: list[str] = []
    for name in names:
        if not out or out[-1] != name:
            out.append(name)
    return out
