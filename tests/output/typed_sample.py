"""Checked by mypy --strict in test_output_types.py (not run): what a type
checker infers of typed runs."""

from __future__ import annotations

from pydantic import BaseModel
from typing_extensions import assert_type

from toolwire import Agent, OpenAIChat, RunResult


class Invoice(BaseModel):
    number: str
    total: int


async def main() -> None:
    provider = OpenAIChat(api_key="k", base_url="http://127.0.0.1:1/v1")
    agent = Agent(provider, model="gpt-4.1-mini", output_type=Invoice)
    assert_type(agent, Agent[Invoice])
    result = await agent.run("Extract the invoice.")
    assert_type(result, RunResult[Invoice])
    assert_type(result.output, Invoice)
    plain = Agent(provider, model="gpt-4.1-mini")
    assert_type(await plain.run("Hi"), RunResult[str])
    assert_type(plain.run_sync("Hi").output, str)
    assert_type(await plain.run("Hi", output_type=Invoice), RunResult[Invoice])
    assert_type(agent.run_sync("Hi", output_type=list[Invoice]).output, list[Invoice])
