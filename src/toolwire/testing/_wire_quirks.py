"""The server quirks a scenario's turn can play (its ``quirks``)."""

from __future__ import annotations

from typing import Literal

__all__ = ["WIRE_QUIRKS", "WireQuirk"]

WireQuirk = Literal[
    "merged_opener", "repeated_object", "split_call", "missing_ids", "object_arguments"
]
"""A server quirk the emulation server can play (a :class:`Turn`'s ``quirks``)."""
WIRE_QUIRKS: dict[str, str] = {
    "merged_opener": "each call's opening chunk carries its first argument fragment",
    "repeated_object": "the whole arguments again, appended to a call's last fragment",
    "split_call": "the first call's second half under the next index, naming no call",
    "missing_ids": "calls opened without an id",
    "object_arguments": "each call whole in its opener, arguments as an object",
}
"""What each of :data:`WireQuirk` does to the stream."""
