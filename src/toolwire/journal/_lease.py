"""One process at a time per run: the lease a run is run or resumed under.

Theory of operation: the lease of a run is an exclusive ``fcntl`` lock on one
byte of the journal's lock file (``<journal>-lock``), at an offset derived
from the run id. The kernel releases it when its process ends, however it
ends (``kill -9`` included): a crashed run holds nothing, and its successor
takes the lease at once, with no staleness to guess. A second live process
fails to take it and gets :class:`~toolwire.journal.RunLeased`; so does a
second task of the same process, which a set of held run ids tells apart
(``fcntl`` locks do not conflict within a process).

``fcntl`` locks belong to a process and a file: closing *any* descriptor of
the file drops them all, so each process opens the lock file once, keeps it
open, and shares it between every journal object on that path. A forked child
inherits no lock, and opens its own descriptor. Without ``fcntl`` (Windows),
and for in-memory journals, leases hold within the process only.
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from toolwire.journal._records import JournalError, RunLeased

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["hold_lease", "lease_held", "lock_path"]

_registry_lock = threading.Lock()


@dataclass
class _LockFile:
    pid: int
    fd: int | None
    held: set[str] = field(default_factory=set[str])


_files: dict[str, _LockFile] = {}


def lock_path(journal_path: str) -> str:
    """The lock file of a journal file."""
    return journal_path + "-lock"


def _offset(run_id: str) -> int:
    # 48 bits of a hash: two runs share a byte with negligible probability.
    return int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:6], "big")


def _lock_file(journal_path: str) -> _LockFile:
    """This process's lock file of a journal (opened once, kept open)."""
    entry = _files.get(journal_path)
    if entry is not None and entry.pid == os.getpid():
        return entry
    fd: int | None = None
    if fcntl is not None and journal_path != ":memory:":
        try:
            fd = os.open(lock_path(journal_path), os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise JournalError(f"cannot open the journal's lock file: {exc}") from exc
    entry = _LockFile(os.getpid(), fd)
    _files[journal_path] = entry
    return entry


@contextmanager
def hold_lease(journal_path: str, run_id: str) -> Iterator[None]:
    """Hold the lease of ``run_id`` in the journal at ``journal_path`` for the
    duration of the block.

    Raises:
        RunLeased: another live process, or another task of this one, holds it.
        JournalError: the lock file cannot be opened.
    """
    with _registry_lock:
        entry = _lock_file(journal_path)
        if run_id in entry.held:
            raise RunLeased(
                f"run {run_id!r} is already running in this process; one run or resume at a time"
            )
        if entry.fd is not None:
            assert fcntl is not None
            try:
                fcntl.lockf(entry.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _offset(run_id))
            except OSError:
                raise RunLeased(
                    f"run {run_id!r} is running in another process: one process at a time "
                    "may run or resume it (a process that died holds nothing; resume it "
                    "once the other has ended)"
                ) from None
        entry.held.add(run_id)
    try:
        yield
    finally:
        with _registry_lock:
            entry.held.discard(run_id)
            if entry.fd is not None and entry.pid == os.getpid():
                assert fcntl is not None
                fcntl.lockf(entry.fd, fcntl.LOCK_UN, 1, _offset(run_id))


def lease_held(journal_path: str, run_id: str) -> bool:
    """Whether a live process (this one included) may hold the lease of
    ``run_id``: a test (``F_GETLK``) that takes nothing, so it never stands
    in a run's way. Where the test is not available (not Linux), another
    process's lease is assumed held."""
    with _registry_lock:
        entry = _lock_file(journal_path)
        if run_id in entry.held:
            return True
        if entry.fd is None:
            return False
        if fcntl is None or not sys.platform.startswith("linux"):  # pragma: no cover
            return True
        # struct flock on Linux: l_type, l_whence, l_start, l_len, l_pid.
        query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, _offset(run_id), 1, 0)
        answer = fcntl.fcntl(entry.fd, fcntl.F_GETLK, query)
        kind: int = struct.unpack("hhqqi", answer)[0]
        return kind != fcntl.F_UNLCK
