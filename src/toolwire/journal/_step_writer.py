"""How the journal observer's records reach the journal: staged, committed, written.

Theory of operation: a record is *committed* (durable before the hook
returns) when the agent's next step depends on it being on disk: a request before it is
sent, a tool's intent before its body runs, an approval before the tool may
run, a tool's outcome as soon as it is known, a run's end. The records of
what already happened and is not acted upon before the next commit are
*staged* and committed with it, in one transaction: a new run's start goes
with its first request, the model's answer with the first intent of its
tool calls (or the next request, or the run's end), a failed request with
the request sent again (or the run's end). A crash before that commit loses
them exactly as a crash just before their own write would have: no effect
happened in between (no tool ran, no request was sent), a resumed run sends
the unanswered request again, and nothing that was run is run twice. A
journal without :meth:`~toolwire.journal.SQLiteJournal.record_steps` gets
the same records in the same order, one write each. The intents of a batch
of tool calls are committed together too, before any of the calls runs. (An
observer after the journal is told of a staged step before it is on disk.)

The writes are small synchronous transactions on the event loop's thread,
or in a worker thread with ``offload``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import anyio.to_thread

from toolwire.journal._protocol import Journal
from toolwire.journal._records import Step

__all__ = ["StepWriter"]

T = TypeVar("T")


class StepWriter:
    """The records of the runs one observer records, on their way to its journal.

    Args:
        journal: where to write.
        offload: write from a worker thread instead of the event loop's.
    """

    def __init__(self, journal: Journal, *, offload: bool = False) -> None:
        self.journal = journal
        self.offload = offload
        record_steps = getattr(journal, "record_steps", None)
        self._record_steps: Callable[[str, Sequence[Step]], None] | None = (
            record_steps if callable(record_steps) else None
        )
        self._pending: dict[str, list[Step]] = {}
        self._unrecorded: set[str] = set()

    async def call(self, work: Callable[[], T]) -> T:
        """``work()``, in a worker thread when offloaded."""
        if self.offload:
            return await anyio.to_thread.run_sync(work)
        return work()

    def stage(self, run_id: str, step: Step) -> None:
        """Keep a record until the run's next commit (see the module doc)."""
        self._pending.setdefault(run_id, []).append(step)

    async def commit(self, run_id: str, step: Step) -> None:
        """Write ``step`` with the records staged before it: all durable on return."""
        staged = self._pending.pop(run_id, None)
        steps = [step] if staged is None else [*staged, step]
        await self.call(lambda: self._write(run_id, steps))

    def last(self, run_id: str, step: Step) -> None:
        """Write the run's last ``step`` with the records staged before it, on
        this thread (a run that failed: the agent shields the write)."""
        self._write(run_id, [*self._pending.pop(run_id, ()), step])

    def forget(self, run_id: str) -> None:
        """Forget a run that ended."""
        self._pending.pop(run_id, None)
        self._unrecorded.discard(run_id)

    def _write(self, run_id: str, steps: list[Step]) -> None:
        """One transaction when the journal takes several records at once
        (:meth:`SQLiteJournal.record_steps`), one write per record otherwise.
        Records that could not be written are dropped, as a crash would drop
        them; a run whose start could not be written gets no record at all
        (its id may be another run's)."""
        if run_id in self._unrecorded:
            return
        written = 0
        try:
            if self._record_steps is not None:
                self._record_steps(run_id, steps)
                return
            journal = self.journal
            for step in steps:
                if step.kind == "run_started":
                    journal.record_run(
                        run_id, header=step.data, messages=step.messages, resumed=False
                    )
                elif step.status is not None:
                    journal.record_end(
                        run_id, status=step.status, summary=step.summary or "", data=step.data
                    )
                else:
                    journal.record_event(
                        run_id,
                        step.kind,
                        step.data,
                        turn=step.turn,
                        attempt=step.attempt,
                        call_id=step.call_id,
                        messages=step.messages,
                        first_position=step.first_position,
                    )
                written += 1
        except BaseException:
            if written == 0 and steps[0].kind == "run_started":
                self._unrecorded.add(run_id)
            raise
