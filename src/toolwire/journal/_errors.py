"""The journal's errors, which live in :mod:`toolwire.errors` with every
other error of toolwire (its one tree); named here too for the journal's
modules, which import them from here."""

from __future__ import annotations

from toolwire.errors import BlobTooLarge, JournalError, LeaseLost, RunLeased

__all__ = ["BlobTooLarge", "JournalError", "LeaseLost", "RunLeased"]
