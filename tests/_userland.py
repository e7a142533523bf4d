"""Running things as a user would: in a folder of their own, with a HOME of
their own (empty, so that a test can prove nothing was written there), with
none of the developer's keys, base URLs or journal setting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def user_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment as a user's: HOME and XDG_STATE_HOME at ``home``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL")) and k != "TOOLWIRE_JOURNAL"
    }
    env.update(HOME=str(home), XDG_STATE_HOME=str(home), PYTHONUNBUFFERED="1", **extra)
    return env


def run_pytest(
    test_file: Path, *, env: dict[str, str], basetemp: Path, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``pytest test_file`` in its folder, as the user's own test suite."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--basetemp={basetemp}",
            test_file.name,
        ],
        cwd=test_file.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
