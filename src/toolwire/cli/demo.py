"""``toolwire demo`` and ``toolwire chat``.

``demo`` is toolwire's main job, offline: it starts the emulation server on
loopback, runs an agent with the sample tools on the seed scenario
("杭州天气怎么样?现在几点?": two parallel calls with Chinese arguments, then
an answer built from their results) and renders it live. ``--provider``
picks the wire format the same agent speaks. ``chat`` is the same agent
against a real provider, with the key from the environment.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import click
from rich.console import Console

from toolwire.agent import Agent
from toolwire.cli._render import Renderer, usage_table
from toolwire.errors import ToolwireError
from toolwire.run import RunFinished, RunResult

__all__ = ["chat", "demo"]

DEMO_PROMPT = "杭州天气怎么样?现在几点?"
DEMO_SYSTEM = "你是一个乐于助人的助手。需要实时信息时调用工具;可以并行调用多个工具。"

# --provider name -> (provider class name in toolwire.providers, wire dialect, demo model)
PROVIDERS: dict[str, tuple[str, str, str]] = {
    "openai-chat": ("OpenAIChat", "openai-chat", "gpt-4.1-mini"),
    "openai-responses": ("OpenAIResponses", "openai-responses", "gpt-4.1-mini"),
    "anthropic": ("Anthropic", "anthropic-messages", "claude-sonnet-4-5"),
    "gemini": ("Gemini", "gemini", "gemini-2.5-flash"),
}


def make_provider(name: str, *, base_url: str | None, api_key: str | None) -> Any:
    """A provider instance by its ``--provider`` name."""
    import toolwire.providers as providers

    cls_name, _, _ = PROVIDERS[name]
    cls = getattr(providers, cls_name)
    return cls(api_key=api_key, base_url=base_url)


def sample_tools() -> list[Any]:
    """The sample tools the demo's agent gets."""
    from toolwire.examples import calculator, get_current_time, get_weather

    return [get_weather, get_current_time, calculator]


async def _drive(agent: Agent, prompt: str, renderer: Renderer | None) -> RunResult:
    result: RunResult | None = None
    async for event in agent.stream(prompt):
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
    console.print()
    console.rule("answer")
    console.print(result.output or f"(no answer: {result.outcome})", highlight=False)
    console.print(usage_table(result))
    return result


@click.command("demo")
@click.option(
    "--provider",
    type=click.Choice(sorted(PROVIDERS)),
    default="openai-chat",
    show_default=True,
    help="The wire format the agent and the emulated model speak.",
)
@click.option("--prompt", default=DEMO_PROMPT, show_default=True, help="The user's question.")
@click.option("--json", "as_json", is_flag=True, help="Print the run's record as JSON.")
@click.option(
    "--eager/--no-eager",
    default=True,
    show_default=True,
    help="Start read-only tools while the model streams.",
)
def demo(provider: str, prompt: str, as_json: bool, eager: bool) -> None:
    """Run an agent with the sample tools against the local emulation server."""
    from toolwire.testing import EmulationServer, Scenario

    console = Console(stderr=False, soft_wrap=True)
    _, api, model = PROVIDERS[provider]
    with EmulationServer(Scenario.builtin("weather")) as server:
        agent = Agent(
            make_provider(provider, base_url=server.url_for(api), api_key="emulated-key"),
            model=model,
            tools=sample_tools(),
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
    if not result.ok:
        sys.exit(1)


@click.command("chat")
@click.option("--provider", type=click.Choice(sorted(PROVIDERS)), required=True)
@click.option("--model", required=True, help="The provider's model id.")
@click.option(
    "--base-url", default=None, help="For OpenAI-compatible servers (DashScope, vLLM...)."
)
@click.option("--system", default=None, help="The system prompt.")
@click.option("--json", "as_json", is_flag=True, help="Print the run's record as JSON.")
@click.argument("prompt", required=False)
def chat(
    provider: str,
    model: str,
    base_url: str | None,
    system: str | None,
    as_json: bool,
    prompt: str | None,
) -> None:
    """Ask a real provider, with the sample tools (key from the environment)."""
    console = Console(soft_wrap=True)
    try:
        agent = Agent(
            make_provider(provider, base_url=base_url, api_key=None),
            model=model,
            tools=sample_tools(),
            system=system,
        )
        question = prompt if prompt is not None else click.prompt("you")
        result = run_and_show(agent, question, as_json=as_json, console=console)
    except ToolwireError as exc:
        raise click.ClickException(f"{exc.type_name}: {exc.message}") from None
    if not result.ok:
        sys.exit(1)
