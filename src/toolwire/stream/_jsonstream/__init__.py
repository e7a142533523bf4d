"""Incremental JSON for streamed tool arguments.

Providers stream a tool call's arguments as a JSON text cut into fragments of
a few characters. Two readers consume those fragments, each exactly once:

* :class:`CompletionScanner` (``_scanner``) tells, cheaply on every fragment,
  whether the top-level object or array has just closed;
* :class:`PartialJSONParser` (``_parser``, its state and the placing of
  values in ``_building``) builds the value as it arrives,
  so a UI can show the arguments while they grow; :class:`LazyPartial`
  (``_lazy``) runs one over a call's fragments only when a partial value is
  read.

``_text`` holds what they share: the parser's states, the JSON lexicon and
the decoding of string escapes.
"""

from __future__ import annotations

from toolwire.stream._jsonstream._lazy import LazyPartial
from toolwire.stream._jsonstream._parser import PartialJSONParser
from toolwire.stream._jsonstream._scanner import CompletionScanner, ScanState
from toolwire.stream._jsonstream._text import PartialJSONError

__all__ = [
    "CompletionScanner",
    "LazyPartial",
    "PartialJSONError",
    "PartialJSONParser",
    "ScanState",
]
