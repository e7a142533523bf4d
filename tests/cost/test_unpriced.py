"""A cost limit toolwire cannot enforce is refused when the run starts: the
model has no price (the data does not have it, the agent prices nothing,
genai-prices is not installed). The error says why and how to give a price,
and no request is sent; ``unpriced="allow"`` runs anyway, with one warning.

Against the emulation server, which counts the requests it received."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from toolwire import Agent, CostLimitUnpriced, UnpricedCostWarning, UsageError
from toolwire.cost import Budget, Prices, Rates, UsageLimits
from toolwire.journal import SQLiteJournal
from toolwire.providers import OpenAIChat
from toolwire.testing import EmulationServer, Scenario

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
UNKNOWN = "no-such-model-2099"


def answer() -> Scenario:
    return Scenario.from_dict({"name": "answer", "turns": [{"text": "hello"}]})


def agent_for(server: EmulationServer, model: str, journal: Path, **options: Any) -> Agent:
    provider = OpenAIChat(base_url=server.url_for("openai-chat"), api_key="test-key")
    return Agent(provider, model=model, journal=journal, **options)


def runs_in(journal: Path) -> int:
    if not journal.exists():
        return 0
    store = SQLiteJournal(journal, read_only=True)
    try:
        return len(store.list_runs())
    finally:
        store.close()


async def test_a_cost_limit_on_a_model_the_data_lacks_is_refused_before_any_request(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "j.sqlite3"
    with EmulationServer(answer()) as server:
        agent = agent_for(server, UNKNOWN, journal, limits=UsageLimits(cost=0.01))
        with pytest.raises(CostLimitUnpriced) as refused:
            await agent.run("hi")
        with pytest.raises(CostLimitUnpriced):
            async for _ in agent.stream("hi"):
                pass
        await agent.aclose()
        assert len(server.requests) == 0
    message = refused.value.message
    assert isinstance(refused.value, UsageError)
    assert "cost limit of $0.01 cannot be enforced" in message
    assert f"has no model {UNKNOWN!r} of provider 'openai'" in message
    assert f"Prices({{{UNKNOWN!r}: Rates(input=..., output=...)}})" in message
    assert "unpriced='allow'" in message
    assert runs_in(journal) == 0  # refused before the run was recorded


@pytest.mark.parametrize(
    ("prices", "why"),
    [
        (False, "the agent prices nothing (prices=False)"),
        (Prices(data=False), "the price data is off (data=False)"),
        (Prices({"other-model": Rates(input=1, output=1)}, data=False), "no Rates were given"),
    ],
)
async def test_a_cost_limit_without_prices_is_refused(
    tmp_path: Path, prices: Prices | bool, why: str
) -> None:
    with EmulationServer(answer()) as server:
        agent = agent_for(
            server,
            "gpt-4.1-mini",
            tmp_path / "j.sqlite3",
            prices=prices,
            limits=UsageLimits(cost=1),
        )
        with pytest.raises(CostLimitUnpriced, match=why.replace("(", r"\(").replace(")", r"\)")):
            await agent.run("hi")
        assert len(server.requests) == 0


async def test_a_budgets_cost_limit_is_refused_too(tmp_path: Path) -> None:
    budget = Budget(UsageLimits(cost=5))
    with EmulationServer(answer()) as server:
        agent = agent_for(server, UNKNOWN, tmp_path / "j.sqlite3", budget=budget)
        with pytest.raises(CostLimitUnpriced, match="the budget's cost limit of \\$5"):
            await agent.run("hi")
        assert len(server.requests) == 0


async def test_a_resume_under_an_unpriced_cost_limit_is_refused(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite3"
    with EmulationServer(answer()) as server:
        free = agent_for(server, UNKNOWN, journal)
        await free.run("hi", run_id="run-free")
        await free.aclose()
        limited = agent_for(server, UNKNOWN, journal, limits=UsageLimits(cost=0.01))
        with pytest.raises(CostLimitUnpriced):
            await limited.resume("run-free")
        assert len(server.requests) == 1


async def test_an_unpriced_run_allowed_explicitly_warns_once(tmp_path: Path) -> None:
    limits = UsageLimits(cost=0.01, unpriced="allow")
    with EmulationServer(answer()) as server:
        agent = agent_for(server, UNKNOWN, tmp_path / "j.sqlite3", limits=limits)
        with pytest.warns(UnpricedCostWarning) as caught:
            result = await agent.run("hi")
        await agent.aclose()
    assert result.output == "hello" and result.cost is None
    assert len(caught) == 1
    assert "the cost limit is not enforced" in str(caught[0].message)


async def test_a_priced_model_runs_under_its_cost_limit_without_a_word(tmp_path: Path) -> None:
    prices = Prices({UNKNOWN: Rates(input=1, output=1)}, data=False)
    with EmulationServer(answer()) as server:
        agent = agent_for(
            server, UNKNOWN, tmp_path / "j.sqlite3", prices=prices, limits=UsageLimits(cost=1)
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = await agent.run("hi")
        await agent.aclose()
    assert result.output == "hello" and result.cost is not None


def test_unpriced_takes_refuse_or_allow() -> None:
    assert UsageLimits(cost=1).unpriced == "refuse"
    with pytest.raises(UsageError, match="unpriced must be 'refuse' or 'allow'"):
        UsageLimits(cost=1, unpriced="ignore")  # type: ignore[arg-type]


REFUSED_WITHOUT_DATA = """
import json, sys
sys.modules["genai_prices"] = None  # as when toolwire[cost] is not installed
from toolwire import Agent, CostLimitUnpriced
from toolwire.cost import UsageLimits
from toolwire.providers import OpenAIChat
agent = Agent(OpenAIChat(base_url=sys.argv[1], api_key="test-key"), model="gpt-4.1-mini",
              journal=False, limits=UsageLimits(cost=0.01))
try:
    agent.run_sync("hi")
except CostLimitUnpriced as exc:
    print(json.dumps({"refused": exc.message}))
"""


def test_without_genai_prices_a_cost_limit_says_to_install_it() -> None:
    with EmulationServer(answer()) as server:
        proc = subprocess.run(
            [sys.executable, "-c", REFUSED_WITHOUT_DATA, server.url_for("openai-chat")],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=dict(os.environ),
            timeout=120,
        )
        requests = len(server.requests)
    assert proc.returncode == 0, proc.stderr
    message = json.loads(proc.stdout.splitlines()[-1])["refused"]
    assert "genai-prices, the price data, is not installed" in message
    assert "pip install 'toolwire[cost]'" in message
    assert requests == 0
