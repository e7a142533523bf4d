"""The :class:`Journal` protocol: what a store of runs offers the agent and
the ``toolwire runs`` commands. :class:`~toolwire.journal.SQLiteJournal` is
the store toolwire ships."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from toolwire.journal._records import JournalEvent, RunLog, RunSummary

__all__ = ["Journal", "JournalReader"]


@runtime_checkable
class Journal(Protocol):
    """A store of runs. :class:`SQLiteJournal` is the implementation toolwire
    ships; another store implements these methods.

    ``data``, ``header`` and message arguments are JSON text. Every write is
    durable when the method returns (the agent takes the next step after).
    """

    def record_run(
        self, run_id: str, *, header: str, messages: Sequence[str], resumed: bool
    ) -> int:
        """Record that a run starts (``run_started``) or resumes (``run_resumed``).

        Args:
            run_id: the run.
            header: JSON text of the run's model, provider, tools and settings.
            messages: JSON text of each message the run starts from (a new
                run); ignored for a resume.
            resumed: the run exists and continues.

        Returns:
            How many messages of the run are stored.

        Raises:
            JournalError: a new run's id is taken, or a resumed run is unknown.
        """
        ...

    def record_event(
        self,
        run_id: str,
        kind: str,
        data: str,
        *,
        turn: int | None = None,
        attempt: int | None = None,
        call_id: str | None = None,
        messages: Sequence[str] = (),
        first_position: int = 0,
    ) -> int:
        """Append one step to a run, with the conversation messages it first
        carries (stored at ``first_position``, ``first_position + 1``...).

        Returns:
            The step's ``seq``.
        """
        ...

    def record_end(self, run_id: str, *, status: str, summary: str, data: str) -> None:
        """Record the end of a run: its status, its summary (JSON text with
        ``turns``, ``tool_calls``, ``usage``, ``output``, ``error``) and the
        ``run_finished``/``run_failed`` event with ``data``."""
        ...

    def load_run(self, run_id: str) -> RunLog:
        """Everything recorded about a run.

        Raises:
            JournalError: no such run.
        """
        ...

    def list_runs(self, *, limit: int = 50) -> list[RunSummary]:
        """The latest runs, newest first."""
        ...

    def find_run(self, ref: str) -> str:
        """The id of the run ``ref`` names: an id, a unique prefix of one, or
        ``last`` for the latest run.

        Raises:
            JournalError: no run, or several, match.
        """
        ...

    def lease(self, run_id: str) -> AbstractContextManager[None]:
        """Hold the run's lease for the duration of a ``with`` block: one
        process at a time may run or resume a run.

        Raises:
            RunLeased: a live process (or another task of this one) holds it.
        """
        ...

    def close(self) -> None:
        """Release the store."""
        ...


class JournalReader(Protocol):
    """What a reader of a journal that other processes write uses (``toolwire
    view``): both journals toolwire ships offer it, opened read-only."""

    def load_run(self, run_id: str) -> RunLog:
        """See :meth:`Journal.load_run`."""
        ...

    def find_run(self, ref: str) -> str:
        """See :meth:`Journal.find_run`."""
        ...

    def page_runs(
        self,
        *,
        before: int | None = None,
        status: str | None = None,
        search: str | None = None,
        limit: int = 50,
    ) -> list[tuple[int, RunSummary]]:
        """See :meth:`SQLiteJournal.page_runs`."""
        ...

    def events_after(self, run_id: str, seq: int, *, limit: int = 500) -> list[JournalEvent]:
        """See :meth:`SQLiteJournal.events_after`."""
        ...

    def load_blob(self, sha256: str) -> bytes:
        """The bytes of a content part the records refer to (see
        :class:`~toolwire.journal.BlobRef`).

        Raises:
            JournalError: no such blob.
        """
        ...

    def close(self) -> None:
        """Release the store."""
        ...
