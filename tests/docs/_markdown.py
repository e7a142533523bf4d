"""Fenced code blocks of a Markdown document, as written.

A block may be preceded by a directive comment for the documentation tests,
on the line just before its fence: ``<!-- docs-test: pytest -->`` (the block
is a test file, run by pytest).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Block", "blocks", "inline_code"]

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_DIRECTIVE = re.compile(r"^<!--\s*docs-test:\s*(?P<what>[\w=-]+)\s*-->$")
_INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


@dataclass(frozen=True)
class Block:
    """One fenced block."""

    path: Path
    line: int
    """The 1-based line of its first line of code."""
    language: str
    text: str
    directive: str | None = None

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, in order.

    Raises:
        ValueError: a fence is never closed.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        language = opening["info"].strip().split(" ")[0].lower()
        previous = lines[index - 1].strip() if index else ""
        directive = _DIRECTIVE.match(previous)
        body: list[str] = []
        index += 1
        start = index + 1
        while index < len(lines) and not lines[index].strip().startswith(fence):
            body.append(lines[index][indent:] if lines[index][:indent].isspace() else lines[index])
            index += 1
        if index == len(lines):
            raise ValueError(f"{path.name}:{start - 1}: a fence that is never closed")
        index += 1
        found.append(
            Block(
                path=path,
                line=start,
                language=language,
                text="\n".join(body) + "\n",
                directive=directive["what"] if directive else None,
            )
        )
    return found


def inline_code(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of every inline code span outside fenced blocks."""
    spans: list[tuple[int, str]] = []
    inside = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if _FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            spans.extend((number, match[1]) for match in _INLINE.finditer(line))
    return spans
