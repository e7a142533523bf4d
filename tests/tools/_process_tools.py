"""Tools that a child process can import (for ProcessRunner tests)."""

from __future__ import annotations

import os
from pathlib import Path

from toolwire import ModelRetry, ToolContext, tool


# Long enough for a child to start on a loaded machine, far shorter than the
# minutes round() would take.
@tool(timeout=8)
def burn(pid_file: str, exponent: int) -> int:
    """Hold the CPU (and the GIL) for seconds: round() computes 10**exponent."""
    Path(pid_file).write_text(str(os.getpid()))
    return round(1, -exponent)


@tool
def where(ctx: ToolContext) -> dict[str, object]:
    """Say which process ran the call; print noise on stdout."""
    print("noise the protocol must ignore")
    return {"pid": os.getpid(), "key": ctx.idempotency_key, "metadata": dict(ctx.metadata)}


@tool
async def async_where() -> int:
    """The same, as a coroutine function."""
    return os.getpid()


@tool
def picky(n: int) -> int:
    """Ask the model for a positive number."""
    if n <= 0:
        raise ModelRetry("n must be positive")
    return n


@tool(retries=1, retry_on=ConnectionError)
def flaky() -> str:
    """Fail with an error that pickles."""
    raise ConnectionError("connection reset by peer")


@tool(timeout=10)
def spawn(pid_file: str) -> int:
    """Start a grandchild that would run for a minute, then wait past the
    deadline (which counts the child's Python start-up and imports: ample for
    a loaded machine, so the grandchild is always started before it)."""
    import subprocess
    import time

    grandchild = subprocess.Popen(["sleep", "60"])
    Path(pid_file).write_text(str(grandchild.pid))
    time.sleep(60)
    return grandchild.pid


@tool
def huge() -> str:
    """An outcome far over a small limit."""
    return "x" * 1_000_000
