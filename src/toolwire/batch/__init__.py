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

from toolwire.batch._batch import run_batch
from toolwire.batch._records import (
    BatchOutcome,
    BatchProgress,
    BatchRecord,
    BatchSummary,
    load_results,
)

__all__ = [
    "BatchOutcome",
    "BatchProgress",
    "BatchRecord",
    "BatchSummary",
    "load_results",
    "run_batch",
]
