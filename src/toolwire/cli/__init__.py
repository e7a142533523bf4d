"""The ``toolwire`` command.

Each subcommand lives in its own module and is registered here; the CLI uses
only toolwire's public API.
"""

from __future__ import annotations

import importlib

import click

__all__ = ["main"]

# name -> "module:attribute" of a click command, imported when the CLI starts.
_COMMANDS: dict[str, str] = {
    "inspect": "toolwire.cli.inspect:inspect",
    "serve": "toolwire.cli.serve:serve",
}


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="toolwire")
def main() -> None:
    """toolwire: LLM function calling done right in streaming mode."""


for _name, _target in _COMMANDS.items():
    _module, _attr = _target.split(":")
    main.add_command(getattr(importlib.import_module(_module), _attr), _name)
