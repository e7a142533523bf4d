"""Parallel tools with approval: a dangerous tool asks a human (here, a
policy function) first; a denial goes back to the model as a result.

    python examples/approval.py
"""

from __future__ import annotations

import asyncio

from _offline import provider_for

import toolwire
from toolwire.examples import get_weather

SCENARIO = {
    "name": "approval-example",
    "turns": [
        {
            "tool_calls": [
                {"name": "get_weather", "arguments": {"city": "Paris"}},
                {"name": "delete_file", "arguments": {"path": "/etc/passwd"}},
                {"name": "delete_file", "arguments": {"path": "/tmp/scratch.txt"}},
            ]
        },
        {"text": "Paris: {result:0.condition}. First delete: {result:1}. Second: {result:2}."},
    ],
}

deleted: list[str] = []


@toolwire.tool(requires_approval=True)
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: absolute path of the file.
    """
    deleted.append(path)
    return f"deleted {path}"


def approve(request: toolwire.ApprovalRequest) -> toolwire.Approval:
    """The policy a human would apply: nothing outside /tmp."""
    path = str(request.arguments.get("path", ""))
    if not path.startswith("/tmp/"):
        return toolwire.Approval.deny(f"{path} is outside /tmp")
    return toolwire.Approval.allow()


async def main() -> None:
    with provider_for(SCENARIO) as (provider, model):
        toolbox = toolwire.Toolbox([get_weather, delete_file], approve=approve)
        agent = toolwire.Agent(provider, model=model, tools=toolbox)
        result = await agent.run("What's the weather in Paris? Also clean up those two files.")
        await agent.aclose()
    for record in result.tool_calls:
        print(f"{record.call.name}: {'ok' if record.result.ok else record.result.error}")
    print("deleted:", deleted)
    print(result.output)


if __name__ == "__main__":
    asyncio.run(main())
