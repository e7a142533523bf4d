"""Answering a suspended run from another process, for tests of approval flows.

:class:`ApprovalDesk` is what the ``toolwire_approvals`` fixture gives: it
reads a suspended run's pending calls from the test's journal, and answers
them the way an operator or a web handler in another process would, by
running ``toolwire runs approve`` / ``deny`` / ``answer`` in a subprocess on
that journal. A test then resumes the run and checks what happened, with
the same refusals (a wrong digest, an unknown call, an answer given twice)
as in production.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolwire.errors import UsageError

if TYPE_CHECKING:
    from toolwire.run import PendingCall

__all__ = ["ApprovalDesk"]


class ApprovalDesk:
    """Answers the calls a run waits on, from a ``toolwire`` subprocess.

    Args:
        journal: the journal file the runs are recorded in.
        timeout: seconds each subprocess may take.
    """

    def __init__(self, journal: Path, *, timeout: float = 60.0) -> None:
        self.journal = journal
        self.timeout = timeout
        self.commands: list[list[str]] = []
        """The ``toolwire`` arguments run so far, oldest first."""

    def pending(self, run: str) -> tuple[PendingCall, ...]:
        """The calls run ``run`` (an id, a short id or ``last``) still waits
        on: suspended for, and not answered since."""
        return tuple(call for call, answered in self._suspended(run) if not answered)

    def _suspended(self, run: str) -> list[tuple[PendingCall, bool]]:
        """The calls the run suspended for, each with whether it was answered."""
        from toolwire.journal import SQLiteJournal, pending_calls, recorded_answers

        journal = SQLiteJournal(self.journal)
        try:
            log = journal.load_run(journal.find_run(run))
        finally:
            journal.close()
        answers = recorded_answers(log)
        return [(call, call.call_id in answers) for call in pending_calls(log)]

    def approve(
        self,
        run: str,
        call: PendingCall | str | None = None,
        *,
        digest: str | None = None,
        principal: str = "pytest",
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Approve ``call`` (a pending call, its id, or ``None`` for the only
        one) with the digest of its recorded arguments, or ``digest``.

        Raises:
            UsageError: no such pending call (or several, with ``call=None``).
            AssertionError: the command failed and ``check`` is true.
        """
        found = self._call(run, call)
        chosen = digest if digest is not None else found.digest
        return self.run("approve", run, found.call_id, "--digest", chosen, "--as", principal,
                        check=check)  # fmt: skip

    def deny(
        self,
        run: str,
        call: PendingCall | str | None = None,
        *,
        reason: str = "denied in a test",
        principal: str = "pytest",
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Deny ``call`` (as :meth:`approve` picks it), with ``reason``."""
        found = self._call(run, call)
        return self.run("deny", run, found.call_id, "--reason", reason, "--as", principal,
                        check=check)  # fmt: skip

    def answer(
        self,
        run: str,
        call: PendingCall | str | None,
        result: Any,
        *,
        principal: str = "pytest",
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Give an external call's ``result`` (any JSON value)."""
        import json

        found = self._call(run, call)
        return self.run("answer", run, found.call_id, "--result", json.dumps(result),
                        "--as", principal, check=check)  # fmt: skip

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``toolwire runs ARGS --journal JOURNAL`` in a subprocess.

        Raises:
            AssertionError: it failed (exit status not 0) and ``check`` is true.
        """
        command = ["runs", *args, "--journal", str(self.journal)]
        self.commands.append(command)
        env = {**os.environ, "TOOLWIRE_JOURNAL": str(self.journal)}
        done = subprocess.run(  # noqa: S603 - toolwire itself, arguments as a list, no shell
            [sys.executable, "-m", "toolwire", *command],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=self.timeout,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"toolwire {' '.join(command[:2])} failed ({done.returncode}): "
                f"{done.stderr.strip() or done.stdout.strip()}"
            )
        return done

    def _call(self, run: str, call: PendingCall | str | None) -> PendingCall:
        """The call to answer: one the run suspended for (answered or not, so
        that a second answer reaches the journal, which refuses it)."""
        suspended = self._suspended(run)
        pending = [found for found, answered in suspended if not answered]
        if call is None:
            if len(pending) != 1:
                raise UsageError(f"run {run} waits on {len(pending)} calls: name the one to answer")
            return pending[0]
        call_id = call if isinstance(call, str) else call.call_id
        for found, _ in suspended:
            if found.call_id == call_id:
                return found
        raise UsageError(f"run {run} does not wait on call {call_id!r}")
