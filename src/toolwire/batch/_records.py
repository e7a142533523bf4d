"""The records of a batch, and the JSON Lines results file that holds them."""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import IO, Any, Literal, TypeAlias

from toolwire.cost import cost_from_dict
from toolwire.errors import UsageError
from toolwire.stream import jsonio

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
    cost: dict[str, float] | None = None
    """What the run cost in US dollars (``{"total", "input", "output"}``, see
    :class:`~toolwire.cost.Cost`); ``None`` when unknown or the run failed."""
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
            "cost": self.cost,
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
            cost=_cost(data.get("cost")),
            error=dict(error) if isinstance(error, Mapping) else None,
            turns=_int(data.get("turns")),
            tool_calls=_int(data.get("tool_calls")),
            elapsed=float(elapsed) if isinstance(elapsed, (int, float)) else 0.0,
        )


def _cost(value: Any) -> dict[str, float] | None:
    cost = cost_from_dict(value)
    return cost.to_dict() if cost is not None else None


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

    @property
    def cost(self) -> Decimal | None:
        """What the runs of this call that finished cost, in US dollars;
        ``None`` when one of them has an unknown cost."""
        total = Decimal(0)
        for record in self.records:
            if record.outcome == "error":
                continue
            cost = cost_from_dict(record.cost)
            if cost is None:
                return None
            total += cost.total
        return total


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
            records.append(BatchRecord.from_dict(jsonio.loads(line)))
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
