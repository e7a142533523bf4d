"""An MCP server built with the official SDK whose tool asks the person a
question mid-call (form elicitation), for toolwire's tests.

``python eliciting_server.py`` serves over stdio.
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Elicit, MCPServer, Resolve, Sample
from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel

server = MCPServer("eliciting-server", log_level="WARNING")


class Guests(BaseModel):
    count: int


def ask_guests(restaurant: str) -> Elicit[Guests]:
    return Elicit(f"How many guests at {restaurant}?", Guests)


@server.tool()
def book_table(
    restaurant: str, guests: Annotated[ElicitationResult[Guests], Resolve(ask_guests)]
) -> str:
    """Book a table; asks the person how many guests."""
    if guests.action != "accept":
        return f"not booked ({guests.action})"
    return f"booked {restaurant} for {guests.data.count}"


def ask_model(text: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(text=f"Summarize: {text}"))
    return Sample([message], max_tokens=50)


@server.tool()
def summarize(text: str, summary: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Summarize a text with the client's model (MCP sampling)."""
    content = summary.content
    return f"summary: {getattr(content, 'text', content)}"


if __name__ == "__main__":
    server.run("stdio")
