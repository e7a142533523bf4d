"""One process at a time per run: the lease a run is run or resumed under.

Theory of operation: the lease of a run is an exclusive lock on one byte of
the journal file itself, at an offset derived from the run id (far above the
bytes SQLite locks). A lock is on the file, not on a name: every spelling of
the journal's path, a symbolic link and a hard link all meet the same lock,
and the journal's identity (device and inode, read once when it is opened)
keys the process's own records. The kernel releases the lock when its
process ends, however it ends (``kill -9`` included): a crashed run holds
nothing, and its successor takes the lease at once, with no staleness to
guess. A second live process fails to take it and gets
:class:`~toolwire.journal.RunLeased`; so does a second task of the same
process, which a set of held run ids tells apart.

The locks are open-file-description locks (Linux's ``F_OFD_SETLK``): closing
another descriptor of the file (SQLite's) does not drop them. Each process
opens the journal once for its leases and keeps that descriptor open; a
forked child inherits no lease and opens its own. Where such locks do not
exist, a classic ``fcntl`` lock on ``<journal>-lock`` (the journal's path
with links resolved) stands in; without ``fcntl`` (Windows), and for
in-memory journals, leases hold within the process only.
"""

from __future__ import annotations

import hashlib
import os
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from toolwire.journal._records import JournalError, RunLeased

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["file_identity", "hold_lease", "lease_held", "lock_path"]

_registry_lock = threading.Lock()
_OFD_SETLK: int | None = getattr(fcntl, "F_OFD_SETLK", None) if fcntl is not None else None
_BASE = 1 << 42
"""Lease bytes start here, far from the bytes SQLite locks (from 1 GiB)."""

Identity = tuple[int, int] | str
"""A journal file's device and inode, or a name for an in-memory journal."""


@dataclass
class _LockFile:
    pid: int
    fd: int | None
    ofd: bool
    held: set[str] = field(default_factory=set[str])


_files: dict[Identity, _LockFile] = {}


def file_identity(path: str) -> tuple[int, int]:
    """The device and inode of the file at ``path`` (links followed)."""
    st = os.stat(path)
    return st.st_dev, st.st_ino


def lock_path(journal_path: str) -> str:
    """The lock file of a journal file, where open-file-description locks do
    not exist: its path with links resolved, plus ``-lock``."""
    return os.path.realpath(journal_path) + "-lock"


def _offset(run_id: str) -> int:
    # 48 bits of a hash: two runs share a byte with negligible probability.
    return _BASE + int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:6], "big")


def _lock_file(journal_path: str, identity: Identity) -> _LockFile:
    """This process's descriptor for a journal's leases (opened once, kept open)."""
    entry = _files.get(identity)
    if entry is not None and entry.pid == os.getpid():
        return entry
    fd: int | None = None
    ofd = _OFD_SETLK is not None
    if fcntl is not None and not isinstance(identity, str):
        path = journal_path if ofd else lock_path(journal_path)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        except OSError as exc:
            raise JournalError(f"cannot open the journal for its leases: {exc}") from exc
        if ofd and (os.fstat(fd).st_dev, os.fstat(fd).st_ino) != identity:
            os.close(fd)  # the path names another file now: lock the one opened
            raise JournalError(f"the journal {journal_path} was replaced while it was open")
    entry = _LockFile(os.getpid(), fd, ofd)
    _files[identity] = entry
    return entry


def _lock(entry: _LockFile, run_id: str, *, take: bool) -> None:
    """Take (without waiting) or release the byte of ``run_id``."""
    assert fcntl is not None and entry.fd is not None
    if entry.ofd:
        assert _OFD_SETLK is not None
        kind = fcntl.F_WRLCK if take else fcntl.F_UNLCK
        # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks)
        fcntl.fcntl(entry.fd, _OFD_SETLK, struct.pack("hhqqi", kind, 0, _offset(run_id), 1, 0))
    elif take:
        fcntl.lockf(entry.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _offset(run_id))
    else:
        fcntl.lockf(entry.fd, fcntl.LOCK_UN, 1, _offset(run_id))


@contextmanager
def hold_lease(
    journal_path: str, run_id: str, *, identity: Identity | None = None
) -> Iterator[None]:
    """Hold the lease of ``run_id`` in the journal at ``journal_path`` for the
    duration of the block.

    Args:
        journal_path: the journal file (``":memory:..."`` for none).
        run_id: the run.
        identity: the journal's :func:`file_identity`, read when it was
            opened (read now when not given).

    Raises:
        RunLeased: another live process, or another task of this one, holds it.
        JournalError: the journal cannot be opened for its leases.
    """
    if identity is None:
        identity = (
            journal_path if journal_path.startswith(":memory:") else file_identity(journal_path)
        )
    with _registry_lock:
        entry = _lock_file(journal_path, identity)
        if run_id in entry.held:
            raise RunLeased(
                f"run {run_id!r} is already running in this process; one run or resume at a time"
            )
        if entry.fd is not None:
            try:
                _lock(entry, run_id, take=True)
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
                _lock(entry, run_id, take=False)


_OFD_GETLK: int | None = getattr(fcntl, "F_OFD_GETLK", None) if fcntl is not None else None


def lease_held(journal_path: str, run_id: str, *, identity: Identity | None = None) -> bool:
    """Whether a live process (this one included) may hold the lease of
    ``run_id``: a test (``F_OFD_GETLK``) that takes nothing, so it never
    stands in a run's way. Where the test is not available (not Linux),
    another process's lease is assumed held."""
    if identity is None:
        identity = (
            journal_path if journal_path.startswith(":memory:") else file_identity(journal_path)
        )
    with _registry_lock:
        entry = _lock_file(journal_path, identity)
        if run_id in entry.held:
            return True
        if entry.fd is None:
            return False
        if fcntl is None or _OFD_GETLK is None or not entry.ofd:  # pragma: no cover
            return True
        # struct flock: l_type, l_whence, l_start, l_len, l_pid (0 for OFD locks)
        query = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, _offset(run_id), 1, 0)
        answer = fcntl.fcntl(entry.fd, _OFD_GETLK, query)
        kind: int = struct.unpack("hhqqi", answer)[0]
        return kind != fcntl.F_UNLCK
