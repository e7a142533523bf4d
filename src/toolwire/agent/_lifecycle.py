"""What surrounds a run's driver: its lease, where a resumed run stands, and
the observers told of its start and its end.

Theory of operation: one process at a time may run a given run, so the run's
lease is taken before anything else (:func:`run_lease`), and a resumed run's
before its journal is read (:func:`resume_point`). An agent's observers are
bound once while they stay the same, its journal's observer first, so that
every other observer sees a step once the journal has it: committed, or
staged until the next step that must be on disk (:class:`AgentObservers`).
They are told that a run started before its driver runs, and how it ended
after; a failure is told shielded from cancellation, so that a cancelled run
is recorded as such.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator, Sequence

import anyio

from toolwire.agent._suspend import Answers
from toolwire.cost import RunTotals
from toolwire.errors import UsageError
from toolwire.journal import (
    Journal,
    JournalObserver,
    ResumePlan,
    check_signatures,
    plan_resume,
)
from toolwire.observe import Observers, RunObserver
from toolwire.run import RunInfo, RunResult

__all__ = ["AgentObservers", "resume_point", "run_lease"]


def run_lease(journal: Journal | None, run_id: str) -> contextlib.AbstractContextManager[None]:
    """The run's lease in ``journal`` (nothing to hold without one)."""
    return journal.lease(run_id) if journal is not None else contextlib.nullcontext()


@contextlib.contextmanager
def resume_point(
    journal: Journal, run_ref: str, answers: Answers, output: str | None = None
) -> Iterator[tuple[str, ResumePlan, str | None]]:
    """Hold the lease of the run ``run_ref`` names (an id or a short id),
    journal ``answers`` (checked, signed with the key when there is one),
    check that with an approval key every answer the run acts on is signed
    with it (:func:`~toolwire.journal.check_signatures`: else nothing runs),
    and read where the run stands: its id, its plan, and its status when it
    is finished (``None`` otherwise). ``output`` is the name of the typed
    output the resuming agent asks (``None``: text): a run started for
    another is refused, before anything runs."""
    run_id = journal.find_run(run_ref)
    with journal.lease(run_id):
        answers.give(journal, run_id)
        log = journal.load_run(run_id)
        _check_output(log.run.settings.get("output_type"), output, run_id)
        if answers.key is not None:
            check_signatures(log, answers.key)
        yield run_id, plan_resume(log), (log.run.status if log.run.finished else None)


def _check_output(recorded: object, asked: str | None, run_id: str) -> None:
    if recorded == asked:
        return
    said = f"typed output {recorded!r}" if recorded is not None else "text output"
    asks = f"typed output {asked!r}" if asked is not None else "text output"
    raise UsageError(
        f"run {run_id} was started for {said}, and this agent asks for {asks}: "
        "resume it with an agent of the same output_type"
    )


class AgentObservers:
    """The observers of one agent's runs, its journal's first."""

    __slots__ = ("_bound", "journal_observer")

    def __init__(self) -> None:
        self.journal_observer: JournalObserver | None = None
        """The observer that records the runs in the agent's journal."""
        self._bound: tuple[tuple[object, ...], Observers] | None = None

    def bind(
        self,
        observers: Sequence[RunObserver],
        journal: Journal | None,
        secrets: Callable[[], Sequence[str]],
    ) -> Observers:
        """The observers of a run: ``observers`` after the journal's (which
        keeps ``secrets()`` out of it). Bound once while they stay the same."""
        found: list[RunObserver] = list(observers)
        if journal is not None:
            recorder = self.journal_observer
            if recorder is None or recorder.journal is not journal:
                recorder = self.journal_observer = JournalObserver(journal, secrets=secrets())
            found.insert(0, recorder)
        if self._bound is None or self._bound[0] != tuple(found):
            self._bound = (tuple(found), Observers(found))
        return self._bound[1]

    async def observe(
        self,
        observers: Observers,
        run_id: str,
        info: Callable[[], RunInfo],
        plan: ResumePlan | None,
        drive: Callable[[], Awaitable[RunResult]],
        totals: Callable[[], RunTotals],
    ) -> RunResult:
        """Run ``drive()`` to its end, ``observers`` told of its start (with
        ``info()``, made only when one of them listens) and of its end; the
        journal records the run's ``totals()`` with its steps."""
        if observers.run_started:
            started_info = info()
            for started in observers.run_started:
                await started(started_info)
        if self.journal_observer is not None:
            self.journal_observer.metered(run_id, totals)
        if plan is not None and self.journal_observer is not None:
            self.journal_observer.resumed_from(
                run_id,
                usage=plan.usage,
                tool_calls=len(plan.records),
                turns=plan.turn,
                cost=plan.totals.cost,
            )
        try:
            final = await drive()
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                for failed in observers.run_failed:
                    await failed(run_id, exc)
            raise
        for finished in observers.run_finished:
            await finished(run_id, final)
        return final
