"""A tracer provider of its own per test, exporting to memory (the global
provider is never set)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class Spans:
    """The finished spans of one test, with lookups by name and parent."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    @property
    def all(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.all if s.name.startswith(prefix)]

    def one(self, prefix: str) -> ReadableSpan:
        (span,) = self.named(prefix)
        return span

    def children(self, parent: ReadableSpan) -> list[ReadableSpan]:
        assert parent.context is not None
        own = parent.context.span_id
        return [s for s in self.all if s.parent is not None and s.parent.span_id == own]


@pytest.fixture
def spans() -> Iterator[Spans]:
    collected = Spans()
    yield collected
    collected.provider.shutdown()
