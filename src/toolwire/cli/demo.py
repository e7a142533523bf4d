"""``toolwire demo`` and ``toolwire chat``.

``demo`` is toolwire's main job, offline: it starts the emulation server on
loopback, runs an agent with the sample tools on the seed scenario
("杭州天气怎么样?现在几点?": two parallel calls with Chinese arguments, then
an answer built from their results) and renders it live. ``--dialect``
picks the wire format the same agent speaks (``--provider``, the provider
that speaks it). ``chat`` is the same agent against a real provider, with
the key from the environment.
"""

from __future__ import annotations

import contextlib
import json
import sys
from datetime import datetime
from typing import Any

import anyio
import click
from rich.console import Console

from toolwire.agent import Agent
from toolwire.cli._console import PipeConsole
from toolwire.cli._render import Renderer, usage_line, usage_table
from toolwire.errors import ToolwireError, TransportTimeout
from toolwire.http.urls import url_where
from toolwire.journal import default_journal
from toolwire.run import RunFinished, RunResult
from toolwire.stream.codecs import registered

__all__ = ["chat", "demo"]

DEMO_PROMPT = "杭州天气怎么样?现在几点?"
DEMO_SYSTEM = "你是一个乐于助人的助手。需要实时信息时调用工具;可以并行调用多个工具。"

PROVIDERS: dict[str, tuple[str, str, str]] = {
    d.provider.names[0]: (d.provider.class_name, d.name, d.provider.demo_model)
    for d in registered()
    if d.provider is not None
}
"""--provider name -> (provider class name in toolwire.providers, wire dialect,
demo model): each dialect's ``provider`` in the registry."""
_DIALECT_PROVIDERS = {dialect: name for name, (_, dialect, _) in PROVIDERS.items()}
"""--dialect -> the --provider that speaks it."""


def make_provider(
    name: str, *, base_url: str | None, api_key: str | None, timeout: Any = None
) -> Any:
    """A provider instance by its ``--provider`` name."""
    import toolwire.providers as providers

    cls_name, _, _ = PROVIDERS[name]
    cls = getattr(providers, cls_name)
    return cls(api_key=api_key, base_url=base_url, timeout=timeout)


def sample_tools(now: datetime | None = None) -> list[Any]:
    """The sample tools the demo's agent gets; their clock stands at ``now``
    when one is given."""
    from toolwire.examples import calculator, clock_tool, get_current_time, get_weather

    clock = get_current_time if now is None else clock_tool(lambda: now)
    return [get_weather, clock, calculator]


def _instant(_ctx: click.Context, _param: click.Parameter, value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        # Python 3.10's fromisoformat does not read a "Z" suffix.
        instant = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO 8601 date and time") from None
    if instant.tzinfo is None:
        raise click.BadParameter("give a UTC offset, e.g. 2026-11-25T09:30:00+08:00 or ...Z")
    return instant


async def _drive(agent: Agent, prompt: str, renderer: Renderer | None) -> RunResult:
    result: RunResult | None = None
    # Closed here, in this task, whatever happens (a reader gone from the
    # pipe included): the run and its tools are cancelled cleanly.
    async with contextlib.aclosing(agent.stream(prompt)) as events:
        async for event in events:
            if renderer is not None:
                renderer.handle(event)
            if isinstance(event, RunFinished):
                result = event.result
    assert result is not None
    return result


def run_and_show(agent: Agent, prompt: str, *, as_json: bool, console: Console) -> RunResult:
    """Run the agent, rendering it (or printing its JSON record)."""

    async def main() -> RunResult:
        try:
            if as_json:
                return await _drive(agent, prompt, None)
            with Renderer(console) as renderer:
                return await _drive(agent, prompt, renderer)
        finally:
            await agent.aclose()

    result = anyio.run(main)
    if as_json:
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False))
        return result
    if console.is_terminal:
        console.print()
        console.rule("answer")
        console.print(result.output or f"(no answer: {result.outcome})", highlight=False)
        console.print(usage_table(result))
    else:
        # The answer has streamed already, line by line: only what is new.
        if not result.output:
            console.print(f"(no answer: {result.outcome})", highlight=False)
        console.print(usage_line(result), highlight=False)
    return result


@click.command("demo")
@click.option(
    "--dialect",
    type=click.Choice(sorted(_DIALECT_PROVIDERS)),
    default=None,
    help="The wire format the agent and the emulated model speak [default: openai-chat].",
)
@click.option(
    "--provider",
    type=click.Choice(sorted(PROVIDERS)),
    default=None,
    help="The provider the agent uses; the emulated model speaks its dialect.",
)
@click.option("--prompt", default=DEMO_PROMPT, show_default=True, help="The user's question.")
@click.option("--json", "as_json", is_flag=True, help="Print the run's record as JSON.")
@click.option(
    "--eager/--no-eager",
    default=True,
    show_default=True,
    help="Start read-only tools while the model streams.",
)
@click.option(
    "--now",
    callback=_instant,
    metavar="ISO-8601",
    help="Run the sample clock at this instant (with a UTC offset): the same output every time.",
)
def demo(
    dialect: str | None,
    provider: str | None,
    prompt: str,
    as_json: bool,
    eager: bool,
    now: datetime | None,
) -> None:
    """Run an agent with the sample tools against the local emulation server."""
    from toolwire.testing import EmulationServer, Scenario

    provider = _demo_provider(dialect, provider)
    console = PipeConsole(soft_wrap=True)
    _, dialect, model = PROVIDERS[provider]
    with EmulationServer(Scenario.builtin("weather")) as server:
        agent = Agent(
            make_provider(provider, base_url=server.url_for(dialect), api_key="emulated-key"),
            model=model,
            tools=sample_tools(now),
            system=DEMO_SYSTEM,
            eager=eager,
            max_turns=4,
        )
        if not as_json:
            console.print(
                f"[dim]emulated {provider} server at {server.base_url}; "
                f"model {model}; offline[/dim]",
                highlight=False,
            )
            console.print(f"[bold]user:[/bold] {prompt}", highlight=False)
        try:
            result = run_and_show(agent, prompt, as_json=as_json, console=console)
        except ToolwireError as exc:
            raise click.ClickException(f"{exc.type_name}: {exc.message}") from None
    if not as_json:
        console.print(where_it_went(result.run_id), highlight=False)
    if not result.ok:
        sys.exit(1)


def where_it_went(run_id: str) -> str:
    """The closing lines of the demo: where its run was recorded, and the
    commands that show it (nothing to show when journaling is off)."""
    where = default_journal()
    if where is None:
        return "[dim]not journaled ($TOOLWIRE_JOURNAL is off)[/dim]"
    shown = url_where(where) if isinstance(where, str) else str(where)
    return (
        f"[dim]run {run_id} recorded in {shown}; to look at it:[/dim]\n"
        "  toolwire runs show last    [dim]its timeline: turns, tool calls, usage[/dim]\n"
        "  toolwire view --open       [dim]every run, in your browser[/dim]"
    )


def _demo_provider(dialect: str | None, provider: str | None) -> str:
    """The demo's provider: the one given, or the one that speaks ``dialect``."""
    if dialect is None:
        return provider or "openai-chat"
    chosen = _DIALECT_PROVIDERS[dialect]
    if provider is not None and provider != chosen:
        raise click.UsageError(
            f"--provider {provider} speaks {PROVIDERS[provider][1]}, not --dialect {dialect}: "
            "give one of them"
        )
    return chosen


@click.command("chat")
@click.option(
    "--provider",
    type=click.Choice(sorted(PROVIDERS)),
    required=True,
    help="The provider to talk to (each speaks its own dialect; openai-chat also "
    "serves OpenAI-compatible servers).",
)
@click.option("--model", required=True, help="The provider's model id.")
@click.option(
    "--base-url",
    default=None,
    help="The server's base URL (default: the provider's *_BASE_URL variable, else its "
    "official one); for OpenAI-compatible servers (DashScope, vLLM...).",
)
@click.option("--system", default=None, help="The system prompt.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=120.0,
    show_default=True,
    help="Seconds to wait for each answer of the model, retries included.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the run's record as JSON.")
@click.argument("prompt", required=False)
def chat(
    provider: str,
    model: str,
    base_url: str | None,
    system: str | None,
    timeout: float,
    as_json: bool,
    prompt: str | None,
) -> None:
    """Ask a real provider, with the sample tools (key from the environment).

    PROMPT is the question; without it, it is asked for on a terminal, or
    read from stdin.
    """
    from toolwire.http.transport import Timeouts

    question = prompt if prompt is not None else _ask()
    if not question.strip():
        raise click.UsageError("the prompt is empty")
    limits = Timeouts(
        connect=min(10.0, timeout), read=timeout, write=min(60.0, timeout), total=timeout
    )
    console = PipeConsole(soft_wrap=True)
    try:
        agent = Agent(
            make_provider(provider, base_url=base_url, api_key=None, timeout=limits),
            model=model,
            tools=sample_tools(),
            system=system,
        )
        result = run_and_show(agent, question, as_json=as_json, console=console)
    except TransportTimeout as exc:
        raise click.ClickException(
            f"{exc.type_name}: {exc.message}; --timeout {timeout:g} to wait longer"
        ) from None
    except ToolwireError as exc:
        raise click.ClickException(f"{exc.type_name}: {exc.message}") from None
    if not result.ok:
        sys.exit(1)


def _ask() -> str:
    stdin = sys.stdin
    if stdin.isatty():
        # On stderr: stdout is the answer's (or the JSON record's) alone.
        answer: str = click.prompt("you", err=True)
        return answer
    return stdin.read()
