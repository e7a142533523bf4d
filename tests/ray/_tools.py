"""Tools and agent factories the Ray tests send to workers.

They live in an importable module (``tests.ray._tools``) as user code would:
Ray workers import it by name when they unpickle what refers to it.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel

from toolwire import Agent, ModelRetry, OpenAIChat, ToolContext, tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first.
        b: the second.
    """
    return a + b


@tool
async def async_add(a: int, b: int) -> dict[str, int]:
    """Add two integers, asynchronously.

    Args:
        a: the first.
        b: the second.
    """
    await anyio.lowlevel.checkpoint()
    return {"sum": a + b}


@tool
def where(note: str, ctx: ToolContext) -> dict[str, Any]:
    """Report where and how the call ran.

    Args:
        note: echoed back.
    """
    return {
        "pid": os.getpid(),
        "note": note,
        "key": ctx.idempotency_key,
        "attempt": ctx.attempt,
        "run_id": ctx.run_id,
        "metadata": dict(ctx.metadata),
    }


@tool
def needs_positive(n: int) -> int:
    """Square root of a perfect square, positive only.

    Args:
        n: a positive number.
    """
    if n <= 0:
        raise ModelRetry(f"n must be positive, got {n}; call again with n > 0")
    return n


class Unavailable(Exception):
    """An upstream failure with an HTTP status: transient."""

    status_code = 503


def cached_forecast(city: str) -> str:
    return f"cached forecast for {city}"


@tool(read_only=True, retries=1, fallback=cached_forecast)
def forecast(city: str) -> str:
    """The forecast for a city.

    Args:
        city: the city.
    """
    raise Unavailable(f"forecast service unavailable for {city}")


class Picky(Exception):
    """An exception that cannot be rebuilt from its args (keyword-only field)."""

    def __init__(self, message: str, *, code: int) -> None:
        super().__init__(message)
        self.status_code = code


@tool(read_only=True, retries=1)
def picky() -> str:
    """Always fails with an exception that cannot be unpickled."""
    raise Picky("upstream said 503", code=503)


def _record(path: str, line: str) -> int:
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    return len(Path(path).read_text(encoding="utf-8").splitlines())


@tool(read_only=True, retries=3)
def flaky(path: str) -> str:
    """Fails twice with a connection error, then works (attempts are counted in a file).

    Args:
        path: the counter file.
    """
    count = _record(path, str(os.getpid()))
    if count < 3:
        raise ConnectionError(f"connection reset (attempt {count})")
    return f"worked on attempt {count}"


@tool(timeout=2.0)
def stall_sync(path: str) -> str:
    """Writes its pid, then blocks far longer than its timeout.

    Args:
        path: where to write the pid.
    """
    Path(path).write_text(str(os.getpid()), encoding="utf-8")
    time.sleep(60)
    return "too late"


@tool(timeout=2.0)
async def stall(path: str) -> str:
    """Writes its pid, then waits far longer than its timeout.

    Args:
        path: where to write the pid.
    """
    await anyio.Path(path).write_text(str(os.getpid()), encoding="utf-8")
    await anyio.sleep(60)
    return "too late"


@tool
def give_lock() -> Any:
    """Returns something that cannot be pickled."""
    return threading.Lock()


@tool(read_only=True, retries=1)
def crash() -> str:
    """Kills its own process, as a segfault or the OOM killer would."""
    os._exit(1)


@tool(read_only=True)
def whoami() -> dict[str, int]:
    """The process id of the worker running the agent."""
    return {"pid": os.getpid()}


@dataclass(frozen=True)
class AgentFactory:
    """Builds an agent against the emulation server, inside the worker."""

    base_url: str

    def __call__(self) -> Agent:
        provider = OpenAIChat(api_key="test-key", base_url=self.base_url)
        return Agent(provider, model="gpt-4.1-mini", tools=[whoami])


@dataclass(frozen=True)
class CrashingFactory:
    """Kills the worker process while building the agent."""

    def __call__(self) -> Agent:
        os._exit(1)


def agent_from_env() -> Agent:
    """An agent against the server named by ``TOOLWIRE_TEST_BASE_URL`` (for the CLI)."""
    return AgentFactory(os.environ["TOOLWIRE_TEST_BASE_URL"])()


@dataclass(frozen=True)
class CrashOnceFactory:
    """Builds an agent, journaling to Postgres, whose read-only tool kills its
    worker the first time it runs (the flag file remembers it did)."""

    base_url: str
    journal_url: str
    flag: str

    def __call__(self) -> Agent:
        from toolwire.journal import PostgresJournal

        flag = self.flag

        @tool(read_only=True)
        def crash_once() -> str:
            """Kills its worker the first time, as a lost node would."""
            if not os.path.exists(flag):
                with open(flag, "w") as handle:
                    handle.write(str(os.getpid()))
                os._exit(1)
            return "survived"

        provider = OpenAIChat(api_key="test-key", base_url=self.base_url)
        journal = PostgresJournal(self.journal_url, lease_ttl=1.0, timeout=10.0)
        return Agent(provider, model="gpt-4.1-mini", tools=[crash_once], journal=journal)
