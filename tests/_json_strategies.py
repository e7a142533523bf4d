"""Shared test material for the JSON tests: value strategies, serializers, corpus arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

FIXTURES = Path(__file__).parent / "fixtures" / "conformance"

# Characters that make JSON strings hard: quotes, backslashes, control
# characters (escaped on output), astral characters (surrogate pairs when
# ensure_ascii=True), and the line separators JavaScript dislikes.
_HARD_CHARS = st.sampled_from(
    ['"', "\\", "/", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "€", "😀", "𝄞", "\u2028", "{", "}"]
)
json_text = st.text(st.one_of(st.characters(exclude_categories=["Cs"]), _HARD_CHARS), max_size=20)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(json_text, children, max_size=5),
    )


def _values(int_bound: int) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-int_bound, max_value=int_bound),
        st.integers(min_value=-1000, max_value=1000),
        st.floats(allow_nan=False, allow_infinity=False),
        json_text,
    )
    return st.recursive(scalars, _containers, max_leaves=25)


json_values = _values(10**30)
json_documents = _containers(json_values)
"""Top-level objects and arrays, as tool arguments are."""

# orjson (behind toolwire.stream.jsonio.loads) reads integers outside [-2**63, 2**64)
# as floats, so tests of code that parses with it stay within 64 bits.
json_values_int64 = _values(2**63 - 1)
json_documents_int64 = _containers(json_values_int64)

DUMP_STYLES: list[dict[str, Any]] = [
    {"separators": (",", ":"), "ensure_ascii": False},
    {"separators": (",", ":"), "ensure_ascii": True},
    {"ensure_ascii": True},
    {"indent": 2, "ensure_ascii": False},
    {"indent": "\t", "ensure_ascii": True},
]
dump_styles = st.sampled_from(DUMP_STYLES)


def corpus_arguments() -> list[tuple[str, Any]]:
    """Every client tool call's arguments in the conformance corpus, with an id."""
    found: list[tuple[str, Any]] = []
    for sidecar in sorted(FIXTURES.glob("*/*.json")):
        expected = json.loads(sidecar.read_text(encoding="utf-8")).get("expected") or {}
        for n, call in enumerate(expected.get("tool_calls") or []):
            found.append((f"{sidecar.parent.name}/{sidecar.stem}#{n}", call["arguments"]))
    return found
