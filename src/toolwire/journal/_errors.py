"""The journal's errors (a module of their own: the record types need them,
and :mod:`toolwire.journal._records` needs the record types)."""

from __future__ import annotations

from toolwire.errors import ToolwireError

__all__ = ["JournalError", "LeaseLost", "RunLeased"]


class JournalError(ToolwireError):
    """The journal cannot be read or written (unknown run, unreadable file,
    a record that is not what toolwire wrote)."""

    type_name = "journal_error"


class RunLeased(JournalError):
    """Another live process (or another task of this one) is running or
    resuming this run: one process at a time may. A process that died (even
    of ``kill -9``) holds nothing, so its successor can resume."""

    type_name = "run_leased"


class LeaseLost(RunLeased):
    """This worker's lease of a run expired and another worker took the run
    over (its fencing token is newer): the write was refused and nothing of it
    was stored. The run goes on with its new owner."""

    type_name = "lease_lost"
