"""``toolwire batch``: run an agent on every prompt of a file, on Ray or locally.

The agent comes from a factory named ``module:attribute`` (a callable that
returns a new :class:`~toolwire.Agent`); it is imported here and, on Ray,
pickled to the workers, which must be able to import its module too.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import click

from toolwire.cost import format_usd
from toolwire.errors import ToolwireError, UsageError
from toolwire.testing.reading import MAX_FILE_BYTES, read_file, regular_file

if TYPE_CHECKING:
    from toolwire.batch import BatchSummary

__all__ = ["batch", "import_reference", "load_factory", "read_prompts"]


def read_prompts(text: str, *, jsonl: bool) -> list[str]:
    """The prompts of a dataset file.

    JSON Lines: each line is a JSON string or an object with a ``prompt``
    string. Plain text: one prompt per line. Blank lines are skipped.

    Raises:
        click.BadParameter: a JSON line is neither.
    """
    prompts: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if not jsonl:
            prompts.append(line)
            continue
        try:
            value: Any = json.loads(line)
        except ValueError as exc:
            raise click.BadParameter(f"line {number}: not JSON ({exc})") from None
        if isinstance(value, dict):
            value = value.get("prompt")
        if not isinstance(value, str):
            raise click.BadParameter(
                f'line {number}: expected a JSON string or {{"prompt": "..."}}'
            )
        prompts.append(value)
    return prompts


def import_reference(reference: str, *, param_hint: str, example: str) -> Any:
    """The object that ``module:attribute`` names, imported with the current
    directory on the import path (as with ``python -m``).

    Raises:
        click.BadParameter: the reference is malformed or cannot be imported.
    """
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise click.BadParameter(f"use module:attribute, e.g. {example}", param_hint=param_hint)
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        target: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise click.BadParameter(
            f"cannot import {reference!r}: {exc}", param_hint=param_hint
        ) from None
    return target


def load_factory(reference: str) -> Any:
    """The agent factory that ``module:attribute`` names.

    The current directory is on the import path, as with ``python -m``. The
    attribute may be a function (or any callable) returning an Agent, or a
    class: an Agent subclass is called as is, and any other class is
    instantiated once with no arguments, its instance being the factory.

    Raises:
        click.BadParameter: the reference cannot be imported or used.
    """
    target = import_reference(
        reference, param_hint="'--agent'", example="myproject.agents:make_agent"
    )
    if inspect.isclass(target):
        from toolwire.agent import Agent

        if not issubclass(target, Agent):
            try:
                target = target()
            except Exception as exc:
                raise click.BadParameter(
                    f"{reference}() failed: {type(exc).__name__}: {exc}", param_hint="'--agent'"
                ) from None
    if not callable(target):
        raise click.BadParameter(
            f"{reference!r} is not callable: give a function returning an Agent, or a "
            "class whose instances return one when called",
            param_hint="'--agent'",
        )
    return target


@contextlib.contextmanager
def _journal_env(journal: str | None) -> Iterator[None]:
    """``--journal`` as ``$TOOLWIRE_JOURNAL`` for the batch: what its agents,
    and the Ray workers (see :mod:`toolwire.batch`), read."""
    from toolwire.journal import ENV_VAR

    if journal is None:
        yield
        return
    before = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = journal
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = before


@click.command("batch")
@click.argument("prompts_file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option(
    "--agent",
    "factory_ref",
    required=True,
    help="The agent factory, as module:attribute: a function returning an Agent, or a "
    "class whose instances do (the current directory is importable).",
)
@click.option(
    "--results",
    "results_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="The JSON Lines results file; running again on it resumes the batch.",
)
@click.option(
    "--concurrency",
    default=4,
    show_default=True,
    type=click.IntRange(min=1),
    help="The most runs in flight at once.",
)
@click.option("--local", is_flag=True, help="Run in this process instead of on Ray.")
@click.option(
    "--address",
    "--ray",
    "address",
    default=None,
    help="The Ray cluster to join (default: RAY_ADDRESS, or a new local instance).",
)
@click.option(
    "--journal",
    default=None,
    help="Where every run is recorded, by the driver and every Ray worker: a journal file "
    "or a postgresql:// URL (default: $TOOLWIRE_JOURNAL or the user state directory). "
    "A run whose Ray worker dies is resumed from it on another worker.",
)
@click.option(
    "--rerun-errors/--skip-errors",
    default=True,
    show_default=True,
    help="On resume, run again the prompts whose last line is an error.",
)
@click.option(
    "--progress/--no-progress",
    default=True,
    show_default=True,
    help="Draw a progress bar on stderr.",
)
def batch(
    prompts_file: Path,
    factory_ref: str,
    results_path: Path,
    concurrency: int,
    local: bool,
    address: str | None,
    journal: str | None,
    rerun_errors: bool,
    progress: bool,
) -> None:
    """Run an agent on every prompt of PROMPTS_FILE (one per line, or JSON Lines
    with a "prompt" field; "-" reads stdin) and append one JSON line per run
    to the results file. Exits with 1 when a run failed."""
    from toolwire.batch import run_batch

    text = _prompts_text(prompts_file)
    _check_results(results_path)
    prompts = read_prompts(text, jsonl=prompts_file.suffix in (".jsonl", ".ndjson"))
    factory = load_factory(factory_ref)
    _open_results(results_path)

    async def main() -> Any:
        return await run_batch(
            prompts,
            factory,
            concurrency=concurrency,
            results_path=results_path,
            progress=progress,
            mode="local" if local else "ray",
            rerun_errors=rerun_errors,
            address=address,
        )

    try:
        with _journal_env(journal):
            summary = anyio.run(main)
    except ToolwireError as exc:
        raise click.ClickException(exc.message) from exc
    _report(summary, results_path)


def _prompts_text(prompts_file: Path) -> str:
    """The text of the prompts file (``-``: stdin), bounded."""
    try:
        if str(prompts_file) == "-":
            data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
            if len(data) > MAX_FILE_BYTES:
                raise UsageError(f"stdin holds more than {MAX_FILE_BYTES} bytes")
        else:
            data = read_file(prompts_file, what="prompts file")
        return data.decode("utf-8")
    except UsageError as exc:
        raise click.BadParameter(str(exc), param_hint="PROMPTS_FILE") from None
    except UnicodeDecodeError as exc:
        raise click.BadParameter(
            f"the prompts are not UTF-8 text (byte {exc.start} is not): a binary file?",
            param_hint="PROMPTS_FILE",
        ) from None


def _check_results(results_path: Path) -> None:
    """Refuse a results path that is not a regular file (when it exists)."""
    try:
        regular_file(results_path, what="results file")
    except UsageError as exc:
        raise click.BadParameter(str(exc), param_hint="'--results'") from None


def _open_results(results_path: Path) -> None:
    """Create the results file: before any run, one that cannot be written
    is a usage error."""
    try:
        results_path.parent.mkdir(parents=True, exist_ok=True)
        results_path.open("ab").close()
    except OSError as exc:
        raise click.BadParameter(
            f"cannot write {results_path}: {exc.strerror or exc}", param_hint="'--results'"
        ) from None


def _report(summary: BatchSummary, results_path: Path) -> None:
    """Say how the batch went; exit with 1 when a run failed."""
    ran = len(summary.records)
    click.echo(
        f"{ran} runs: {summary.answered} answered, {summary.errors} failed, "
        f"{ran - summary.answered - summary.errors} hit the turn limit; "
        f"{summary.skipped} skipped (already in {results_path})"
    )
    if ran > summary.errors and summary.cost is not None:
        click.echo(f"cost of the finished runs: {format_usd(summary.cost)}")
    failed = [record for record in summary.records if record.outcome == "error"]
    if failed:
        first = failed[0]
        error = first.error or {}
        click.echo(
            f"first failure (prompt {first.index}): {error.get('type')}: "
            f"{error.get('message')}; where it was raised: in {results_path}",
            err=True,
        )
        sys.exit(1)
