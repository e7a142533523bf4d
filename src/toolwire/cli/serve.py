"""``toolwire serve``: run the emulation server, or replay a cassette, in the foreground."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from toolwire.testing.serving import LoopbackServer

__all__ = ["serve", "serve_until_interrupted"]

S = TypeVar("S", bound="LoopbackServer")


def serve_until_interrupted(server: S, ready: Callable[[S], None], host: str, port: int) -> None:
    """Serve in the foreground until Ctrl-C or SIGTERM; ``ready`` says where."""
    try:
        server.serve_forever(on_ready=ready)
    except OSError as exc:
        raise click.ClickException(f"cannot listen on {host}:{port}: {exc.strerror}") from exc


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
    "--cassette",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="A cassette recorded by `toolwire proxy --record`: each request gets its recorded answer.",
)
@click.option(
    "--realtime", is_flag=True, help="With --cassette: send each chunk at its recorded time."
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="FIELD",
    help="With --cassette: a request body field left out of matching (repeatable).",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow listening on a non-loopback interface.",
)
@click.option(
    "--rate-limit",
    "rate_limit",
    type=click.IntRange(1),
    default=None,
    metavar="RPM",
    help="Answer 429 (with retry-after and rate-limit headers) past this many requests per minute.",
)
def serve(
    host: str,
    port: int,
    scenario_ref: str | None,
    replay: Path | None,
    cassette: Path | None,
    realtime: bool,
    ignore: tuple[str, ...],
    allow_remote: bool,
    rate_limit: int | None = None,
) -> None:
    """Run the emulation server: OpenAI, Anthropic and Gemini wire formats on loopback.

    Any API key is accepted and none is ever logged. The built-in scenarios
    are weather (the demo's: toolwire's sample tools, in parallel) and
    quickstart (the README's: get_weather, then an answer from its city and
    condition). With --cassette, it answers each request from a recording of
    `toolwire proxy` instead.
    """
    from toolwire.errors import ToolwireError
    from toolwire.http import RateLimit
    from toolwire.stream.codecs import registered
    from toolwire.testing import EmulationServer, Scenario
    from toolwire.testing.server import is_loopback, load_scenario

    if sum(x is not None for x in (scenario_ref, replay, cassette)) > 1:
        raise click.UsageError("give one of --scenario, --replay and --cassette")
    if (realtime or ignore) and cassette is None:
        raise click.UsageError("--realtime and --ignore go with --cassette")
    if not allow_remote and not is_loopback(host):
        raise click.UsageError(
            f"refusing to listen on {host!r}: not a loopback address (use --allow-remote)"
        )
    if cassette is not None:
        _serve_cassette(cassette, realtime, ignore, host, port, allow_remote)
        return
    try:
        if replay is not None:
            scenario = Scenario.replay_file(replay)
        else:
            scenario = load_scenario(scenario_ref or "weather")
        server = EmulationServer(
            scenario,
            host=host,
            port=port,
            allow_remote=allow_remote,
            log=click.echo,
            rate_limit=RateLimit(requests_per_minute=rate_limit) if rate_limit else None,
        )
    except ToolwireError as exc:
        raise click.ClickException(exc.message) from exc

    def ready(running: EmulationServer) -> None:
        click.echo(f"toolwire emulation server ({scenario.name}) listening on {running.base_url}")
        for dialect in registered():  # each dialect the server serves, by its registration
            if dialect.encoder is not None and dialect.routes:
                click.echo(f"  {dialect.name + ':':<21}{running.url_for(dialect.name)}")

    serve_until_interrupted(server, ready, host, port)


def _serve_cassette(
    directory: Path,
    realtime: bool,
    ignore: tuple[str, ...],
    host: str,
    port: int,
    allow_remote: bool,
) -> None:
    from toolwire.errors import ToolwireError
    from toolwire.testing import CassetteServer

    try:
        server = CassetteServer(
            directory,
            realtime=realtime,
            ignore=ignore,
            log=click.echo,
            host=host,
            port=port,
            allow_remote=allow_remote,
        )
    except ToolwireError as exc:
        raise click.ClickException(exc.message) from exc

    def ready(running: CassetteServer) -> None:
        count = len(running.replay.cassette)
        click.echo(
            f"toolwire cassette server ({directory}, {count} exchanges) "
            f"listening on {running.base_url}"
        )
        for dialect, url in running.base_urls().items():
            click.echo(f"  {dialect + ':':<20}{url}")

    serve_until_interrupted(server, ready, host, port)
