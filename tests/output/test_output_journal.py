"""A typed run's output is kept by its journal: resuming a finished run gives
back the same object, asked natively or by the final-result tool."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from tests.journal._support import CrashAt, expect_crash
from toolwire import Agent, OutputInvalid, tool
from toolwire.cli.demo import PROVIDERS, make_provider
from toolwire.errors import UsageError
from toolwire.journal import JournalObserver, open_journal
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


FEEDBACK = "Your answer did not validate"


async def crash_after_the_refusal(
    server: EmulationServer, journal_path: Path, hook: str, mode: str
) -> None:
    """Run until the model is asked a second time, and die at ``hook``
    (``model_request``: before that request is recorded; ``model_response``:
    before its answer is)."""
    journal = open_journal(journal_path)
    crash = CrashAt(hook, nth=2)
    provider = make_provider("openai-chat", base_url=server.url_for("openai-chat"), api_key="k")
    agent = Agent(
        provider,
        model="gpt-4.1-mini",
        journal=False,
        observers=[crash, JournalObserver(journal)],  # the crash comes first: nothing recorded
        output_type=Invoice,
        output_mode=mode,
    )
    try:
        await expect_crash(agent.run("Extract.", run_id="refused-run"))
    finally:
        await agent.aclose()


def asked_with_feedback(request: dict[str, Any]) -> bool:
    return FEEDBACK in json.dumps(request)


@pytest.mark.parametrize("mode", ["native", "tool"])
@pytest.mark.parametrize("hook", ["model_request", "model_response"])
async def test_a_resume_after_a_refused_answer_asks_again_with_the_feedback(
    hook: str, mode: str, tmp_path: Path
) -> None:
    bad, good = {"number": "INV-1", "total": "9"}, {"number": "INV-1", "total": 9}
    scenario = Scenario.from_dict({"turns": [{"output": bad}, {"output": good}]})
    journal = tmp_path / "runs.sqlite3"
    with EmulationServer(scenario) as server:
        await crash_after_the_refusal(server, journal, hook, mode)
        before = len(server.requests)
        provider = make_provider("openai-chat", base_url=server.url_for("openai-chat"), api_key="k")
        again = Agent(
            provider, model="gpt-4.1-mini", journal=journal, output_type=Invoice, output_mode=mode
        )
        try:
            resumed = await again.resume("refused-run")
        finally:
            await again.aclose()
        requests = server.requests
    # The first process asked once, or twice when it died on the answer.
    assert before == (1 if hook == "model_request" else 2)
    (asked,) = requests[before:]
    assert asked_with_feedback(asked) and not asked_with_feedback(requests[0])
    assert resumed.output == Invoice.model_validate(good) and resumed.turns == 2


async def test_a_resumed_run_counts_the_refusals_made_before_it(tmp_path: Path) -> None:
    bad = {"number": "INV-1", "total": "9"}
    scenario = Scenario.from_dict({"turns": [{"output": bad}, {"output": bad}]})
    journal = tmp_path / "runs.sqlite3"
    with EmulationServer(scenario) as server:
        await crash_after_the_refusal(server, journal, "model_request", "native")
        provider = make_provider("openai-chat", base_url=server.url_for("openai-chat"), api_key="k")
        again = Agent(provider, model="gpt-4.1-mini", journal=journal, output_type=Invoice)
        try:
            with pytest.raises(OutputInvalid) as caught:
                await again.resume("refused-run")
        finally:
            await again.aclose()
    # output_retries=1: the refusal before the crash and the one after make two.
    assert caught.value.attempts == 2


class Receipt(BaseModel):
    number: str


@tool(requires_approval=True)
def pause() -> str:
    """Wait for a person."""
    return "ok"


@pytest.mark.parametrize(
    ("first_type", "then_type", "said"),
    [
        (
            Invoice,
            Receipt,
            "typed output 'Invoice', and this agent asks for typed output 'Receipt",
        ),
        (Invoice, None, "typed output 'Invoice', and this agent asks for text output"),
        (None, Invoice, "text output, and this agent asks for typed output 'Invoice'"),
    ],
)
async def test_a_run_resumed_by_an_agent_of_another_output_type_is_refused(
    tmp_path: Path, first_type: Any, then_type: Any, said: str
) -> None:
    """Nothing is asked of the model: the resuming agent would read the
    recorded answer as a type the run never asked for."""
    scenario = Scenario.from_dict(
        {"turns": [{"tool_calls": [{"name": "pause", "arguments": {}}]}, {"text": "x"}]}
    )
    journal = tmp_path / "runs.sqlite3"
    with EmulationServer(scenario) as server:

        def agent(output_type: Any) -> Agent[Any]:
            url = server.url_for("openai-chat")
            provider = make_provider("openai-chat", base_url=url, api_key="test-key")
            return Agent(
                provider, model="m", tools=[pause], journal=journal, output_type=output_type
            )

        first = agent(first_type)
        try:
            suspended = await first.run("Go.", run_id="typed-run")
        finally:
            await first.aclose()
        asked = len(server.requests)
        then = agent(then_type)
        try:
            with pytest.raises(UsageError) as raised:
                await then.resume("typed-run")
        finally:
            await then.aclose()
        assert len(server.requests) == asked
    assert suspended.outcome == "suspended"
    assert said in str(raised.value)
