"""Threads that start together under coverage on CPython 3.11.

CPython 3.11 guards ``sys.settrace`` with one flag shared by every thread
(cpython#98257). Under ``make test``'s coverage each new thread installs the
tracer as it starts, so two threads starting at once can trip the flag, and
the loser dies with ``RuntimeError: Cannot install a trace function while
another trace function is being installed`` before it runs a line of the
code under test. The failed call clears the flag, so installing again works:
the threads' bootstrap is given a ``sys`` whose ``settrace`` tries again.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

ATTEMPTS = 100


def settrace_retrying(
    settrace: Callable[[Any], None], func: Any, *, attempts: int = ATTEMPTS
) -> None:
    """Install ``func`` with ``settrace``, again after each reentrancy error."""
    for _ in range(attempts - 1):
        try:
            settrace(func)
            return
        except RuntimeError as error:
            if "another trace function" not in str(error):
                raise
            time.sleep(0.001)
    settrace(func)


class _RetryingSys:
    """``sys`` as ``threading`` uses it, with a ``settrace`` that retries."""

    def __getattr__(self, name: str) -> Any:
        return getattr(sys, name)

    @staticmethod
    def settrace(func: Any) -> None:
        settrace_retrying(sys.settrace, func)


def guard_thread_tracing() -> None:
    """Make thread start-up survive the 3.11 race, when a tracer is installed."""
    if sys.version_info >= (3, 12) or threading.gettrace() is None:
        return
    threading._sys = _RetryingSys()  # type: ignore[attr-defined]
