"""``toolwire view``: the journal in a browser on this machine."""

from __future__ import annotations

import getpass
import os
from pathlib import Path

import click

from toolwire.http.urls import url_where
from toolwire.journal import KEY_VARIABLE, default_journal, is_postgres_url, resolve_approval_key
from toolwire.view import serve

__all__ = ["view"]


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no name for this uid
        return f"uid {os.getuid()}"


@click.command("view")
@click.option(
    "--journal",
    "journal_path",
    default=None,
    help="The journal file or postgresql:// URL "
    "(default: $TOOLWIRE_JOURNAL or the user state directory).",
)
@click.option("--port", default=0, show_default=True, help="The port (0: any free one).")
@click.option(
    "--open",
    "open_browser",
    is_flag=True,
    help="Open the page in a browser (through a private file holding a one-time code: "
    "the token is never on its command line).",
)
@click.option(
    "--as",
    "principal",
    default=None,
    help="Who approvals given in the page are journaled as (default: USER (toolwire view)).",
)
@click.option(
    "--cassette",
    "cassettes",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="A cassette of the runs' streams (toolwire proxy --record DIR): the run pages "
    "replay how each call's arguments grew. Repeatable.",
)
def view(
    journal_path: str | None,
    port: int,
    open_browser: bool,
    principal: str | None,
    cassettes: tuple[Path, ...],
) -> None:
    """Show the journal's runs in a browser, live, on 127.0.0.1.

    Prints the URL to open: it carries a random access token, and the page
    answers no request without it. The journal is read, never written, but
    for one thing: approving or denying a call a suspended run waits on."""
    chosen: Path | str | None = default_journal()
    if journal_path is not None:
        chosen = journal_path if is_postgres_url(journal_path) else Path(journal_path)
    if chosen is None:
        raise click.UsageError("journaling is off (TOOLWIRE_JOURNAL=off): give --journal PATH")
    if not 0 <= port <= 65535:
        raise click.BadParameter("a port is 0 to 65535", param_hint="--port")

    key = resolve_approval_key()

    def announce(url: str) -> None:
        where = url_where(chosen) if isinstance(chosen, str) else chosen
        click.echo(f"toolwire view of {where}: open {url}  (Ctrl-C stops it)", err=True)
        if key is None:
            click.echo(
                f"note: ${KEY_VARIABLE} is not set: approvals given in the viewer are recorded "
                "unsigned, and a resume with an approval key refuses them",
                err=True,
            )
        click.echo(url)

    try:
        serve(
            chosen if isinstance(chosen, str) else chosen.expanduser(),
            port=port,
            open_browser=open_browser,
            announce=announce,
            principal=principal if principal is not None else _user() + " (toolwire view)",
            approval_key=key,
            cassettes=tuple(c.expanduser() for c in cassettes),
        )
    except OSError as exc:
        raise click.ClickException(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from exc
