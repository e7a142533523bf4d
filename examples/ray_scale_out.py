"""Scale out with Ray, offline: tool calls as Ray tasks, then a batch of agent
runs across a local Ray instance, against toolwire's emulation server.

    pip install 'toolwire[ray]'
    python examples/ray_scale_out.py [results.jsonl]

Run it twice with the same results file: the second batch resumes and skips
the prompts already answered. To use a real cluster instead of the local
instance, set RAY_ADDRESS (or call ray.init(address=...)) and make toolwire
and this module importable on the workers (see docs/ray.md).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

# A single-node Ray on 127.0.0.1 that reports nothing anywhere; read by Ray
# at import, so set before the first import.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import anyio
import ray

from toolwire import Agent, OpenAIChat, RayExecutor, Toolbox, ToolCall, run_batch
from toolwire.examples import calculator, get_current_time, get_weather
from toolwire.testing import EmulationServer, Scenario

SCENARIO = Scenario.from_dict(
    {
        "turns": [
            {
                "tool_calls": [
                    {"name": "get_weather", "arguments": {"city": "杭州"}},
                    {"name": "get_current_time", "arguments": {"timezone": "Asia/Shanghai"}},
                ]
            },
            {"text": "杭州{result:get_weather.condition_zh},{result:get_current_time.time}。"},
        ]
    }
)


@dataclass(frozen=True)
class WeatherAgent:
    """The agent factory: picklable (a URL), it builds the agent in the worker,
    whose tools run on that worker too."""

    base_url: str

    def __call__(self) -> Agent:
        provider = OpenAIChat(api_key="offline", base_url=self.base_url)
        return Agent(provider, model="gpt-4.1-mini", tools=[get_weather, get_current_time])


async def main(results_path: str) -> None:
    # 1. One batch of tool calls, each one a Ray task.
    toolbox = Toolbox([get_weather, calculator], runner=RayExecutor())
    results = await toolbox.execute(
        [
            ToolCall(id="w", name="get_weather", arguments={"city": "Paris"}),
            ToolCall(id="c", name="calculator", arguments={"expression": "2 ** 10 + 1"}),
            ToolCall(id="bad", name="calculator", arguments={}),
        ]
    )
    for result in results:
        print(f"{result.call_id}: ok={result.ok} {result.message[:70]!r}")

    # 2. A dataset of prompts, one agent run per Ray task, two at a time.
    prompts = [f"第{i}个问题:杭州天气怎么样?现在几点?" for i in range(8)]
    async with EmulationServer(SCENARIO) as server:
        summary = await run_batch(
            prompts,
            WeatherAgent(server.url_for("openai-chat")),
            concurrency=2,
            results_path=results_path,
        )
    print(
        f"{len(summary.records)} runs ({summary.answered} answered, {summary.errors} failed), "
        f"{summary.skipped} skipped; results in {results_path}"
    )


if __name__ == "__main__":
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "ray_results.jsonl")
    finally:
        ray.shutdown()
