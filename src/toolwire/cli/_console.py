"""The rich console the commands print with."""

from __future__ import annotations

import errno

from rich.console import Console

__all__ = ["PipeConsole"]


class PipeConsole(Console):
    """A :class:`rich.console.Console` that lets a closed pipe end the command
    the CLI's way (quietly, status 0) instead of rich's (status 1)."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError(errno.EPIPE, "the reader of the output went away")
