"""Sample tools used by the demo and the documentation.

* :func:`get_current_time` - the time in an IANA time zone (read-only);
  :func:`clock_tool` makes one on a clock of your own.
* :func:`get_weather` - weather from a bundled offline table of cities, English
  or Chinese names (read-only).
* :func:`calculator` - arithmetic parsed with :mod:`ast` and a whitelist,
  never ``eval`` (read-only).
* :func:`payment_tool` - ``send_payment``, a side-effecting tool that uses the
  call's idempotency key so that it never pays twice.
"""

from __future__ import annotations

from typing import Any

from toolwire.examples.calculator import calculator, evaluate
from toolwire.examples.clock import clock_tool, get_current_time
from toolwire.examples.payments import PaymentLedger, payment_tool
from toolwire.examples.weather import CITIES, find_city, get_weather
from toolwire.tools import Tool, Toolbox

__all__ = [
    "CITIES",
    "SAMPLE_TOOLS",
    "PaymentLedger",
    "calculator",
    "clock_tool",
    "evaluate",
    "find_city",
    "get_current_time",
    "get_weather",
    "payment_tool",
    "sample_toolbox",
]

SAMPLE_TOOLS: tuple[Tool, ...] = (get_current_time, get_weather, calculator)
"""The read-only sample tools."""


def sample_toolbox(**options: Any) -> Toolbox:
    """A :class:`~toolwire.Toolbox` with the read-only sample tools.

    Args:
        **options: passed to :class:`~toolwire.Toolbox`.
    """
    return Toolbox(SAMPLE_TOOLS, **options)
