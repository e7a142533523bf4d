"""A toy dialect in one file, decode-only: its codec and its registration.

``toy-ndjson`` is one JSON object per line, each with ``"toy": 1``::

    {"toy": 1, "model": "toy-1", "say": "Hello "}
    {"toy": 1, "call": {"id": "t1", "name": "get_weather", "args": {"city": "Paris"}}}
    {"toy": 1, "end": "calls", "usage": {"in": 5, "out": 7}}

Importing this module registers it (:func:`register`), as a plugin's module
would: nothing else in toolwire names it. It fills only what decoding needs
(a codec, finish reasons, a sniff rule, a request path), so the emulation
server does not serve it and no provider speaks it.
"""

from __future__ import annotations

import json
from typing import Any, Final

from toolwire.errors import RemoteProtocolError
from toolwire.stream.codecs import WireDialect, register, registered
from toolwire.stream.framing import FramingKind
from toolwire.stream.parts import (
    CallPart,
    FinishPart,
    MetaPart,
    Part,
    StreamEndPart,
    TextPart,
    UsagePart,
)
from toolwire.types import FinishReason, Usage

NAME: Final = "toy-ndjson"
PATH: Final = "/toy/v1/talk"

BODY: Final = (
    b'{"toy": 1, "model": "toy-1", "say": "Hello "}\n'
    b'{"toy": 1, "say": "from the toy."}\n'
    b'{"toy": 1, "call": {"id": "t1", "name": "get_weather", "args": {"city": "Paris"}}}\n'
    b'{"toy": 1, "end": "calls", "usage": {"in": 5, "out": 7}}\n'
)
"""A whole toy stream: two texts, one tool call, its end with usage."""

FINISH_REASONS: Final[dict[str, FinishReason]] = {"done": "stop", "calls": "tool_calls"}


class ToyCodec:
    """Reads toy lines into parts."""

    dialect = NAME
    framings: frozenset[FramingKind] = frozenset({"ndjson"})

    def __init__(self) -> None:
        self.quirks: set[str] = set()

    def decode(self, event: str, data: str) -> list[Part]:
        try:
            line: Any = json.loads(data)
        except ValueError as exc:
            raise RemoteProtocolError(f"{NAME}: not JSON: {exc}") from None
        if not isinstance(line, dict) or line.get("toy") != 1:
            raise RemoteProtocolError(f"{NAME}: a line without toy: 1")
        parts: list[Part] = []
        if "model" in line:
            parts.append(MetaPart(model=str(line["model"])))
        if "say" in line:
            parts.append(TextPart(str(line["say"])))
        if "call" in line:
            call = line["call"]
            parts.append(
                CallPart(id=call["id"], name=call["name"], args_value=call["args"], new=True)
            )
            parts.append(CallPart(id=call["id"], done=True))
        if "end" in line:
            counts = line.get("usage", {})
            usage = Usage(
                input_tokens=counts.get("in"),
                output_tokens=counts.get("out"),
                total_tokens=counts.get("in", 0) + counts.get("out", 0),
            )
            parts.append(UsagePart(usage))
            raw = str(line["end"])
            parts.append(FinishPart(FINISH_REASONS.get(raw, "other"), raw))
            parts.append(StreamEndPart())
        return parts


DIALECT: Final = WireDialect(
    name=NAME,
    codec=ToyCodec,
    finish_reasons=FINISH_REASONS,
    sniff_shape=lambda obj: obj.get("toy") == 1,
    paths=(PATH,),
)
"""The toy dialect: decode-only (no routes, encoder, provider)."""

if NAME not in {d.name for d in registered()}:
    register(DIALECT)
