"""The ``toolwire`` command.

Each subcommand lives in its own module and is imported only when it runs,
so ``toolwire inspect`` never loads the HTTP stack; the CLI uses only
toolwire's public API.
"""

from __future__ import annotations

import importlib

import click

__all__ = ["main"]

# name -> "module:attribute" of a click command.
_COMMANDS: dict[str, str] = {
    "batch": "toolwire.cli.batch:batch",
    "chat": "toolwire.cli.demo:chat",
    "demo": "toolwire.cli.demo:demo",
    "inspect": "toolwire.cli.inspect:inspect",
    "proxy": "toolwire.cli.proxy:proxy",
    "runs": "toolwire.cli.runs:runs",
    "serve": "toolwire.cli.serve:serve",
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attr = target.split(":")
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="toolwire")
def main() -> None:
    """toolwire: LLM function calling done right in streaming mode."""
