"""One process of a run whose MCP tool asks a question: ``python elicit_run.py
start PROMPT`` or ``python elicit_run.py resume RUN_ID``; the model is the
emulation server at ``$MODEL_URL``, the journal ``$TOOLWIRE_JOURNAL``. Prints
the run's result as one JSON line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio

import toolwire
from toolwire.mcp import connect_stdio

SERVER = Path(__file__).parent / "eliciting_server.py"


async def main(verb: str, arg: str) -> None:
    async with connect_stdio(sys.executable, [str(SERVER)]) as server:
        provider = toolwire.OpenAIChat(base_url=os.environ["MODEL_URL"], api_key="test-key")
        agent = toolwire.Agent(provider, model="demo", tools=await server.tools())
        result = await (agent.run(arg) if verb == "start" else agent.resume(arg))
    print(json.dumps({
        "run_id": result.run_id, "outcome": result.outcome, "output": result.output,
        "pending": [p.to_dict() for p in result.pending],
    }))  # fmt: skip


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
