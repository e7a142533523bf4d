"""kill -9 in the middle of a Responses background stream: the process dies
after the journal has the response's id and before the turn's answer, and
the run resumed in this process reads the kept response again. The server
counts one request per turn: the turn the child was streaming is not asked,
nor paid, twice; its tool runs once."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from toolwire import Agent, tool
from toolwire.journal import SQLiteJournal
from toolwire.providers import OpenAIResponses
from toolwire.testing import EmulationServer, Scenario

CHILD = textwrap.dedent(
    """
    import os, signal, sys
    import toolwire
    from toolwire.providers import OpenAIResponses

    base_url, journal = sys.argv[1], sys.argv[2]

    @toolwire.tool
    def send_payment(to: str, amount_cents: int) -> str:
        \"\"\"Send money.\"\"\"
        raise SystemExit("the child must die before any tool runs")

    class DieMidStream(toolwire.RunObserver):
        # Told after the journal (observers come after it): the id is on
        # disk, the stream goes on, the answer is not recorded.
        async def model_streaming(self, run_id, turn, attempt, response_id):
            os.kill(os.getpid(), signal.SIGKILL)

    async def main():
        provider = OpenAIResponses(base_url=base_url, api_key="sk-test-bg", openai_background=True)
        agent = toolwire.Agent(provider, model="m", tools=[send_payment], journal=journal,
                               observers=[DieMidStream()])
        await agent.run("pay ann", run_id="run-bg-kill")

    import anyio
    anyio.run(main)
    """
)


def scenario() -> Scenario:
    return Scenario.from_dict(
        {
            "turns": [
                {
                    "tool_calls": [
                        {"name": "send_payment", "arguments": {"to": "ann", "amount_cents": 1250}}
                    ],
                    "chunk_size": 4,
                    "delay": 0.005,
                },
                {"text": "paid {result:send_payment}"},
            ]
        }
    )


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_kill_9_mid_stream_then_resume_reads_the_kept_response(tmp_path: Path) -> None:
    journal_path = tmp_path / "journal.sqlite3"
    paid: list[dict[str, object]] = []

    @tool
    def send_payment(to: str, amount_cents: int) -> str:
        """Send money."""
        paid.append({"to": to, "amount_cents": amount_cents})
        return f"sent {amount_cents} to {to}"

    with EmulationServer(scenario()) as server:
        base_url = server.url_for("openai-responses")
        with anyio.fail_after(60):
            child = await anyio.run_process(
                [sys.executable, "-c", CHILD, base_url, str(journal_path)],
                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                check=False,
            )
        assert child.returncode == -9, child.stderr[-2000:]
        journal = SQLiteJournal(journal_path)
        kinds = [e.kind for e in journal.load_run("run-bg-kill").events]
        assert kinds == ["run_started", "model_request", "model_streaming"]
        provider = OpenAIResponses(base_url=base_url, api_key="sk-test-bg", openai_background=True)
        agent = Agent(provider, model="m", tools=[send_payment], journal=journal)
        try:
            result = await agent.resume("run-bg-kill")
        finally:
            await agent.aclose()
        assert len(server.requests) == 2  # turn 1 (the child's), turn 2: never turn 1 again
        [reread] = server.continuations
        assert reread["after"] == -1
    assert paid == [{"to": "ann", "amount_cents": 1250}]
    assert result.output == "paid sent 1250 to ann"
    log = journal.load_run("run-bg-kill")
    assert log.problems() == [] and log.run.status == "answered"
    assert "sk-test-bg" not in json.dumps([e.data for e in log.events])
    journal.close()
