"""Many agent runs: a dataset of prompts, each run by its own agent, with
bounded concurrency, progress and a JSON Lines results file.

Theory of operation
-------------------
:func:`run_batch` takes prompts and an *agent factory*: a picklable callable
that returns a new :class:`~toolwire.Agent` (or an awaitable of one). Each
prompt gets a fresh agent from the factory, in the process that runs it,
because providers and transports hold connections and cannot travel; the
factory can. A run becomes one :class:`BatchRecord`: the prompt, its index in
the dataset, the run id, the outcome (``answered``, ``max_turns`` or
``error``), the output, the token usage and the error, if any. A failed run
is a record, never an exception: the batch goes on.

Two modes run the same code for one prompt:

- ``mode="ray"``: every run is a Ray task. The factory goes to the object
  store once; the driver keeps at most ``concurrency`` tasks in flight and
  awaits them. Cancelling the batch cancels the tasks in flight.
- ``mode="local"``: runs are coroutines in this event loop, at most
  ``concurrency`` at a time. No Ray needed.

The results file gets one line per finished run, appended and flushed as it
finishes (so lines are in completion order; ``index`` gives dataset order).
Running the batch again on the same file *resumes* it: a prompt that already
has a line is skipped, except that ``error`` lines are run again (the new line
is appended, and the last line of a prompt wins). A prompt listed k times in
the dataset is run k times; each line already in the file counts for one of
them. A last line cut short by a crash is removed, with a warning; any other
line that is not a record stops the batch with :class:`~toolwire.UsageError`
rather than guessing.

To run on a real cluster, connect first (``ray.init(address=...)``) or pass
``address=``; every node needs toolwire and the module of the factory (see
:mod:`toolwire.ray`).
"""

from __future__ import annotations

import inspect
import logging
import os
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal, TypeAlias

import anyio

from toolwire import _json
from toolwire._log import log_failure
from toolwire.errors import ToolwireError, UsageError

if TYPE_CHECKING:
    from toolwire.agent import Agent

__all__ = [
    "BatchOutcome",
    "BatchProgress",
    "BatchRecord",
    "BatchSummary",
    "load_results",
    "run_batch",
]

logger = logging.getLogger("toolwire.batch")

BatchOutcome: TypeAlias = Literal["answered", "max_turns", "error"]
"""How one run of a batch ended."""

_OUTCOMES = ("answered", "max_turns", "error")


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchRecord:
    """One run of a batch: a line of the results file."""

    index: int
    """The prompt's position in the dataset (0-based)."""
    prompt: str
    run_id: str
    outcome: BatchOutcome
    output: str = ""
    """The final answer (empty unless ``answered``)."""
    usage: dict[str, Any] = field(default_factory=dict[str, Any])
    """Token usage summed over the run's turns (see :class:`~toolwire.Usage`)."""
    error: dict[str, Any] | None = None
    """``{"type", "message", "traceback"}`` when the run failed; ``traceback``
    lists where it was raised, ``file:line in function``, innermost last."""
    turns: int = 0
    tool_calls: int = 0
    elapsed: float = 0.0
    """Seconds the run took, factory included."""

    @property
    def ok(self) -> bool:
        """True when the model answered."""
        return self.outcome == "answered"

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready line."""
        return {
            "index": self.index,
            "prompt": self.prompt,
            "run_id": self.run_id,
            "outcome": self.outcome,
            "output": self.output,
            "usage": self.usage,
            "error": self.error,
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "elapsed": self.elapsed,
        }

    @classmethod
    def from_dict(cls, data: Any) -> BatchRecord:
        """Read a line back.

        Raises:
            UsageError: ``data`` is not a batch record.
        """
        if not isinstance(data, Mapping):
            raise UsageError(f"a batch record is a JSON object, not {type(data).__name__}")
        prompt, outcome = data.get("prompt"), data.get("outcome")
        if not isinstance(prompt, str) or outcome not in _OUTCOMES:
            raise UsageError("a batch record needs a string 'prompt' and a known 'outcome'")
        index, run_id = data.get("index", -1), data.get("run_id", "")
        usage, error = data.get("usage"), data.get("error")
        elapsed = data.get("elapsed", 0.0)
        return cls(
            index=index if isinstance(index, int) else -1,
            prompt=prompt,
            run_id=run_id if isinstance(run_id, str) else "",
            outcome=outcome,
            output=str(data.get("output") or ""),
            usage=dict(usage) if isinstance(usage, Mapping) else {},
            error=dict(error) if isinstance(error, Mapping) else None,
            turns=_int(data.get("turns")),
            tool_calls=_int(data.get("tool_calls")),
            elapsed=float(elapsed) if isinstance(elapsed, (int, float)) else 0.0,
        )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchProgress:
    """Where a batch stands, after each finished run."""

    done: int
    """Runs finished in this call."""
    total: int
    """Runs this call has to do (prompts not skipped)."""
    skipped: int
    """Prompts skipped because the results file had them."""
    errors: int
    """Finished runs whose outcome is ``error``."""
    record: BatchRecord
    """The run that just finished."""


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchSummary:
    """What a call of :func:`run_batch` did."""

    total: int
    """Prompts in the dataset."""
    skipped: int
    """Prompts skipped because the results file had them."""
    records: tuple[BatchRecord, ...]
    """The runs of this call, in dataset order."""
    results_path: Path | None
    elapsed: float

    @property
    def answered(self) -> int:
        """Runs of this call that the model answered."""
        return sum(1 for r in self.records if r.outcome == "answered")

    @property
    def errors(self) -> int:
        """Runs of this call that failed."""
        return sum(1 for r in self.records if r.outcome == "error")


# -- one run (the same code in the driver and in a Ray worker) ------------------


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


async def _run_one(factory: Any, prompt: str, index: int, run_id: str) -> dict[str, Any]:
    """Run one prompt with a fresh agent; always returns a record dict."""
    started = time.perf_counter()
    agent: Agent | None = None
    try:
        made = factory()
        agent = await made if inspect.isawaitable(made) else made
        run = getattr(agent, "run", None)
        if run is None:
            raise UsageError(f"the agent factory returned a {type(agent).__name__}, not an Agent")
        result = await run(prompt, run_id=run_id)
        record = BatchRecord(
            index=index,
            prompt=prompt,
            run_id=run_id,
            outcome=result.outcome,
            output=result.output,
            usage=result.usage.to_dict(),
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
    factory: Any, prompt: str, index: int, run_id: str, journal: str
) -> dict[str, Any]:
    """The Ray task: one run on its own event loop in the worker.

    ``journal`` is the driver's journal setting: workers are started with the
    environment of whoever started Ray, and must record where the driver does.
    """
    from toolwire.journal._open import ENV_VAR

    os.environ[ENV_VAR] = journal
    return anyio.run(_run_one, factory, prompt, index, run_id)


def _journal_setting() -> str:
    """The driver's journal, as a ``TOOLWIRE_JOURNAL`` value."""
    from toolwire.journal import default_journal_path

    path = default_journal_path()
    return "off" if path is None else str(path.resolve())


_REMOTE: dict[str, Any] = {}


# -- the results file -----------------------------------------------------------


def load_results(path: str | os.PathLike[str]) -> list[BatchRecord]:
    """The records of a results file, in file order (a missing file has none).

    A last line cut short by a crash is left out (with a warning).

    Raises:
        UsageError: a line other than the last is not a batch record.
    """
    records, _ = _read(Path(path))
    return records


def _read(path: Path) -> tuple[list[BatchRecord], int | None]:
    """The records, and the offset to truncate a torn last line at (if any)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], None
    records: list[BatchRecord] = []
    lines = data.split(b"\n")
    offset = 0
    for number, line in enumerate(lines, start=1):
        start, offset = offset, offset + len(line) + 1
        if not line.strip():
            continue
        last = number == len(lines)  # no newline after it: possibly torn
        try:
            records.append(BatchRecord.from_dict(_json.loads(line)))
        except (ValueError, UsageError) as exc:
            if last:
                logger.warning(
                    "%s: the last line (%d bytes) is incomplete, as after a crash; "
                    "it is dropped and its prompt will run again",
                    path,
                    len(line),
                )
                return records, start
            raise UsageError(f"{path}:{number}: not a batch record ({exc})") from None
    return records, None


def _open_for_append(path: Path, truncate_at: int | None) -> IO[bytes]:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = path.open("ab")
    if truncate_at is not None:
        handle.truncate(truncate_at)
        handle.seek(truncate_at)
    elif handle.tell() > 0:
        with path.open("rb") as check:
            check.seek(-1, os.SEEK_END)
            if check.read(1) != b"\n":  # a complete record without its newline
                handle.write(b"\n")
    return handle


# -- the batch -------------------------------------------------------------------


@dataclass(slots=True)
class _State:
    total: int
    skipped: int
    records: list[BatchRecord] = field(default_factory=list[BatchRecord])
    errors: int = 0


async def run_batch(
    prompts: Iterable[str],
    agent_factory: Callable[[], Agent | Awaitable[Agent]],
    *,
    concurrency: int = 4,
    results_path: str | os.PathLike[str] | None = None,
    progress: bool | Callable[[BatchProgress], Any] = True,
    mode: Literal["ray", "local"] = "ray",
    rerun_errors: bool = True,
    address: str | None = None,
    ray_options: Mapping[str, Any] | None = None,
) -> BatchSummary:
    """Run an agent on every prompt, ``concurrency`` runs at a time.

    Args:
        prompts: the dataset: one user prompt per run.
        agent_factory: returns a new :class:`~toolwire.Agent` (or an
            awaitable of one); called once per run, inside the worker.
            Picklable for ``mode="ray"`` (a module-level function, a
            ``functools.partial`` of one, or an instance of a module-level
            class).
        concurrency: the most runs in flight at once.
        results_path: the JSON Lines file to append records to and to
            resume from; ``None`` keeps the records in memory only.
        progress: ``True`` for a progress bar on stderr, ``False`` for none,
            or a callable given a :class:`BatchProgress` after each run
            (sync or async).
        mode: ``"ray"`` runs each prompt as a Ray task; ``"local"`` runs
            them in this event loop.
        rerun_errors: on resume, run again the prompts whose line is an
            ``error`` (default); ``False`` skips every prompt with a line.
        address: for ``mode="ray"``, the cluster to join if Ray is not
            initialised yet (see :mod:`toolwire.ray`).
        ray_options: Ray task options for every run (``num_cpus``,
            ``resources``, ``runtime_env``...).

    Returns:
        A :class:`BatchSummary`; every run also has its line in the file.

    Raises:
        UsageError: a prompt is not a string, an option is out of range, the
            results file holds something else, Ray is missing, or the
            factory cannot be pickled.
    """
    if concurrency < 1:
        raise UsageError("concurrency must be >= 1")
    if mode not in ("ray", "local"):
        raise UsageError(f"mode must be 'ray' or 'local', not {mode!r}")
    dataset = list(prompts)
    for position, prompt in enumerate(dataset):
        if not isinstance(prompt, str):
            raise UsageError(
                f"prompt {position} is a {type(prompt).__name__}; a batch takes strings"
            )
    path = Path(results_path) if results_path is not None else None
    done: Counter[str] = Counter()
    truncate_at: int | None = None
    if path is not None:
        existing, truncate_at = _read(path)
        done = _completed(existing, rerun_errors=rerun_errors)
    todo: list[tuple[int, str]] = []
    for index, prompt in enumerate(dataset):
        if done[prompt] > 0:
            done[prompt] -= 1
        else:
            todo.append((index, prompt))
    state = _State(total=len(todo), skipped=len(dataset) - len(todo))
    started = time.perf_counter()

    run: Callable[[int, str, str], Awaitable[dict[str, Any]]]
    if mode == "ray":
        run = _ray_runner(agent_factory, address=address, options=ray_options) if todo else _idle
    else:

        async def run(index: int, prompt: str, run_id: str) -> dict[str, Any]:
            return await _run_one(agent_factory, prompt, index, run_id)

    handle = _open_for_append(path, truncate_at) if path is not None and todo else None
    bar = _Bar(state.total, state.skipped) if progress is True and todo else None
    callback = progress if callable(progress) else None
    try:
        if bar is not None:
            bar.start()
        pending = iter(todo)

        async def worker() -> None:
            # The shared iterator hands each prompt to exactly one worker:
            # next() never awaits, so there is no race between them.
            for index, prompt in pending:
                data = await run(index, prompt, uuid.uuid4().hex)
                record = BatchRecord.from_dict(data)
                if handle is not None:
                    handle.write(_json.dumps_bytes(record.to_dict()) + b"\n")
                    handle.flush()
                state.records.append(record)
                state.errors += record.outcome == "error"
                if bar is not None:
                    bar.advance(state.errors)
                if callback is not None:
                    report = BatchProgress(
                        done=len(state.records),
                        total=state.total,
                        skipped=state.skipped,
                        errors=state.errors,
                        record=record,
                    )
                    outcome = callback(report)
                    if inspect.isawaitable(outcome):
                        await outcome

        async with anyio.create_task_group() as tg:
            for _ in range(min(concurrency, len(todo))):
                tg.start_soon(worker)
    finally:
        if bar is not None:
            bar.stop()
        if handle is not None:
            handle.close()
    return BatchSummary(
        total=len(dataset),
        skipped=state.skipped,
        records=tuple(sorted(state.records, key=lambda r: r.index)),
        results_path=path,
        elapsed=time.perf_counter() - started,
    )


def _completed(records: Iterable[BatchRecord], *, rerun_errors: bool) -> Counter[str]:
    """How many runs of each prompt the file already has (last line wins per run)."""
    finished: Counter[str] = Counter()
    by_index: dict[tuple[int, str], BatchRecord] = {}
    for record in records:
        if record.index >= 0:
            by_index[(record.index, record.prompt)] = record  # a rerun replaces its line
        elif not (rerun_errors and record.outcome == "error"):
            finished[record.prompt] += 1
    for record in by_index.values():
        if not (rerun_errors and record.outcome == "error"):
            finished[record.prompt] += 1
    return finished


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
        ref = task.remote(factory_ref, prompt, index, run_id, _journal_setting())
        try:
            data: dict[str, Any] = await await_ref(ref)
        except ray.exceptions.RayError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            from toolwire.tools import scrub

            log_failure(logger, f"batch run {index} ({run_id}) on Ray", exc, scrub(first))

            return BatchRecord(
                index=index,
                prompt=prompt,
                run_id=run_id,
                outcome="error",
                error={"type": type(exc).__name__, "message": scrub(first, limit=500)},
                elapsed=time.perf_counter() - started,
            ).to_dict()
        return data

    return run


class _Bar:
    """A rich progress bar on stderr."""

    def __init__(self, total: int, skipped: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]batch"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[errors]} errors"),
            TextColumn(f"{skipped} skipped" if skipped else ""),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
        )
        self._task = self._progress.add_task("batch", total=total, errors=0)

    def start(self) -> None:
        self._progress.start()

    def advance(self, errors: int) -> None:
        self._progress.update(self._task, advance=1, errors=errors)

    def stop(self) -> None:
        self._progress.stop()
