"""One run of a batch: the same code in this event loop and in a Ray worker."""

from __future__ import annotations

import inspect
import logging
import os
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio

from toolwire.batch._records import BatchRecord
from toolwire.errors import ToolwireError, UsageError
from toolwire.tools.log import log_failure

if TYPE_CHECKING:
    from toolwire.agent import Agent

logger = logging.getLogger("toolwire.batch")

_FRAMES_KEPT = 20


def _error_dict(exc: BaseException) -> dict[str, Any]:
    """The error of a failed run: its type, its message and where it was
    raised (``file:line in function``, innermost last; no source, no locals)."""
    frames = [
        f"{frame.filename}:{frame.lineno} in {frame.name}"
        for frame in traceback.extract_tb(exc.__traceback__)[-_FRAMES_KEPT:]
    ]
    if isinstance(exc, ToolwireError):
        # ToolwireError messages never carry credentials (see toolwire.errors).
        return {"type": exc.type_name, "message": exc.message, "traceback": frames}
    from toolwire.tools import scrub

    message = scrub(str(exc), limit=500, keep_paths=True)
    return {"type": type(exc).__name__, "message": message, "traceback": frames}


RESUME_WAIT = 120.0
"""Seconds a resumed run waits for its dead worker's lease to expire."""


async def _start_or_resume(agent: Any, prompt: str, run_id: str, resume: bool) -> Any:
    """Run the prompt; or, for a run whose worker died (``resume``), resume it
    from the journal as a local resume does (a run the journal never saw
    starts afresh). A dead worker's lease in a shared journal lives until it
    expires (it may have taken it and died before the run's first record):
    the run waits for it, at most :data:`RESUME_WAIT` seconds."""
    from toolwire.journal import JournalError, LeaseLost, RunLeased

    journal = agent.journal if resume else None
    if journal is None:
        return await agent.run(prompt, run_id=run_id)
    deadline = time.monotonic() + RESUME_WAIT
    while True:
        try:
            try:
                journal.load_run(run_id)
            except JournalError:
                return await agent.run(prompt, run_id=run_id)
            return await agent.resume(run_id)
        except LeaseLost:
            raise
        except RunLeased:
            if time.monotonic() > deadline:
                raise
            await anyio.sleep(0.25)


async def _run_one(
    factory: Any, prompt: str, index: int, run_id: str, resume: bool = False
) -> dict[str, Any]:
    """Run one prompt with a fresh agent (or resume it: see
    :func:`_start_or_resume`); always returns a record dict."""
    started = time.perf_counter()
    agent: Agent | None = None
    try:
        made = factory()
        agent = await made if inspect.isawaitable(made) else made
        run = getattr(agent, "run", None)
        if run is None:
            raise UsageError(f"the agent factory returned a {type(agent).__name__}, not an Agent")
        result = await _start_or_resume(agent, prompt, run_id, resume)
        record = BatchRecord(
            index=index,
            prompt=prompt,
            run_id=run_id,
            outcome=result.outcome,
            output=result.output,
            usage=result.usage.to_dict(),
            cost=result.cost.to_dict() if result.cost is not None else None,
            turns=result.turns,
            tool_calls=len(result.tool_calls),
            elapsed=time.perf_counter() - started,
        )
    except Exception as exc:
        error = _error_dict(exc)
        log_failure(logger, f"batch run {index} ({run_id})", exc, error["message"])
        record = BatchRecord(
            index=index,
            prompt=prompt,
            run_id=run_id,
            outcome="error",
            error=error,
            elapsed=time.perf_counter() - started,
        )
    finally:
        if agent is not None:
            await _close(agent)
    return record.to_dict()


async def _close(agent: Any) -> None:
    for resource in (agent, getattr(agent, "transport", None)):
        aclose = getattr(resource, "aclose", None)
        if aclose is None:
            continue
        try:
            await aclose()
        except Exception:  # closing must not turn a finished run into a failure
            logger.debug("closing %r failed", resource, exc_info=True)


def _run_in_worker(
    factory: Any, prompt: str, index: int, run_id: str, journal: str, resume: bool = False
) -> dict[str, Any]:
    """The Ray task: one run on its own event loop in the worker.

    ``journal`` is the driver's journal setting: workers are started with the
    environment of whoever started Ray, and must record where the driver does.
    """
    from toolwire.journal import ENV_VAR

    os.environ[ENV_VAR] = journal
    return anyio.run(_run_one, factory, prompt, index, run_id, resume)


def _journal_setting() -> str:
    """The driver's journal, as a ``TOOLWIRE_JOURNAL`` value."""
    from toolwire.journal import default_journal

    journal = default_journal()
    if isinstance(journal, str):
        return journal  # a postgresql:// URL
    return "off" if journal is None else str(journal.resolve())


_REMOTE: dict[str, Any] = {}


async def _idle(index: int, prompt: str, run_id: str) -> dict[str, Any]:  # pragma: no cover
    raise AssertionError("no run is pending")


def _ray_runner(
    factory: Any, *, address: str | None, options: Mapping[str, Any] | None
) -> Callable[[int, str, str], Awaitable[dict[str, Any]]]:
    from toolwire.ray import await_ref, import_ray

    ray = import_ray()
    if not ray.is_initialized():
        ray.init(address=address)
    try:
        factory_ref = ray.put(factory)
    except Exception as exc:
        raise UsageError(
            f"the agent factory cannot be pickled for Ray ({type(exc).__name__}); use a "
            "module-level function or class instance that builds the agent inside the worker"
        ) from exc
    remote = _REMOTE.get("run")
    if remote is None:
        remote = _REMOTE["run"] = ray.remote(_run_in_worker)
    # Ray's task retries would run an agent, and its side-effecting tools,
    # again after a crash; a failed run is an error line to resume instead.
    task = remote.options(**{"max_retries": 0, "name": "toolwire:batch-run", **(options or {})})

    async def run(index: int, prompt: str, run_id: str) -> dict[str, Any]:
        started = time.perf_counter()
        journal = _journal_setting()
        for attempt in range(1 + RAY_RESUMES):
            ref = task.remote(factory_ref, prompt, index, run_id, journal, attempt > 0)
            try:
                data: dict[str, Any] = await await_ref(ref)
            except ray.exceptions.RayError as exc:
                if journal != "off" and attempt < RAY_RESUMES and _worker_died(exc):
                    # Another worker resumes the run from the journal.
                    logger.info("batch run %d (%s): its worker died; resuming", index, run_id)
                    continue
                return _ray_failure(exc, index, prompt, run_id, started)
            return data
        raise AssertionError("unreachable")  # pragma: no cover

    return run


RAY_RESUMES = 3
"""How many times a run whose Ray worker (or node) died is resumed elsewhere."""


def _worker_died(exc: BaseException) -> bool:
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError"})


def _ray_failure(
    exc: BaseException, index: int, prompt: str, run_id: str, started: float
) -> dict[str, Any]:
    """The error line of a run Ray could not carry out."""
    from toolwire.tools import scrub

    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    log_failure(logger, f"batch run {index} ({run_id}) on Ray", exc, scrub(first))
    return BatchRecord(
        index=index,
        prompt=prompt,
        run_id=run_id,
        outcome="error",
        error={"type": type(exc).__name__, "message": scrub(first, limit=500)},
        elapsed=time.perf_counter() - started,
    ).to_dict()
