"""Shared test helpers: the conformance corpus of recorded provider streams."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).parent / "fixtures" / "conformance"


@dataclass(frozen=True)
class Trace:
    """One recorded stream and its sidecar's expectations."""

    name: str
    body: bytes
    api: str
    expected: dict[str, Any]

    @property
    def decoder_api(self) -> str:
        return "cohere-v2" if self.api == "other" else self.api


def load_traces() -> list[Trace]:
    traces = []
    for sidecar in sorted(CORPUS.glob("*/*.json")):
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
        body = sidecar.with_suffix(".sse").read_bytes()
        name = f"{sidecar.parent.name}/{sidecar.stem}"
        traces.append(Trace(name, body, meta["api"], meta["expected"]))
    return traces


TRACES = load_traces()
