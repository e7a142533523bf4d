"""The incremental partial-JSON parser, for the readers above the stream.

Tool-call arguments are parsed as they stream by the parser of
:mod:`toolwire.stream._jsonstream`; a typed run's output (``OutputDelta``)
is read by the same one, through this module: :class:`LazyPartial` parses a
growing list of fragments up to a mark, each fragment once.
"""

from __future__ import annotations

from toolwire.stream._jsonstream import LazyPartial, PartialJSONParser

__all__ = ["LazyPartial", "PartialJSONParser"]
