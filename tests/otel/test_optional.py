"""OpenTelemetry stays optional: the core never imports it, the core install
does not pull it, and without it ``toolwire.otel`` says how to get it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import requires
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def test_the_core_and_the_agent_import_no_opentelemetry() -> None:
    proc = python(
        "import sys\n"
        "import toolwire\n"
        "from toolwire import *\n"
        "import toolwire.agent, toolwire.observe, toolwire.providers, toolwire.testing\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'opentelemetry'))\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_without_opentelemetry_the_module_raises_a_usage_error() -> None:
    proc = python(
        "import sys\n"
        "sys.modules['opentelemetry'] = None  # as if it were not installed\n"
        "import toolwire\n"
        "try:\n"
        "    import toolwire.otel\n"
        "except toolwire.UsageError as exc:\n"
        "    print('UsageError:', exc)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("UsageError:")
    assert "pip install 'toolwire[otel]'" in proc.stdout


def test_the_core_install_stays_light_and_the_tests_install_the_extra() -> None:
    declared = requires("toolwire") or []
    core = " ".join(d for d in declared if "extra ==" not in d).lower()
    for heavy in ("opentelemetry", "ray", "mcp"):
        assert not re.search(rf"\b{heavy}\b", core), f"{heavy} in the core dependencies"
    extra = sorted(
        re.split(r"[<>=!~\[ ;]", d)[0] for d in declared if re.search(r"extra == .otel.", d)
    )
    assert extra == ["opentelemetry-api", "opentelemetry-sdk"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    # The test install (make test's $(STAMP)); make bench and make unit have their own.
    found = re.search(r"^\$\(STAMP\):.*\n\t.*pip install .*-e '\.\[([^\]]*)\]'", makefile, re.M)
    assert found is not None
    install = found.group(1)
    assert "otel" in install.split(",")
