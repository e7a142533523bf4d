"""A current-time tool, time zone aware, from the IANA database (``zoneinfo``).

The tool reads its clock from a function, so that a demo, a document or a
test can run it at a fixed instant: :func:`clock_tool` makes one with any
clock, and :data:`get_current_time` is the one that reads the system clock.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from datetime import timezone as _timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from toolwire.errors import ModelRetry, UsageError
from toolwire.tools import Tool, tool

__all__ = ["clock_tool", "get_current_time", "system_clock"]

_ALIASES = {"utc": "UTC", "gmt": "UTC", "z": "UTC"}


def system_clock() -> datetime:
    """Now, in UTC, from the system clock."""
    return datetime.now(_timezone.utc)


def clock_tool(now: Callable[[], datetime] = system_clock) -> Tool:
    """A ``get_current_time`` tool that reads ``now`` (an aware datetime).

    Args:
        now: the clock; the system clock by default. A fixed instant makes the
            tool's answers, and so a whole run, reproducible.
    """

    @tool(read_only=True, strict=True)
    def get_current_time(timezone: str = "UTC") -> dict[str, Any]:
        """Get the current date and time in a time zone.

        Use it whenever the answer depends on today's date or the time of day.

        Args:
            timezone: An IANA time zone name such as "Asia/Shanghai",
                "Europe/London" or "America/New_York".
        """
        name = _ALIASES.get(timezone.strip().casefold(), timezone.strip())
        try:
            zone = ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise ModelRetry(
                f"Unknown time zone {timezone[:60]!r}. Use an IANA name such as "
                "'Asia/Shanghai', 'Asia/Tokyo', 'Europe/London', 'America/New_York' or 'UTC'."
            ) from None
        instant = now()
        if instant.tzinfo is None:
            raise UsageError("the clock of get_current_time must give an aware datetime")
        local = instant.astimezone(zone)
        offset = local.strftime("%z")
        return {
            "timezone": name,
            "datetime": local.isoformat(timespec="seconds"),
            "date": local.date().isoformat(),
            "time": local.strftime("%H:%M:%S"),
            "weekday": local.strftime("%A"),
            "utc_offset": f"{offset[:3]}:{offset[3:]}",
            "abbreviation": local.tzname(),
        }

    return get_current_time


get_current_time = clock_tool()
"""The current-time tool on the system clock."""
