"""A process that runs a priced, limited agent to a suspension, or resumes it.

Usage: ``python -m tests.cost._limits_worker run|resume URL JOURNAL LEDGER RUN_ID LIMITS``,
``LIMITS`` a JSON object of :class:`~toolwire.cost.UsageLimits` arguments.
Every request of the model ``pay`` costs $0.008 (its per-request fee). It
prints one JSON line: the outcome, the answer, the pending calls and the cost
(a float, or ``null`` when unknown), or ``{"outcome": "limit", ...}`` with the
limit that stopped the run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import anyio
from pydantic import Field

from toolwire import Agent, ToolContext, UsageLimitExceeded, tool
from toolwire.cost import Prices, Rates, UsageLimits
from toolwire.examples import PaymentLedger
from toolwire.providers import OpenAIChat

FEE = "0.008"
"""What each request of the model ``pay`` costs, in dollars."""


def payment(ledger: PaymentLedger) -> Any:
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
        record, _ = ledger.pay(key=ctx.idempotency_key, to=to, amount_cents=amount_cents)
        return record

    return send_payment


async def main(
    mode: str, url: str, journal: str, ledger: str, run_id: str, limits: str
) -> dict[str, Any]:
    agent = Agent(
        OpenAIChat(base_url=url, api_key="test-key"),
        model="pay",
        tools=[payment(PaymentLedger(Path(ledger)))],
        journal=journal,
        prices=Prices({"pay": Rates(input=0, output=0, per_request=FEE)}, data=False),
        limits=UsageLimits(**json.loads(limits)),
    )
    try:
        if mode == "run":
            result = await agent.run("pay alice", run_id=run_id)
        else:
            result = await agent.resume(run_id)
    except UsageLimitExceeded as exc:
        return {"outcome": "limit", "limit": exc.limit, "value": exc.value}
    finally:
        await agent.aclose()
    return {
        "outcome": result.outcome,
        "output": result.output,
        "pending": [p.to_dict() for p in result.pending],
        "cost": float(result.cost.total) if result.cost is not None else None,
    }


if __name__ == "__main__":
    print(json.dumps(anyio.run(main, *sys.argv[1:7])), flush=True)
