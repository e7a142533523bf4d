"""The source compiles on the oldest Python toolwire supports (3.10), whose
``re`` has neither possessive quantifiers nor atomic groups: every pattern
written as a literal uses neither (``POSSESSIVE`` adds the mark on 3.11+)."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

import toolwire
from toolwire.stream.jsonio import POSSESSIVE

SRC = Path(toolwire.__file__).parent
# A quantifier followed by "+" (possessive), or an atomic group.
NEWER_SYNTAX = re.compile(r"(?<!\\)(?:[*+?}]\+|\(\?>)")
COMPILERS = {"compile", "match", "search", "fullmatch", "finditer", "findall", "sub", "split"}


def _literal_patterns(tree: ast.AST) -> list[str]:
    """The first argument of every ``re.<compiler>(...)`` call that is a plain string."""
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.func.attr in COMPILERS
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append(node.args[0].value)
    return found


def test_no_pattern_needs_python_3_11() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        for pattern in _literal_patterns(ast.parse(path.read_text(encoding="utf-8"))):
            if NEWER_SYNTAX.search(pattern):
                offenders.append(f"{path.relative_to(SRC)}: {pattern}")
    assert offenders == []


@pytest.mark.parametrize(
    "pattern", [r'"[^"\\]*+x', r"a++", r"a?+", r"a{2}+", r"(?>ab)", r"[ \t]*+\r"]
)
def test_the_check_sees_the_newer_syntax(pattern: str) -> None:
    (found,) = _literal_patterns(ast.parse(f"re.compile({pattern!r})"))
    assert NEWER_SYNTAX.search(found)


def test_escaped_plus_signs_are_not_newer_syntax() -> None:
    assert NEWER_SYNTAX.search(r"[+-]?\d+\+\d") is None


def test_possessive_is_used_where_re_has_it() -> None:
    assert POSSESSIVE == ("+" if sys.version_info >= (3, 11) else "")
    assert re.compile(f"a*{POSSESSIVE}b").fullmatch("aab")
