"""The batch: prompts planned against the results file, run ``concurrency`` at a time."""

from __future__ import annotations

import inspect
import os
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

import anyio

from toolwire.batch._records import (
    BatchProgress,
    BatchRecord,
    BatchSummary,
    _completed,
    _open_for_append,
    _read,
)
from toolwire.batch._runs import _idle, _ray_runner, _run_one
from toolwire.errors import UsageError
from toolwire.stream import jsonio

if TYPE_CHECKING:
    from toolwire.agent import Agent

Runner = Callable[[int, str, str], Awaitable[dict[str, Any]]]


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
    dataset = _dataset(prompts)
    path = Path(results_path) if results_path is not None else None
    todo, truncate_at = _plan(dataset, path, rerun_errors=rerun_errors)
    started = time.perf_counter()
    run = _runner(agent_factory, mode, address, ray_options) if todo else _idle
    handle = _open_for_append(path, truncate_at) if path is not None and todo else None
    sink = _Sink(
        total=len(todo),
        skipped=len(dataset) - len(todo),
        handle=handle,
        bar=_Bar(len(todo), len(dataset) - len(todo)) if progress is True and todo else None,
        callback=progress if callable(progress) else None,
    )
    try:
        await _run_all(todo, run, sink, concurrency)
    finally:
        if handle is not None:
            handle.close()
    return BatchSummary(
        total=len(dataset),
        skipped=sink.skipped,
        records=tuple(sorted(sink.records, key=lambda r: r.index)),
        results_path=path,
        elapsed=time.perf_counter() - started,
    )


async def _run_all(todo: list[tuple[int, str]], run: Runner, sink: _Sink, concurrency: int) -> None:
    """Run every planned prompt, ``concurrency`` at a time, into ``sink``."""
    if sink.bar is not None:
        sink.bar.start()
    pending = iter(todo)

    async def worker() -> None:
        # The shared iterator hands each prompt to exactly one worker:
        # next() never awaits, so there is no race between them.
        for index, prompt in pending:
            await sink.add(BatchRecord.from_dict(await run(index, prompt, uuid.uuid4().hex)))

    try:
        async with anyio.create_task_group() as tg:
            for _ in range(min(concurrency, len(todo))):
                tg.start_soon(worker)
    finally:
        if sink.bar is not None:
            sink.bar.stop()


def _dataset(prompts: Iterable[str]) -> list[str]:
    dataset = list(prompts)
    for position, prompt in enumerate(dataset):
        if not isinstance(prompt, str):
            raise UsageError(
                f"prompt {position} is a {type(prompt).__name__}; a batch takes strings"
            )
    return dataset


def _plan(
    dataset: list[str], path: Path | None, *, rerun_errors: bool
) -> tuple[list[tuple[int, str]], int | None]:
    """The prompts still to run (with their index), and where to cut a torn last line."""
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
    return todo, truncate_at


def _runner(
    factory: Any, mode: str, address: str | None, ray_options: Mapping[str, Any] | None
) -> Runner:
    if mode == "ray":
        return _ray_runner(factory, address=address, options=ray_options)

    async def run(index: int, prompt: str, run_id: str) -> dict[str, Any]:
        return await _run_one(factory, prompt, index, run_id)

    return run


@dataclass(slots=True, kw_only=True)
class _Sink:
    """Where finished runs go: the results file, the progress bar, the callback."""

    total: int
    skipped: int
    handle: IO[bytes] | None
    bar: _Bar | None
    callback: Callable[[BatchProgress], Any] | None
    records: list[BatchRecord] = field(default_factory=list[BatchRecord])
    errors: int = 0

    async def add(self, record: BatchRecord) -> None:
        if self.handle is not None:
            self.handle.write(jsonio.dumps_bytes(record.to_dict()) + b"\n")
            self.handle.flush()
        self.records.append(record)
        self.errors += record.outcome == "error"
        if self.bar is not None:
            self.bar.advance(self.errors)
        if self.callback is not None:
            report = BatchProgress(
                done=len(self.records),
                total=self.total,
                skipped=self.skipped,
                errors=self.errors,
                record=record,
            )
            outcome = self.callback(report)
            if inspect.isawaitable(outcome):
                await outcome


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
