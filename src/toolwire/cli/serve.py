"""``toolwire serve``: run the emulation server in the foreground."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["serve"]


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option(
    "--port",
    default=8765,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port (0: any free port).",
)
@click.option(
    "--scenario",
    "scenario_ref",
    default=None,
    help="A built-in scenario's name, or a scenario file in JSON or YAML (told apart by "
    "content); default: weather.",
)
@click.option(
    "--replay",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="A recorded response body (.sse, JSON...) sent verbatim to every request.",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow listening on a non-loopback interface.",
)
def serve(
    host: str, port: int, scenario_ref: str | None, replay: Path | None, allow_remote: bool
) -> None:
    """Run the emulation server: OpenAI, Anthropic and Gemini wire formats on loopback.

    Any API key is accepted and none is ever logged. The built-in scenarios
    are weather (the demo's: toolwire's sample tools, in parallel) and
    quickstart (the README's: get_weather, then an answer from its city and
    condition).
    """
    from toolwire.errors import ToolwireError
    from toolwire.testing import EmulationServer, Scenario
    from toolwire.testing.server import is_loopback, load_scenario

    if scenario_ref is not None and replay is not None:
        raise click.UsageError("give --scenario or --replay, not both")
    if not allow_remote and not is_loopback(host):
        raise click.UsageError(
            f"refusing to listen on {host!r}: not a loopback address (use --allow-remote)"
        )
    try:
        if replay is not None:
            scenario = Scenario.replay_file(replay)
        else:
            scenario = load_scenario(scenario_ref or "weather")
        server = EmulationServer(
            scenario, host=host, port=port, allow_remote=allow_remote, log=click.echo
        )
    except ToolwireError as exc:
        raise click.ClickException(exc.message) from exc

    def ready(running: EmulationServer) -> None:
        click.echo(f"toolwire emulation server ({scenario.name}) listening on {running.base_url}")
        click.echo(f"  OpenAI (chat, responses): {running.url_for('openai-chat')}")
        click.echo(f"  Anthropic:                {running.url_for('anthropic-messages')}")
        click.echo(f"  Gemini:                   {running.url_for('gemini')}")

    try:
        server.serve_forever(on_ready=ready)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror}") from exc
