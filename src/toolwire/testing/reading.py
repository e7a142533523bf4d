"""Reading a file a user named, with bounds.

A path on a command line may name anything: ``/dev/zero`` (endless), a FIFO
(opening it waits for a writer that may never come), a directory, a file of
gigabytes. :func:`read_file` opens without blocking, refuses what is not a
regular file unless the caller allows it, and reads at most ``limit`` bytes,
so each of those ends in one clear :class:`~toolwire.errors.UsageError`
(or the caller's subclass of it).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from toolwire.errors import UsageError

__all__ = ["MAX_FILE_BYTES", "open_file", "read_file", "regular_file"]

MAX_FILE_BYTES = 256 * 1024 * 1024
"""The default bound on a file read whole (a recording, a scenario, prompts)."""


def _named(what: str, path: str | Path) -> str:
    return f"{what} {path}" if what else str(path)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def regular_file(path: str | Path, *, what: str, error: type[UsageError] = UsageError) -> None:
    """Raise ``error`` unless ``path`` is missing or a regular file (a
    symbolic link counts as what it points to)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise error(f"cannot read {_named(what, path)}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise error(f"{_named(what, path)} is {_kind(mode)}, not a regular file")


def open_file(
    path: str | Path, *, what: str, links: bool = True, error: type[UsageError] = UsageError
) -> BinaryIO:
    """``path`` opened for reading without waiting (a FIFO opens at once);
    ``links=False`` refuses a symbolic link."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not links:
            raise error(f"{_named(what, path)} is a symbolic link") from None
        raise error(f"cannot read {_named(what, path)}: {exc.strerror or exc}") from None
    return os.fdopen(fd, "rb")


def read_file(
    path: str | Path,
    *,
    what: str,
    limit: int = MAX_FILE_BYTES,
    special: bool = False,
    links: bool = True,
    error: type[UsageError] = UsageError,
) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them.

    Args:
        path: the file.
        what: what the file is, for messages ("scenario", "prompts file").
        limit: past this many bytes the file is refused.
        special: allow a FIFO or a character device (read up to ``limit``).
        links: follow a symbolic link (``False``: refuse one).
        error: the error class raised.

    Raises:
        UsageError: (``error``) the file is missing or unreadable, not a
            regular file (unless ``special``), or larger than ``limit``.
    """
    with open_file(path, what=what, links=links, error=error) as f:
        fd = f.fileno()
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode) and not (special and (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode))):
            raise error(f"{_named(what, path)} is {_kind(mode)}, not a regular file")
        if not stat.S_ISREG(mode):
            os.set_blocking(fd, True)
        try:
            data = f.read(limit + 1)
        except OSError as exc:
            raise error(f"cannot read {_named(what, path)}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise error(f"{_named(what, path)} is larger than {limit} bytes")
    return data
