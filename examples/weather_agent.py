"""A weather agent: two tools called in parallel, the answer streamed.

python examples/weather_agent.py            # offline, against the emulation server
OPENAI_API_KEY=... python examples/weather_agent.py   # against OpenAI
"""

from __future__ import annotations

import asyncio

from _offline import provider_for

import toolwire
from toolwire.examples import get_current_time, get_weather

SCENARIO = {
    "name": "weather-example",
    "turns": [
        {
            "tool_calls": [
                {"name": "get_weather", "arguments": {"city": "杭州"}},
                {"name": "get_current_time", "arguments": {"timezone": "Asia/Shanghai"}},
            ]
        },
        {"text": "杭州现在{result:get_weather.condition_zh},{result:get_weather.temperature}°C。"},
    ],
}


async def main() -> None:
    with provider_for(SCENARIO) as (provider, model):
        agent = toolwire.Agent(
            provider, model=model, tools=[get_weather, get_current_time], eager=True
        )
        async for event in agent.stream("杭州天气怎么样?现在几点?"):
            if isinstance(event, toolwire.TextDelta):
                print(event.text, end="", flush=True)
            elif isinstance(event, toolwire.ToolExecutionFinished):
                status = "ok" if event.result.ok else event.result.error
                print(f"[{event.call.name}: {status} in {event.result.elapsed * 1000:.0f} ms]")
            elif isinstance(event, toolwire.RunFinished):
                print(f"\n({event.result.turns} turns, {event.result.usage.total_tokens} tokens)")
        await agent.aclose()


if __name__ == "__main__":
    asyncio.run(main())
