"""Fenced code blocks of a Markdown document, as written.

HTML comments on the lines just before a fence speak to the documentation
tests (docs/development.md, "Code blocks in the documentation"):

- ``<!-- continues -->``: the block goes on from the previous runnable block
  of the page (same names, same event loop, same folder); any other block
  runs on its own, as a reader who copies it alone would run it;
- ``<!-- docs-test: pytest -->``: the block is a test file, run by pytest.

A fence whose language is not ``python`` or a shell is never run (``text``
for output, ``json`` and ``yaml`` for files); a shell block runs when it is
made of ``toolwire`` commands that are safe offline (:func:`runnable`), and
the others are checked for commands and options that exist.
"""

from __future__ import annotations

import ast
import inspect
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "RUNNABLE",
    "SHELLS",
    "Block",
    "Session",
    "blocks",
    "commands",
    "inline_code",
    "plan",
    "runnable",
]

SHELLS = ("sh", "bash", "shell", "console")
RUNNABLE = ("demo", "runs")
"""The ``toolwire`` subcommands a shell block may run: offline, and writing
nowhere but the journal the tests give."""

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_COMMENT = re.compile(r"^<!--\s*(?P<what>[^>]*?)\s*-->$")
_DIRECTIVE = re.compile(r"^docs-test:\s*(?P<what>[\w=-]+)$")
_INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_ENV_PREFIX = re.compile(r"[A-Z_]+=\S*")


@dataclass(frozen=True)
class Block:
    """One fenced block."""

    path: Path
    line: int
    """The 1-based line of its first line of code."""
    language: str
    text: str
    directive: str | None = None
    continues: bool = False
    """Marked ``<!-- continues -->``: it goes on from the previous block."""

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


def _comments_above(lines: list[str], index: int) -> list[str]:
    """The HTML comments on the lines just above line ``index``."""
    found = []
    while index > 0 and (match := _COMMENT.match(lines[index - 1].strip())):
        found.append(match["what"])
        index -= 1
    return found


def blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, in order.

    Raises:
        ValueError: a fence is never closed, or a marker above a fence is
            misspelt.
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
        directive, continues = None, False
        for comment in _comments_above(lines, index):
            if comment == "continues":
                continues = True
            elif match := _DIRECTIVE.match(comment):
                directive = match["what"]
            elif comment.startswith(("docs-test", "contin")):
                raise ValueError(f"{path.name}:{index + 1}: <!-- {comment} --> is not a marker")
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
                directive=directive,
                continues=continues,
            )
        )
    return found


def commands(block: Block) -> list[list[str]]:
    """The argv of each command of a shell block (``VAR=value`` prefixes left
    out; ``&&``, ``;``, ``|`` and ``&`` separate commands)."""
    lines = block.text.replace("\\\n", " ").splitlines()
    if block.language == "console":  # only the prompts are commands
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    found: list[list[str]] = []
    for line in lines:
        command: list[str] = []
        for token in [*shlex.split(line, comments=True), "&&"]:
            if token in ("&&", "||", "|", ";", "&"):
                if command:
                    found.append(command)
                command = []
            elif command or not _ENV_PREFIX.fullmatch(token):
                command.append(token)
    return found


def runnable(block: Block) -> bool:
    """Whether the documentation tests run ``block``: a Python block (a test
    file is run by pytest instead), or a shell block whose every command is a
    ``toolwire`` command in :data:`RUNNABLE`."""
    if block.language == "python":
        return block.directive != "pytest"
    if block.language not in SHELLS:
        return False
    argvs = commands(block)
    return bool(argvs) and all(
        Path(argv[0]).name == "toolwire" and len(argv) > 1 and argv[1] in RUNNABLE for argv in argvs
    )


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


@dataclass(frozen=True)
class Session:
    """A Python block and the blocks marked ``<!-- continues -->`` after it:
    what a reader copies and runs in one go."""

    parts: tuple[Block, ...]

    @property
    def line(self) -> int:
        return self.parts[0].line

    @property
    def where(self) -> str:
        return self.parts[0].where

    @property
    def script(self) -> str:
        """The session saved as one file."""
        return "\n".join(part.text for part in self.parts)

    @property
    def pasted(self) -> str:
        """What a reader types into ``python -m asyncio``: each block pasted in
        turn, each followed by the Enter that ends its last statement."""
        return "".join(part.text + "\n" for part in self.parts)

    @property
    def awaits(self) -> bool:
        """Whether it has a top-level ``await`` (or ``async for``/``with``):
        then it runs in ``python -m asyncio``, not as a script."""
        code = compile(
            self.script, self.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
        )
        return bool(code.co_flags & inspect.CO_COROUTINE)


def plan(path: Path) -> list[Session | Block]:
    """What the documentation tests run of ``path``, in order: sessions, and
    the runnable shell blocks between them (a block that continues a session
    joins it, across any shell block between them).

    Raises:
        ValueError: a block marked ``<!-- continues -->`` has no Python block
            before it.
    """
    steps: list[Session | Block] = []
    for block in filter(runnable, blocks(path)):
        if block.language != "python":
            steps.append(block)
        elif not block.continues:
            steps.append(Session((block,)))
        else:
            last = [i for i, step in enumerate(steps) if isinstance(step, Session)]
            if not last:
                raise ValueError(
                    f"{block.where}: <!-- continues --> with no Python block before it"
                )
            session = steps[last[-1]]
            assert isinstance(session, Session)
            steps[last[-1]] = Session((*session.parts, block))
    return steps
