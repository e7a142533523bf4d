"""A typed run's output is kept by its journal: resuming a finished run gives
back the same object, asked natively or by the final-result tool."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from toolwire import Agent
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio


class Invoice(BaseModel):
    number: str
    total: int


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("mode", ["native", "tool"])
@pytest.mark.parametrize("name", ["openai-chat", "bedrock"])
async def test_a_resumed_finished_run_gives_back_the_same_object(
    name: str, mode: str, tmp_path: Path
) -> None:
    answers = [{"number": "INV-1", "total": "9"}, {"number": "INV-1", "total": 9}]
    scenario = Scenario.from_dict({"turns": [{"output": a} for a in answers]})
    _, dialect, model = PROVIDERS[name]
    journal = tmp_path / "runs.sqlite3"
    with EmulationServer(scenario) as server:
        provider = make_provider(name, base_url=server.url_for(dialect), api_key="test-key")
        options: dict[str, Any] = {"output_type": Invoice, "output_mode": mode}
        agent = Agent(provider, model=model, journal=journal, **options)
        try:
            first = await agent.run("Extract.", run_id="typed-run")
        finally:
            await agent.aclose()
        again = Agent(
            make_provider(name, base_url=server.url_for(dialect), api_key="test-key"),
            model=model,
            journal=journal,
            **options,
        )
        try:
            resumed = await again.resume("typed-run")
        finally:
            await again.aclose()
        asked = len(server.requests)
    assert asked == 2 and first.output == Invoice(number="INV-1", total=9)
    assert isinstance(resumed.output, Invoice) and resumed.output == first.output
    assert resumed.outcome == "answered"
    recorded = again.journal.load_run(again.journal.find_run("typed-run"))  # type: ignore[union-attr]
    assert recorded.run.settings["output_type"] == "Invoice"
    assert recorded.run.settings["output_mode"] == mode


async def test_runs_show_prints_the_output_as_json(tmp_path: Path) -> None:
    scenario = Scenario.from_dict({"turns": [{"output": {"number": "INV-3", "total": 4}}]})
    journal = tmp_path / "runs.sqlite3"
    with EmulationServer(scenario) as server:
        url = server.url_for("anthropic-messages")
        provider = make_provider("anthropic", base_url=url, api_key="k")
        agent = Agent(provider, model="claude-sonnet-4-5", journal=journal, output_type=Invoice)
        try:
            await agent.run("Extract.", run_id="shown-run")
        finally:
            await agent.aclose()
    env = {**os.environ, "TOOLWIRE_JOURNAL": str(journal), "NO_COLOR": "1"}
    command = [sys.executable, "-m", "toolwire", "runs", "show", "shown-run"]
    shown = await anyio.run_process(command, env=env, check=False)
    assert shown.returncode == 0, shown.stderr
    assert '"number": "INV-3",\n  "total": 4' in shown.stdout.decode()
