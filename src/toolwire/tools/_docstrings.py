"""Docstring parsing for tool descriptions.

Theory of operation: a tool's description is the docstring's text up to its
first section, and each parameter's description comes from the section that
documents arguments. Three common styles are recognised, line by line, with no
dependency:

* Google: ``Args:`` (or ``Arguments:``, ``Parameters:``, ``Params:``) followed
  by indented ``name (type): text`` entries whose continuation lines are
  indented further.
* NumPy: a ``Parameters`` heading underlined with dashes, then ``name : type``
  lines with the text indented below.
* Sphinx / reST: ``:param name: text`` or ``:param type name: text`` fields.

Other sections (``Returns``, ``Raises``, ``Examples``...) end the description
and are not sent to the model: the model needs to know *when* to call the tool
and what each argument means, not how the Python function signals errors.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["ParsedDocstring", "parse_docstring"]

_GOOGLE_ARGS = re.compile(
    r"^(args|arguments|parameters|params|keyword args|keyword arguments|kwargs)\s*:\s*$", re.I
)
_GOOGLE_OTHER = re.compile(
    r"^(returns?|yields?|raises?|exceptions?|examples?|notes?|warnings?|see also|"
    r"references?|attributes?|todo|methods?)\s*:\s*$",
    re.I,
)
_NUMPY_HEADINGS = {
    "parameters",
    "params",
    "other parameters",
    "keyword arguments",
    "returns",
    "yields",
    "raises",
    "warns",
    "see also",
    "notes",
    "references",
    "examples",
    "attributes",
    "methods",
}
_NUMPY_PARAM_HEADINGS = {"parameters", "params", "other parameters", "keyword arguments"}
_SPHINX_FIELD = re.compile(r"^:(\w+)(?:\s+([^:]*?))?:\s*(.*)$")
_GOOGLE_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")
_NUMPY_ENTRY = re.compile(r"^\*{0,2}(\w+)\s*(?::\s*(.*))?$")


@dataclass(slots=True)
class ParsedDocstring:
    """What a docstring says about a function."""

    description: str = ""
    """The text before the first section, paragraphs kept."""
    params: dict[str, str] = field(default_factory=dict[str, str])
    """Parameter name -> its description, continuation lines joined."""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _join(lines: list[str]) -> str:
    """Join continuation lines into one paragraph-preserving string."""
    paragraphs: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            paragraphs[-1].append(line.strip())
        elif paragraphs[-1]:
            paragraphs.append([])
    return "\n\n".join(" ".join(p) for p in paragraphs if p)


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Split a docstring into a description and per-parameter descriptions.

    Args:
        doc: the raw docstring (``func.__doc__``), or ``None``.

    Returns:
        The parsed docstring; empty when ``doc`` is empty.
    """
    result = ParsedDocstring()
    if not doc or not doc.strip():
        return result
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    i = 0
    n = len(lines)
    in_description = True
    while i < n:
        line = lines[i]
        stripped = line.strip()
        # NumPy heading: a known word followed by a line of dashes.
        if (
            i + 1 < n
            and stripped.lower() in _NUMPY_HEADINGS
            and re.fullmatch(r"-{3,}", lines[i + 1].strip())
        ):
            in_description = False
            heading = stripped.lower()
            i = _numpy_section(lines, i + 2, heading in _NUMPY_PARAM_HEADINGS, result)
            continue
        if _GOOGLE_ARGS.match(stripped) and _indent(line) == 0:
            in_description = False
            i = _google_section(lines, i + 1, result)
            continue
        if _GOOGLE_OTHER.match(stripped) and _indent(line) == 0:
            in_description = False
            i = _skip_indented(lines, i + 1)
            continue
        sphinx = _SPHINX_FIELD.match(stripped)
        if sphinx and _indent(line) == 0:
            in_description = False
            i = _sphinx_field(lines, i, sphinx, result)
            continue
        if in_description:
            description.append(line)
        i += 1
    result.description = _join(description)
    return result


def _skip_indented(lines: list[str], i: int) -> int:
    """Skip the body of a Google section: blank or indented lines."""
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > 0):
        i += 1
    return i


def _google_section(lines: list[str], i: int, result: ParsedDocstring) -> int:
    entry_indent: int | None = None
    name: str | None = None
    text: list[str] = []

    def flush() -> None:
        if name is not None:
            result.params[name] = _join(text)

    while i < len(lines):
        line = lines[i]
        if line.strip() and _indent(line) == 0:
            break
        if not line.strip():
            text.append("")
            i += 1
            continue
        indent = _indent(line)
        if entry_indent is None:
            entry_indent = indent
        match = _GOOGLE_ENTRY.match(line.strip()) if indent == entry_indent else None
        if match:
            flush()
            name = match.group(1)
            text = [match.group(3)]
        else:
            text.append(line)
        i += 1
    flush()
    return i


def _numpy_section(lines: list[str], i: int, is_params: bool, result: ParsedDocstring) -> int:
    name: str | None = None
    text: list[str] = []

    def flush() -> None:
        if is_params and name is not None:
            # ``x, y : int`` documents two parameters at once.
            for part in name.split(","):
                if part.strip():
                    result.params[part.strip().lstrip("*")] = _join(text)

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if (
            i + 1 < len(lines)
            and stripped.lower() in _NUMPY_HEADINGS
            and re.fullmatch(r"-{3,}", lines[i + 1].strip())
        ):
            break
        if stripped and _indent(line) == 0:
            flush()
            match = _NUMPY_ENTRY.match(stripped) or re.match(r"^([\w, *]+?)\s*:\s*(.*)$", stripped)
            name = match.group(1) if match else stripped
            text = []
        else:
            text.append(line)
        i += 1
    flush()
    return i


def _sphinx_field(lines: list[str], i: int, match: re.Match[str], result: ParsedDocstring) -> int:
    kind, target, first = match.group(1), match.group(2), match.group(3)
    text = [first]
    i += 1
    while i < len(lines) and lines[i].strip() and _indent(lines[i]) > 0:
        text.append(lines[i])
        i += 1
    if kind in ("param", "parameter", "arg", "argument", "key", "keyword") and target:
        # ``:param int count:`` carries the type before the name.
        name = target.split()[-1].lstrip("*")
        result.params[name] = _join(text)
    return i
