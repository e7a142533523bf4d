"""No module of src/toolwire is longer than a reader can hold: at most
``MAX_LINES`` lines (the house style says about 500; the margin lets a fix
land before the split it calls for). A module that grows past it is split
by idea, into helper modules or a composition, not by cutting a class in two."""

from __future__ import annotations

from pathlib import Path

import toolwire

SRC = Path(toolwire.__file__).resolve().parent
MAX_LINES = 520


def too_long(root: Path, most: int) -> list[str]:
    """``path: lines`` for each ``.py`` file under ``root`` longer than ``most`` lines."""
    found = []
    for path in sorted(root.rglob("*.py")):
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > most:
            found.append(f"{path.relative_to(root).as_posix()}: {count}")
    return found


def test_the_size_check_finds_a_long_module(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * 6)
    (tmp_path / "short.py").write_text("x = 1\n" * 5)
    assert too_long(tmp_path, 5) == ["pkg/long.py: 6"]


def test_no_module_is_longer_than_the_limit() -> None:
    assert len(list(SRC.rglob("*.py"))) > 100  # the package's own tree is read
    assert too_long(SRC, MAX_LINES) == []
