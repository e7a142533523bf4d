"""The ``toolwire`` command.

Each subcommand lives in its own module and is imported only when it runs:
``toolwire --help`` lists them from the table below without importing any,
so neither it nor ``toolwire inspect`` loads the HTTP stack or the emulation
server. Adding a command is one line in :data:`COMMANDS`. The CLI uses only
toolwire's public API.

Every error is one line on stderr, ``Error: ...`` (a usage error adds where
to find help), and a reader that goes away (``toolwire demo | head``) ends
the command quietly with status 0.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click

from toolwire.errors import ToolwireError

__all__ = ["COMMANDS", "main"]

# name -> ("module:attribute" of a click command, the line `toolwire --help` shows)
COMMANDS: dict[str, tuple[str, str]] = {
    "batch": (
        "toolwire.cli.batch:batch",
        "Run an agent on every prompt of a file, on Ray or locally.",
    ),
    "bridge": (
        "toolwire.cli.bridge:bridge",
        "Serve one dialect from another's model, calls whole.",
    ),
    "chat": ("toolwire.cli.demo:chat", "Ask a real provider, with the sample tools."),
    "conform": (
        "toolwire.cli.conform:conform",
        "Check a live server's tool calls for the known quirks.",
    ),
    "demo": ("toolwire.cli.demo:demo", "The offline demo: an agent against the emulation server."),
    "inspect": (
        "toolwire.cli.inspect:inspect",
        "Show what is in a recorded provider stream, or in a cassette.",
    ),
    "mcp": ("toolwire.cli.mcp:mcp", "Serve a toolbox as an MCP server (stdio or HTTP)."),
    "proxy": (
        "toolwire.cli.proxy:proxy",
        "Relay a provider's traffic; show and record each exchange.",
    ),
    "rates": (
        "toolwire.cli.rates:rates",
        "Rate-limit holds shared on a PostgreSQL journal: list, lift.",
    ),
    "runs": (
        "toolwire.cli.answers:runs",
        "What agents did: list, show, export; answer suspended runs.",
    ),
    "serve": (
        "toolwire.cli.serve:serve",
        "Run the emulation server, or replay a cassette, on loopback.",
    ),
    "view": ("toolwire.cli.view:view", "Show the journal's runs in a browser, live, on loopback."),
}


def _is_broken_pipe(exc: BaseException) -> bool:
    # Duck-typed: BaseExceptionGroup is built in from Python 3.11 only.
    inner: Any = getattr(exc, "exceptions", None)
    if isinstance(inner, (list, tuple)):
        return any(_is_broken_pipe(e) for e in inner if isinstance(e, BaseException))
    return isinstance(exc, OSError) and exc.errno == errno.EPIPE


def _quiet_exit() -> NoReturn:
    # The reader is gone: point stdout at /dev/null so that the interpreter's
    # final flush does not complain, and end as `head` expects, with 0.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (a test runner)
        pass
    sys.exit(0)


def _error_line(exc: click.ClickException) -> str:
    message = exc.format_message()
    if isinstance(exc, click.UsageError) and exc.ctx is not None:
        message += f" (see '{exc.ctx.command_path} --help')"
    return "Error: " + " ".join(message.split())


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target[0].split(":")
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][1]) for name in sorted(COMMANDS)])

    # A broken pipe is caught here rather than in main(): click's main() turns
    # it into status 1. make_context() prints `toolwire --help`; invoke() runs
    # the rest.
    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except BaseException as exc:
            if _is_broken_pipe(exc):
                _quiet_exit()
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BaseException as exc:
            if _is_broken_pipe(exc):
                _quiet_exit()
            raise

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(1)
        except click.ClickException as exc:
            click.echo(_error_line(exc), err=True)
            sys.exit(exc.exit_code)
        except ToolwireError as exc:  # a typed error no command turned into a usage error
            click.echo("Error: " + " ".join(str(exc).split()), err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="toolwire")
def main() -> None:
    """toolwire: LLM function calling done right in streaming mode."""
