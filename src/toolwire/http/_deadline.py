"""The total deadline of a request, as ``anyio.fail_after``.

The transport keeps its deadline as a :func:`time.monotonic` time (one for
all the attempts of a request and, for a stream, its whole body); each wait
under it is an ``anyio.fail_after`` of what is left. A cancel scope of its
own in place of ``fail_after`` saved about 0.5% of an agent run's CPU: too
little to keep (``docs/benchmarks.md``).
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager, nullcontext
from typing import Any

__all__ = ["deadline_scope"]


def deadline_scope(deadline: float | None) -> AbstractContextManager[Any]:
    """A scope that raises :class:`TimeoutError` at ``deadline``, a
    :func:`time.monotonic` time (``None``: never)."""
    if deadline is None:
        return nullcontext()
    import anyio

    return anyio.fail_after(max(0.0, deadline - time.monotonic()))
