"""A toolbox served by ``toolwire mcp serve toolbox_app:toolbox`` in the tests
(imported from the current directory, as the command does)."""

from __future__ import annotations

import toolwire


@toolwire.tool(read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: the first number.
        b: the second number.
    """
    return a + b


@toolwire.tool(read_only=True)
def get_weather(city: str) -> dict[str, object]:
    """Current weather of a city."""
    return {"city": city, "condition": "light rain", "temperature_c": 24.5}


@toolwire.tool(requires_approval=True)
def delete_record(record_id: str) -> str:
    """Delete a record (pretends to)."""
    return f"deleted {record_id}"


@toolwire.tool(external=True)
def pick_color() -> str:
    """A person picks a color (not served: its result comes from outside)."""
    return "unused"


toolbox = toolwire.Toolbox([add, get_weather, delete_record, pick_color])


def make_toolbox() -> toolwire.Toolbox:
    return toolbox


not_a_toolbox = 42
