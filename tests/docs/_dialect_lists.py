"""The documents' lists and tables of dialects, made from the registry.

A list or table of dialects in README.md or docs/*.md is written between two
HTML comments, which Markdown does not show::

    told from the path: <!-- dialects: paths -->`openai-chat`, ...<!-- /dialects -->

The word after ``dialects:`` picks the dialects (:data:`SELECTIONS`): every
registered one, those told by their request paths, those with a provider...
``table`` is the table of every dialect in docs/dialects.md. What is between
the comments is exactly what :func:`render` makes of the registry:
``tests/docs/test_dialect_lists.py`` fails otherwise, and a line that names
several dialects outside such a block is a list written by hand
(:func:`hand_lists`). To rewrite the blocks after registering a dialect::

    PYTHONPATH=src python tests/docs/_dialect_lists.py
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolwire.stream.codecs import WireDialect, registered

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

SELECTIONS: dict[str, Callable[[WireDialect], bool]] = {
    "every": lambda d: True,
    "paths": lambda d: bool(d.paths),
    "providers": lambda d: d.provider is not None,
    "served": lambda d: d.encoder is not None and bool(d.routes),
    "schemas": lambda d: d.tool_schemas is not None,
}
"""The dialects a list names: every registered one, those told by their
request paths (``toolwire proxy``, ``inspect``, cassettes), those with a
provider, those the emulation server serves, those that shape tool schemas."""

_BLOCK = re.compile(
    r"<!-- dialects: (?P<what>[a-z]+) -->(?P<body>.*?)<!-- /dialects -->", re.DOTALL
)
_MARK = re.compile(r"<!-- */?dialects\b[^>]*-->")
_NAMED = re.compile(r"[`\"']([a-z][a-z0-9.-]*)[`\"']")
HAND_LIST = 3
"""A line naming this many registered dialects outside a block is a list by hand."""


@dataclass(frozen=True, slots=True)
class Drift:
    """A block of a document that is not what the registry makes of it."""

    where: str
    """``page.md:line``."""
    selection: str
    written: str
    expected: str

    def __str__(self) -> str:
        return f"{self.where}: dialects: {self.selection}: {self.written!r} != {self.expected!r}"


def names(dialects: Sequence[WireDialect], selection: str) -> list[str]:
    """The names of the dialects of ``selection``, in registry order."""
    if selection not in SELECTIONS:
        raise ValueError(f"no dialect selection {selection!r}; known: {', '.join(SELECTIONS)}")
    chosen = SELECTIONS[selection]
    return [d.name for d in dialects if chosen(d)]


def render(dialects: Sequence[WireDialect], selection: str) -> str:
    """What a block of ``selection`` holds: the names, or the table."""
    if selection == "table":
        return "\n\n" + table(dialects) + "\n\n"
    return ", ".join(f"`{name}`" for name in names(dialects, selection))


def _row(d: WireDialect) -> str:
    provider = d.provider
    paths = ", ".join(f"`{p}`" for p in d.paths) or "none"
    served = "yes" if SELECTIONS["served"](d) else "no"
    if provider is None:
        written = "requests written" if d.encode_request is not None else "read only"
        who, price, limits = f"none ({written})", "", ""
    else:
        who = f"`{provider.class_name}` (" + ", ".join(f"`{n}`" for n in provider.names) + ")"
        price = f"`{provider.price_provider}`"
        headers = provider.rate_limit_headers
        limits = f"`{headers.limit.replace('{resource}', '*')}`..." if headers else "none"
    otel = f"`{d.otel_provider}`" if d.otel_provider else ""
    return f"| `{d.name}` | {who} | {paths} | {served} | {otel} | {price} | {limits} |"


def table(dialects: Sequence[WireDialect]) -> str:
    """The table of every dialect: its provider, paths and the names the
    layers above know it by."""
    head = (
        "| Dialect | Provider (`--provider`, names) | Request paths | Emulated "
        "| OpenTelemetry | Price data | Rate-limit headers |\n"
        "|---|---|---|---|---|---|---|"
    )
    return "\n".join([head, *(_row(d) for d in dialects)])


def drift(path: Path, text: str, dialects: Sequence[WireDialect]) -> list[Drift]:
    """The blocks of ``text`` (the document at ``path``) that differ from the registry."""
    found = []
    for match in _BLOCK.finditer(text):
        what = match["what"]
        where = f"{path.name}:{text.count(chr(10), 0, match.start()) + 1}"
        if what != "table" and what not in SELECTIONS:
            found.append(Drift(where, what, match["body"], f"one of {[*SELECTIONS, 'table']}"))
            continue
        expected = render(dialects, what)
        if match["body"] != expected:
            found.append(Drift(where, what, match["body"], expected))
    return found


def hand_lists(path: Path, text: str, dialects: Sequence[WireDialect]) -> list[str]:
    """``page.md:line`` of each line outside the blocks that names
    :data:`HAND_LIST` registered dialects or more (a list written by hand),
    and of each marker that opens or closes no block."""
    known = {d.name for d in dialects}
    outside = _BLOCK.sub(lambda m: "\n" * m.group().count("\n"), text)
    found = []
    for number, line in enumerate(outside.splitlines(), 1):
        if _MARK.search(line):
            found.append(f"{path.name}:{number}: a dialects marker outside a block")
        elif len(set(_NAMED.findall(line)) & known) >= HAND_LIST:
            found.append(f"{path.name}:{number}: a list of dialects by hand: {line.strip()}")
    return found


def rewrite(text: str, dialects: Sequence[WireDialect]) -> str:
    """``text`` with every block made from the registry."""

    def fill(match: re.Match[str]) -> str:
        body = render(dialects, match["what"])
        return f"<!-- dialects: {match['what']} -->{body}<!-- /dialects -->"

    return _BLOCK.sub(fill, text)


def main(documents: Sequence[Path] = DOCUMENTS) -> int:
    """Rewrite each document's blocks from the registry; print what changed."""
    dialects = registered()
    for path in documents:
        text = path.read_text(encoding="utf-8")
        new = rewrite(text, dialects)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
