"""Measuring that a path is linear: an operation count, and a CPU guard.

:func:`operations` counts the calls (Python and C) made while a function
runs: a deterministic count, the same on any machine and under any load. A
path that loops in Python over its input shows its growth there. A path
that does all its work inside one C call (a regular expression) shows none,
so :func:`cpu_guard` also bounds the CPU time the call may take, with an
interval timer of the process's own CPU time (not the wall clock): a
quadratic pattern on 1 MB runs for minutes, and is stopped after a few
seconds instead of hanging the suite. Both run with coverage paused
(:func:`untraced`): they measure how work grows with size, over lines other
tests cover, and tracing each of a megabyte's lines would only multiply
the suite's time several times over.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from itertools import pairwise
from types import FrameType
from typing import Any

SIZES = (10_000, 100_000, 1_000_000)


class TooSlow(BaseException):
    """The CPU guard went off."""


@contextmanager
def untraced() -> Iterator[None]:
    """Coverage paused in the block, when ``make test`` measures it."""
    try:
        import coverage
    except ImportError:  # make unit's tier measures nothing
        yield
        return
    measuring = coverage.Coverage.current()
    if measuring is None:
        yield
        return
    # Starting coverage again patches subprocesses again (pyproject.toml:
    # patch = subprocess), which tests/conftest.py undid in this worker: the
    # tests' own subprocesses would be measured, and import coverage's modules.
    patched = os.environ.get("COVERAGE_PROCESS_CONFIG")
    measuring.stop()
    try:
        yield
    finally:
        measuring.start()
        if patched is None:
            os.environ.pop("COVERAGE_PROCESS_CONFIG", None)


@contextmanager
def cpu_guard(seconds: float) -> Iterator[None]:
    """Raise :class:`TooSlow` in the block after ``seconds`` of process CPU time
    (coverage paused: :func:`untraced`). The garbage collector waits until the
    block ends: a collection of the worker's heap is not the block's work (and
    the alarm going off inside the collector's callbacks would be lost)."""

    def alarm(signum: int, frame: FrameType | None) -> None:
        raise TooSlow(f"more than {seconds} s of CPU")

    collecting = gc.isenabled()
    gc.disable()
    previous = signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        with untraced():
            yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        if collecting:
            gc.enable()


def operations(function: Callable[[], Any]) -> int:
    """The number of calls ``function()`` makes (exceptions it raises are
    part of the work and are swallowed)."""
    count = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event == "call" or event == "c_call":
            count += 1

    sys.setprofile(profile)
    try:
        function()
    except Exception:
        pass
    finally:
        sys.setprofile(None)
    return count


def assert_linear(
    make: Callable[[int], Any],
    run: Callable[[Any], Any],
    *,
    cpu_seconds: float = 5.0,
    sizes: tuple[int, ...] = SIZES,
) -> list[int]:
    """``run(make(size))`` at each size: operation counts that grow at most
    about as fast as the size (a tenfold input may cost up to 15 times the
    operations), and every run within ``cpu_seconds`` of CPU.

    Returns the counts, for the failure message of a caller.
    """
    counts = []
    for size in sizes:
        data = make(size)
        with cpu_guard(cpu_seconds):
            counts.append(operations(partial(run, data)))
    for (small, big), (a, b) in zip(pairwise(sizes), pairwise(counts), strict=True):
        allowed = max(a, 50) * (big / small) * 1.5
        assert b <= allowed, f"{a} operations at {small} but {b} at {big}: not linear ({counts})"
    return counts
