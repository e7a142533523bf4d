"""``toolwire proxy``: a loopback reverse proxy that shows, and records, provider traffic."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from toolwire.cli.serve import serve_until_interrupted

if TYPE_CHECKING:
    from toolwire.testing import RecordingProxy

__all__ = ["proxy"]


@click.command()
@click.option(
    "--upstream",
    required=True,
    help="The provider's base URL, e.g. https://api.openai.com/v1 (the client's base URL "
    "becomes the proxy's root).",
)
@click.option(
    "--record",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="A cassette directory to record each exchange into (appended to).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option(
    "--port",
    default=8787,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port (0: any free port).",
)
@click.option(
    "--read-timeout",
    default=300.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds to wait for the upstream's next bytes.",
)
@click.option("--allow-remote", is_flag=True, help="Allow listening on a non-loopback interface.")
def proxy(
    upstream: str,
    record: Path | None,
    host: str,
    port: int,
    read_timeout: float,
    allow_remote: bool,
) -> None:
    """Relay requests to a provider unchanged, streaming, and print one line per exchange.

    Point any client at the proxy (an SDK's base_url, toolwire's providers,
    curl). Each line shows the dialect, model, status, time to the first
    byte, the calls and text, and the quirks the decoder noticed. With
    --record, each exchange is written to a cassette (credentials removed)
    that `toolwire serve --cassette` replays.
    """
    from toolwire.errors import ToolwireError
    from toolwire.http.transport import Timeouts
    from toolwire.testing import RecordingProxy
    from toolwire.testing.serving import is_loopback

    if not allow_remote and not is_loopback(host):
        raise click.UsageError(
            f"refusing to listen on {host!r}: not a loopback address (use --allow-remote)"
        )
    try:
        server = RecordingProxy(
            upstream,
            record=record,
            log=click.echo,
            timeouts=Timeouts(read=read_timeout),
            host=host,
            port=port,
            allow_remote=allow_remote,
        )
    except ToolwireError as exc:
        raise click.ClickException(exc.message) from exc

    def ready(running: RecordingProxy) -> None:
        click.echo(
            f"toolwire proxy listening on {running.base_url} -> {running.proxy.shown_upstream}"
        )
        if record is not None:
            click.echo(f"  recording into {record}")

    serve_until_interrupted(server, ready, host, port)
