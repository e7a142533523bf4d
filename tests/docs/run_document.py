"""Run the code blocks of one Markdown document, each as a reader would copy it.

Usage: ``python run_document.py DOCUMENT REPORT``

Every Python block is a *session* of its own, with the blocks marked
``<!-- continues -->`` after it (see ``_markdown.sessions``). A session runs
the way a reader who copies it would run it, in an empty folder of its own,
and then a second time in the same folder, as a reader who tries it again
would:

- a session with a top-level ``await`` is pasted into ``python -m asyncio``
  (its standard input), and any traceback there fails it;
- any other session is saved as ``session.py`` and run as ``python session.py``.

A shell block runs when each of its commands is a ``toolwire`` command that
is safe offline (``RUNNABLE``), in the folder of the session before it; the
others are only checked (test_documents.py). Providers are pointed at
toolwire's emulation server, playing the ``quickstart`` scenario, through
their base-URL variables (``OPENAI_BASE_URL``...), exactly as a reader would
point them; the keys come from the environment the test gives. The report is
JSON: one ``{"line", "ok", "error"}`` per session or shell block run,
stopping at the first failure.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

from _markdown import Block, Session, commands, plan

from toolwire.testing import EmulationServer, Scenario

TIMEOUT = 300
"""Seconds one run of a session may take (Ray starts slowly on a busy machine)."""


REPL_ERROR = re.compile(r"^(Traceback \(most recent call last\)|[A-Z]\w*(Error|Exception)\b)", re.M)
"""What ``python -m asyncio`` prints, on standard error, for a line that
failed: it prints it and reads on, and exits 0."""


class BlockFailed(Exception):
    """A run of a block exited with an error, or printed a traceback."""


def run(argv: list[str], folder: Path, stdin: str | None = None) -> None:
    proc = subprocess.run(
        argv, cwd=folder, input=stdin, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )
    print(proc.stdout, end="", flush=True)
    if proc.returncode != 0 or (stdin is not None and REPL_ERROR.search(proc.stderr)):
        raise BlockFailed(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr[-6000:]}")


def run_session(session: Session, folder: Path) -> None:
    """Run ``session`` twice in ``folder``, as copied."""
    folder.mkdir(exist_ok=True)
    for _ in range(2):
        if session.awaits:
            run([sys.executable, "-m", "asyncio"], folder, stdin=session.pasted)
        else:
            (folder / "session.py").write_text(session.script, encoding="utf-8")
            run([sys.executable, "session.py"], folder)


def run_shell(block: Block, folder: Path) -> None:
    folder.mkdir(exist_ok=True)
    for argv in commands(block):
        run([sys.executable, "-m", "toolwire", *argv[1:]], folder)


def main() -> int:
    document, report = Path(sys.argv[1]), Path(sys.argv[2])
    scratch = Path.cwd()
    results: list[dict[str, Any]] = []
    folder = scratch / "page"
    with EmulationServer(Scenario.builtin("quickstart")) as server:
        os.environ["OPENAI_BASE_URL"] = server.url_for("openai-chat")
        os.environ["ANTHROPIC_BASE_URL"] = server.url_for("anthropic-messages")
        os.environ["GEMINI_BASE_URL"] = server.url_for("gemini")
        for step in plan(document):
            print(f"--- {step.where}", flush=True)
            try:
                if isinstance(step, Session):
                    folder = scratch / f"block-{step.line}"
                    run_session(step, folder)
                else:
                    run_shell(step, folder)
            except (BlockFailed, subprocess.TimeoutExpired, OSError):
                results.append({"line": step.line, "ok": False, "error": traceback.format_exc()})
                break
            results.append({"line": step.line, "ok": True, "error": None})
    report.write_text(json.dumps(results), encoding="utf-8")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
