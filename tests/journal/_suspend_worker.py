"""A process that runs an agent to a suspension, or resumes a suspended run.

Usage: ``python -m tests.journal._suspend_worker run|resume URL JOURNAL LEDGER RUN_ID``.
It prints one JSON line: ``run`` prints the outcome and the pending calls;
``resume`` prints the outcome and answer, ``leased`` when another process
holds the run, or ``refused`` with the reason when an approval is refused.
With ``$HOLD_DIR`` set, the payment tool writes ``inside`` there and waits for
``go`` (bounded), so a test can race a second resumer against it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import anyio
from pydantic import Field

from toolwire import Agent, ToolContext, tool
from toolwire.examples import PaymentLedger
from toolwire.journal import ApprovalRefused, RunLeased
from toolwire.providers import OpenAIChat


def payment(ledger: PaymentLedger) -> Any:
    hold = os.environ.get("HOLD_DIR")

    @tool(name="send_payment", requires_approval=True)
    def send_payment(
        to: Annotated[str, Field(min_length=1)],
        amount_cents: Annotated[int, Field(gt=0)],
        ctx: ToolContext,
    ) -> dict[str, Any]:
        """Send a payment.

        Args:
            to: who receives it.
            amount_cents: the amount in cents.
        """
        if hold is not None:
            (Path(hold) / "inside").touch()
            deadline = time.monotonic() + 30
            while not (Path(hold) / "go").exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        record, _ = ledger.pay(key=ctx.idempotency_key, to=to, amount_cents=amount_cents)
        return record

    return send_payment


async def main(mode: str, url: str, journal: str, ledger: str, run_id: str) -> dict[str, Any]:
    agent = Agent(
        OpenAIChat(base_url=url, api_key="test-key"),
        model="pay",
        tools=[payment(PaymentLedger(Path(ledger)))],
        journal=journal,
    )
    try:
        if mode == "run":
            result = await agent.run("pay alice", run_id=run_id)
        else:
            result = await agent.resume(run_id)
    except RunLeased:
        return {"outcome": "leased"}
    except ApprovalRefused as exc:
        return {"outcome": "refused", "reason": exc.reason}
    finally:
        await agent.aclose()
    return {
        "outcome": result.outcome,
        "output": result.output,
        "pending": [p.to_dict() for p in result.pending],
    }


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, *sys.argv[1:6])), flush=True)
