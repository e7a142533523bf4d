"""A current-time tool, time zone aware, from the IANA database (``zoneinfo``)."""

from __future__ import annotations

from datetime import datetime
from datetime import timezone as _timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from toolwire.errors import ModelRetry
from toolwire.tools import tool

__all__ = ["get_current_time"]

_ALIASES = {"utc": "UTC", "gmt": "UTC", "z": "UTC"}


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
            f"Unknown time zone {timezone[:60]!r}. Use an IANA name such as 'Asia/Shanghai', "
            "'Asia/Tokyo', 'Europe/London', 'America/New_York' or 'UTC'."
        ) from None
    now = datetime.now(_timezone.utc).astimezone(zone)
    offset = now.strftime("%z")
    return {
        "timezone": name,
        "datetime": now.isoformat(timespec="seconds"),
        "date": now.date().isoformat(),
        "time": now.strftime("%H:%M:%S"),
        "weekday": now.strftime("%A"),
        "utc_offset": f"{offset[:3]}:{offset[3:]}",
        "abbreviation": now.tzname(),
    }
