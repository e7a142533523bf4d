"""``toolwire bridge``: serve one dialect from an upstream provider, in the foreground."""

from __future__ import annotations

import os

import click

from toolwire.cli.serve import serve_until_interrupted
from toolwire.stream.codecs.bridge import ANSWERS

__all__ = ["bridge"]


@click.command()
@click.option(
    "--serve",
    "served",
    required=True,
    type=click.Choice(list(ANSWERS)),
    help="The dialect clients speak to the bridge.",
)
@click.option(
    "--upstream",
    default=None,
    help="The upstream's dialect (openai-chat, anthropic-messages, gemini, bedrock-converse...).",
)
@click.option(
    "--base-url", default=None, help="The upstream's base URL (default: its official one)."
)
@click.option(
    "--model",
    "upstream_model",
    default=None,
    help="The upstream's model for every request (default: the model the client names).",
)
@click.option(
    "--route",
    "routes",
    multiple=True,
    metavar="MODEL=TARGET[,TARGET...]",
    help="A model routed to its own upstream, dialect:model@base_url; several are a "
    "fallback chain (repeatable; MODEL '*' routes any other model).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option(
    "--port", default=8766, show_default=True, type=click.IntRange(0, 65535), help="Port (0: any)."
)
@click.option(
    "--api-key-env",
    default=None,
    metavar="VAR",
    help="The environment variable holding the key clients must send (required off loopback).",
)
@click.option(
    "--upstream-key-env",
    default=None,
    metavar="VAR",
    help="The environment variable holding the upstream's key (default: the provider's own).",
)
@click.option(
    "--journal",
    default=None,
    help="Journal each request, as a run of one turn, in this file or PostgreSQL URL.",
)
def bridge(
    served: str,
    upstream: str | None,
    base_url: str | None,
    upstream_model: str | None,
    routes: tuple[str, ...],
    host: str,
    port: int,
    api_key_env: str | None,
    upstream_key_env: str | None,
    journal: str | None,
) -> None:
    """Serve one wire dialect from another's model: Claude Code on an
    OpenAI-compatible server, an OpenAI SDK on Claude, and so on.

    Each call reaches the client whole once the upstream finished it, its
    arguments streamed as the served dialect's own deltas; usage is
    translated. Loopback only, unless --api-key-env names a key of its own.
    """
    from toolwire.bridge import BridgeServer
    from toolwire.errors import ToolwireError
    from toolwire.journal import open_journal

    models: dict[str, object] = {}
    if upstream is not None:
        head = upstream + (f":{upstream_model}" if upstream_model else "")
        models["*"] = head + (f"@{base_url}" if base_url else "")
    for entry in routes:
        name, equals, targets = entry.partition("=")
        if not equals or not name or not targets:
            raise click.UsageError(f"--route {entry!r}: write MODEL=dialect:model@base_url")
        models[name] = targets.split(",")
    if not models:
        raise click.UsageError("give --upstream (and --base-url), or --route")
    api_key = _key(api_key_env)
    try:
        server = BridgeServer(
            models,  # type: ignore[arg-type]
            serve=served,
            host=host,
            port=port,
            api_key=api_key,
            upstream_key=_key(upstream_key_env),
            journal=open_journal(journal) if journal else None,
            log=click.echo,
        )
    except ToolwireError as exc:
        raise click.ClickException(exc.message) from exc

    def ready(running: BridgeServer) -> None:
        click.echo(f"toolwire bridge ({served}) listening on {running.base_url}")
        click.echo(f"  {served + ':':<21}{running.url_for(served)}")

    serve_until_interrupted(server, ready, host, port)


def _key(variable: str | None) -> str | None:
    if variable is None:
        return None
    value = os.environ.get(variable, "")
    if not value:
        raise click.UsageError(f"the environment variable {variable} is not set")
    return value
