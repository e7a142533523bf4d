"""``toolwire conform URL``: which known quirks a live server's tool calls have.

The check itself is :func:`toolwire.testing.conform.check`; this command
builds the provider of ``--dialect`` for the server at ``URL`` (the base URL
its SDK takes: ``http://127.0.0.1:8080/v1`` for Chat Completions and
Responses, the root for Messages), runs the check and prints its report: a
table of the quirks, then one line per probe, or the report as JSON. It
exits with status 1 when no probe got an answer.
"""

from __future__ import annotations

import json
import os
from typing import Any

import click

from toolwire.stream.codecs.wire_calls import READERS

__all__ = ["conform"]


@click.command()
@click.argument("url")
@click.option(
    "--dialect",
    required=True,
    type=click.Choice(list(READERS)),
    help="The dialect the server speaks.",
)
@click.option("--model", required=True, help="The model to ask.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--tool-choice",
    default="required",
    show_default=True,
    metavar="auto|required|NAME",
    help="The tool choice of every probe (a tool's name forces that tool).",
)
@click.option(
    "--max-tokens", default=256, show_default=True, type=click.IntRange(1), help="Output limit."
)
@click.option(
    "--extra",
    default=None,
    metavar="JSON",
    help="Fields added to every request body (e.g. '{\"parallel_tool_calls\": true}').",
)
@click.option(
    "--api-key-env",
    default=None,
    metavar="VAR",
    help="The environment variable holding the server's key (local servers need none).",
)
@click.option(
    "--timeout",
    default=120.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds each probe may take.",
)
def conform(
    url: str,
    dialect: str,
    model: str,
    as_json: bool,
    tool_choice: str,
    max_tokens: int,
    extra: str | None,
    api_key_env: str | None,
    timeout: float,
) -> None:
    """Check a live server's streamed tool calls for the known quirks:
    openers merged with their first fragment, repeated objects, calls split
    across indices, missing ids, `length` for `tool_calls`, arguments as an
    object, a parallel call lost."""
    import anyio

    from toolwire.testing.conform import check

    fields = _extra(extra)
    choice: Any = tool_choice if tool_choice in ("auto", "required") else {"name": tool_choice}
    provider = _provider(dialect, url, api_key_env)

    async def main() -> Any:
        try:
            return await check(
                provider,
                model=model,
                tool_choice=choice,
                max_tokens=max_tokens,
                extra=fields,
                deadline=timeout,
            )
        finally:
            await provider.aclose()

    report = anyio.run(main)
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    else:
        _show(report)
    if all(probe.error and not probe.payloads for probe in report.probes):
        raise click.ClickException(f"no probe got an answer from {url}")


def _extra(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--extra") from None
    if not isinstance(value, dict):
        raise click.BadParameter("give a JSON object", param_hint="--extra")
    return value


def _provider(dialect: str, url: str, api_key_env: str | None) -> Any:
    import toolwire.providers as providers
    from toolwire.stream.codecs import wire_dialect

    key = ""  # none, and none read from the provider's own variables: sent only when named
    if api_key_env is not None:
        key = os.environ.get(api_key_env, "")
        if not key:
            raise click.UsageError(f"the environment variable {api_key_env} is not set")
    info = wire_dialect(dialect).provider
    assert info is not None  # each dialect with a wire reader has its provider
    cls = getattr(providers, info.class_name)
    return cls(api_key=key, base_url=url)


def _show(report: Any) -> None:
    from rich.table import Table

    from toolwire.cli._console import PipeConsole

    console = PipeConsole()
    table = Table(title=f"{report.dialect} at {report.base_url}, model {report.model}")
    for column in ("quirk", "status", "probes", "evidence", "toolwire"):
        table.add_column(column, overflow="fold")
    styles = {"seen": "bold yellow", "not seen": "green", "not checked": "dim"}
    for verdict in report.quirks:
        table.add_row(
            verdict.title,
            f"[{styles[verdict.status]}]{verdict.status}[/]",
            ", ".join(verdict.probes),
            verdict.detail,
            verdict.handling,
        )
    console.print(table)
    for probe in report.probes:
        calls = ", ".join(call["name"] for call in probe.calls) or "no calls"
        line = f"{probe.probe}: {calls}; finish {probe.wire_finish!r} ({probe.finish})"
        if probe.incomplete:
            line += f"; cut: {', '.join(probe.incomplete)}"
        if probe.invalid:
            line += f"; invalid: {', '.join(probe.invalid)}"
        if probe.error:
            line += f"; error: {probe.error}"
        console.print(line, markup=False, highlight=False, soft_wrap=True)
        for note in probe.notes:
            console.print(f"  noticed: {note}", markup=False, highlight=False, soft_wrap=True)
