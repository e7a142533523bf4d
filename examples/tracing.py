"""Trace an agent run with OpenTelemetry, offline.

Starts toolwire's emulation server on loopback, runs the weather agent
against it with a :class:`toolwire.otel.Tracer` observer, and shows the trace:

    python examples/tracing.py                      # the span tree (in-memory exporter)
    python examples/tracing.py --exporter console   # the SDK's console exporter (JSON)
    python examples/tracing.py --provider anthropic --eager --capture-content

Needs the extra: ``pip install 'toolwire[otel]'``. To send the spans to a
collector instead, give the tracer a provider with an OTLP exporter.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

import anyio
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from toolwire import Agent
from toolwire.cli.demo import DEMO_PROMPT, DEMO_SYSTEM, PROVIDERS, make_provider, sample_tools
from toolwire.otel import Tracer
from toolwire.testing import EmulationServer, Scenario

SHOWN = (
    "gen_ai.provider.name",
    "gen_ai.response.id",
    "gen_ai.response.finish_reasons",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.tool.call.id",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "toolwire.tool.eager",
    "error.type",
)


def show_tree(spans: Sequence[ReadableSpan]) -> None:
    """Print spans as an indented tree, children in start order."""
    by_parent: dict[int | None, list[ReadableSpan]] = {}
    for span in spans:
        by_parent.setdefault(span.parent.span_id if span.parent else None, []).append(span)

    def walk(parent: int | None, depth: int) -> None:
        for span in sorted(by_parent.get(parent, []), key=lambda s: s.start_time or 0):
            ms = ((span.end_time or 0) - (span.start_time or 0)) / 1e6
            status = span.status.status_code.name
            print(f"{'  ' * depth}{span.name}  [{ms:.1f} ms, {status}]")
            attributes = span.attributes or {}
            for key in SHOWN:
                if key in attributes:
                    value = attributes[key]
                    plain = list(value) if isinstance(value, tuple) else value
                    text = json.dumps(plain, ensure_ascii=False)
                    print(f"{'  ' * depth}    {key} = {text}")
            assert span.context is not None
            walk(span.context.span_id, depth + 1)

    walk(None, 0)


async def main(args: argparse.Namespace) -> None:
    provider = TracerProvider()
    memory = InMemorySpanExporter()
    exporter = ConsoleSpanExporter() if args.exporter == "console" else memory
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = Tracer(provider, capture_content=args.capture_content, agent_name="weather-agent")

    _, dialect, model = PROVIDERS[args.provider]
    with EmulationServer(Scenario.builtin("weather")) as server:
        agent = Agent(
            make_provider(args.provider, base_url=server.url_for(dialect), api_key="offline"),
            model=model,
            tools=sample_tools(),
            system=DEMO_SYSTEM,
            eager=args.eager,
            observers=[tracer],
        )
        try:
            result = await agent.run(DEMO_PROMPT)
        finally:
            await agent.aclose()
    print(f"answer: {result.output}\n")
    if args.exporter == "tree":
        show_tree(memory.get_finished_spans())
    provider.shutdown()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", choices=sorted(PROVIDERS), default="openai-chat")
    parser.add_argument("--exporter", choices=["tree", "console"], default="tree")
    parser.add_argument("--eager", action="store_true", help="start read-only tools early")
    parser.add_argument(
        "--capture-content", action="store_true", help="record arguments, results, messages"
    )
    anyio.run(main, parser.parse_args())
