"""Errors of the journal: leases, and answers to suspended runs it refuses."""

from __future__ import annotations

from typing import Literal

from toolwire.errors._base import ToolwireError

__all__ = ["ApprovalRefused", "BlobTooLarge", "JournalError", "LeaseLost", "Refusal", "RunLeased"]


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


class BlobTooLarge(JournalError):
    """A content part (image, document, audio) larger than the journal's
    blob cap (``max_blob_bytes``): nothing of the record that carries it was
    written, and the step it records (a request, a tool's result) did not
    happen."""

    type_name = "blob_too_large"

    def __init__(
        self, message: str, *, size: int, maximum: int, media_type: str, sha256: str
    ) -> None:
        super().__init__(message)
        self.size = size
        """The part's size in bytes."""
        self.maximum = maximum
        """The journal's cap, in bytes."""
        self.media_type = media_type
        self.sha256 = sha256


Refusal = Literal[
    "not_suspended", "unknown_call", "wrong_kind", "digest", "expired", "signature", "conflict"
]


"""Why :class:`ApprovalRefused` refused an answer to a suspended run."""


class ApprovalRefused(JournalError):
    """An approval, denial or result that cannot be applied: ``reason`` says
    why (see :data:`Refusal`). Nothing was recorded."""

    type_name = "approval_refused"

    def __init__(self, message: str, *, reason: Refusal, call_id: str | None = None) -> None:
        super().__init__(message)
        self.reason: Refusal = reason
        self.call_id = call_id
        """The call the refused decision answers, when one is named."""
