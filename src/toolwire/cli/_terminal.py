"""The terminal sink: what the model, a tool or a recording wrote, made safe
to print in one place.

A terminal reads some characters as commands: the C0 controls (ESC starts a
sequence), DEL and the C1 controls (``U+009B`` is a whole CSI on its own).
Others change how the line reads without being seen: bidirectional
overrides and isolates, zero-width and other format characters. A lone
surrogate cannot be printed at all. :func:`terminal_text` shows each of them
as an escape (``\\x1b``, ``\\x9b``, ``\\u202e``, ``\\ud800``), tab and line
feed excepted; :func:`terminal_json` does the same with JSON's own escapes,
so that a JSON line stays valid JSON. Every command that prints such text
prints it through one of the two.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["terminal_json", "terminal_text"]

_UNSAFE: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and line feed, DEL, C1
    "\u00ad\u061c\u180e"  # soft hyphen, Arabic letter mark, Mongolian vowel separator
    "\u200b-\u200f"  # zero-width space, joiners, left-to-right and right-to-left marks
    "\u2028-\u202e"  # line and paragraph separators, bidirectional embeddings, overrides
    "\u2060-\u206f"  # word joiner, invisible operators, bidirectional isolates
    "\ufeff\ufff9-\ufffb"  # zero-width no-break space, interlinear annotations
    "\ud800-\udfff]"  # lone surrogates
)


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _json_escape(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def terminal_text(text: str) -> str:
    """``text`` with every control, format and bidirectional character, and
    every lone surrogate, shown as an escape (tab and line feed kept)."""
    return _UNSAFE.sub(_escape, text)


def terminal_json(text: str) -> str:
    """A JSON document's text made safe the same way, with JSON escapes:
    such characters can only be inside its strings, so it stays valid and
    means the same (tab and line feed are escaped by JSON already)."""
    return _UNSAFE.sub(_json_escape, text)
