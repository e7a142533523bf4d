"""The otel tests' in-memory spans, for the cost attributes of a run's spans."""

from __future__ import annotations

from tests.otel.conftest import spans

__all__ = ["spans"]
