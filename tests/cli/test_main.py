"""The ``toolwire`` command itself: lazy subcommands, one-line errors, help
for every option, and nothing heavy imported to start."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import click
import pytest
from click.testing import CliRunner

from toolwire.cli import COMMANDS, main

HEAVY = ("starlette", "uvicorn", "httpx", "anyio", "pydantic", "rich", "sqlite3")


def imported_by(args: list[str]) -> list[str]:
    """The top-level packages a fresh interpreter has imported after ``toolwire ARGS``."""
    code = textwrap.dedent(
        f"""
        import json, sys
        from toolwire.cli import main
        try:
            main({args!r})
        except SystemExit:
            pass
        print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}})), file=sys.stderr)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    last: list[str] = json.loads(proc.stderr.strip().splitlines()[-1])
    return last


@pytest.mark.parametrize(
    "args", [["--help"], ["inspect", "--help"], ["serve", "--help"], ["proxy", "--help"]]
)
def test_help_imports_nothing_heavy(args: list[str]) -> None:
    modules = imported_by(args)
    assert "toolwire" in modules and "click" in modules
    heavy = set(HEAVY) if args[0] != "serve" else {"starlette", "uvicorn", "httpx", "pydantic"}
    assert not heavy & set(modules)


def test_inspect_imports_no_http_stack(tmp_path_factory: pytest.TempPathFactory) -> None:
    body = tmp_path_factory.mktemp("inspect") / "s.sse"
    chunk = b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
    body.write_bytes(chunk + b"data: [DONE]\n\n")
    modules = imported_by(["inspect", str(body)])
    assert not {"starlette", "uvicorn", "httpx", "anyio", "pydantic"} & set(modules)


def test_help_lists_every_command_from_the_table() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for name, (_, line) in COMMANDS.items():
        assert f"{name}  " in result.output and line in result.output


def all_commands() -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    ctx = click.Context(main)
    for name in main.list_commands(ctx):
        command = main.get_command(ctx, name)
        assert command is not None, name
        found.append((name, command))
        if isinstance(command, click.Group):
            sub = click.Context(command, parent=ctx)
            for child in command.list_commands(sub):
                nested = command.get_command(sub, child)
                assert nested is not None
                found.append((f"{name} {child}", nested))
    return found


@pytest.mark.parametrize(("name", "command"), all_commands(), ids=lambda v: str(v))
def test_every_command_and_option_has_help(name: str, command: click.Command) -> None:
    assert command.help or command.short_help, name
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.help, f"toolwire {name} {param.opts[0]} has no help text"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "Error: No such command 'nope'. (see 'toolwire --help')"),
        (["serve", "--port", "99999"], "Error: Invalid value for '--port'"),
        (["serve", "--bogus"], "Error: No such option '--bogus'."),
        (["runs", "show", "x", "--journal", "/nonexistent/j.sqlite3"], "Error: no run 'x'"),
        (["inspect", "/nonexistent/body.sse"], "Error: cannot read /nonexistent/body.sse"),
    ],
)
def test_errors_are_one_line_with_one_prefix(args: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toolwire", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode != 0 and proc.stdout == ""
    assert proc.stderr.startswith(message), proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
