"""Ray is an optional extra: the core install does not pull it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10, where mypy (a dev dependency) brings tomli
    import tomli as tomllib

PYPROJECT = Path(__file__).parents[2] / "pyproject.toml"


def names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\s<>=!~;\[]", r, maxsplit=1)[0].lower() for r in requirements}


def test_core_dependencies_stay_light() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    core = names(project["dependencies"])
    assert "ray" not in core
    assert not {n for n in core if n.startswith(("mcp", "opentelemetry"))}
    assert "ray" in names(project["optional-dependencies"]["ray"])


def test_make_test_installs_the_ray_extra() -> None:
    makefile = (PYPROJECT.parent / "Makefile").read_text(encoding="utf-8")
    extras = re.search(r"^\$\(STAMP\):.*\n\t.*-e '\.\[([^\]]+)\]'", makefile, re.M)
    assert extras is not None and "ray" in extras.group(1).split(",")


def test_make_demo_installs_the_core_alone() -> None:
    makefile = (PYPROJECT.parent / "Makefile").read_text(encoding="utf-8")
    demo = re.search(r"^demo: (\S+)$", makefile, re.MULTILINE)
    assert demo is not None
    stamp = demo.group(1).replace("$(VENV)", ".venv")
    recipe = re.search(
        r"^\$\(CORE_STAMP\):.*\n((?:\t.*\n)+)", makefile.replace(".venv", "$(VENV)"), re.MULTILINE
    )
    assert stamp == "$(CORE_STAMP)" and recipe is not None
    installs = [line for line in recipe.group(1).splitlines() if "pip install" in line]
    assert installs and all(line.rstrip().endswith("-e .") for line in installs)
