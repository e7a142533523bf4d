"""One process of a run whose MCP tool asks a question: ``python elicit_run.py
start PROMPT`` or ``python elicit_run.py resume RUN_ID``; the model is the
emulation server at ``$MODEL_URL``, the journal ``$TOOLWIRE_JOURNAL``. Prints
the run's result as one JSON line.

``answer-and-die PROMPT``: an in-process callback answers the question, and
the process dies (``os._exit``) as soon as the answer is journaled, before
the call's outcome is; ``resume-asking RUN_ID`` resumes it with a callback
that counts the questions it is asked (``asked`` in the JSON line).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio

import toolwire
from toolwire.mcp import connect_stdio
from toolwire.tools import Question, QuestionAnswer

SERVER = Path(__file__).parent / "eliciting_server.py"


class DieOnAnswer(toolwire.RunObserver):
    """Ends the process once an in-process answer is journaled."""

    async def question_answered(self, *args: Any) -> None:
        os._exit(3)


async def main(verb: str, arg: str) -> None:
    asked: list[str] = []

    async def elicit(question: Question) -> QuestionAnswer:
        asked.append(question.message)
        return QuestionAnswer(action="accept", content={"count": 3})

    callback = elicit if verb in ("answer-and-die", "resume-asking") else None
    observers = [DieOnAnswer()] if verb == "answer-and-die" else []
    async with connect_stdio(sys.executable, [str(SERVER)], elicit=callback) as server:
        provider = toolwire.OpenAIChat(base_url=os.environ["MODEL_URL"], api_key="test-key")
        # Read-only: a call that started without a recorded outcome runs again.
        tools = await server.tools(read_only=True if callback is not None else None)
        agent = toolwire.Agent(provider, model="demo", tools=tools, observers=observers)
        starting = verb in ("start", "answer-and-die")
        result = await (agent.run(arg) if starting else agent.resume(arg))
    print(json.dumps({
        "run_id": result.run_id, "outcome": result.outcome, "output": result.output,
        "pending": [p.to_dict() for p in result.pending], "asked": asked,
    }))  # fmt: skip


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
