"""docs/architecture.md's "path of one streamed turn" is drawn from the code:
every ``module.py:Name`` it cites is a module under src/toolwire that has
that name (a class, a function, a method of a class)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import toolwire

SRC = Path(toolwire.__file__).resolve().parent
ARCHITECTURE = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
CITED = re.compile(r"([\w/]+)\.py:([\w.]+)")


def path_drawing(text: str) -> str:
    """The ```text block of the section "The path of one streamed turn"."""
    section = text.split("## The path of one streamed turn", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"^```text\n(.*?)^```", section, re.M | re.S)
    return block


def missing(block: str) -> list[str]:
    """The citations of ``block`` that name no module, or no name in it."""
    gone = []
    for path, dotted in CITED.findall(block):
        module_name = "toolwire." + path.replace("/", ".")
        if not (SRC / f"{path}.py").is_file():
            gone.append(f"{path}.py")
            continue
        value: object = importlib.import_module(module_name)
        for part in dotted.split("."):
            value = getattr(value, part, None)
            if value is None:
                gone.append(f"{path}.py:{dotted}")
                break
    return gone


def test_the_checker_finds_a_name_that_is_gone() -> None:
    block = "x  stream/decoder.py:StreamDecoder.feed\ny  stream/decoder.py:StreamDecoder.nope\n"
    block += "z  stream/nowhere.py:Thing\n"
    assert missing(block) == ["stream/decoder.py:StreamDecoder.nope", "stream/nowhere.py"]


def test_every_step_of_the_drawn_path_exists() -> None:
    block = path_drawing(ARCHITECTURE.read_text(encoding="utf-8"))
    assert len(CITED.findall(block)) >= 20
    assert missing(block) == []
