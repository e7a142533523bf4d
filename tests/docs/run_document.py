"""Run the code blocks of one Markdown document, each as a reader would copy it.

Usage: ``python run_document.py DOCUMENT REPORT``

Every Python block runs on its own: in a fresh ``__main__`` module, on an
event loop of its own, in an empty folder of its own, the way ``python -m
asyncio`` would run it (a top-level ``await`` or ``async for`` included). A
block marked ``<!-- continues -->`` goes on from the previous one instead:
same names, same loop, same folder. A shell block runs when each of its
commands is a ``toolwire`` command that is safe offline (``RUNNABLE``), in
the folder of the block before it; the others are only checked
(test_documents.py). Providers are pointed at toolwire's emulation server,
playing the ``quickstart`` scenario, through their base-URL variables
(``OPENAI_BASE_URL``...), exactly as a reader would point them; the keys
come from the environment the test gives. Blocks marked ``<!-- docs-test:
pytest -->`` are test files, run by pytest elsewhere. The report is JSON:
one ``{"line", "ok", "error"}`` per block run, stopping at the first failure.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import os
import subprocess
import sys
import traceback
import types
from pathlib import Path
from typing import Any

from _markdown import Block, blocks, commands, runnable

from toolwire.testing import EmulationServer, Scenario


class Session:
    """The state blocks share with their continuations: names, loop, folder."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        os.chdir(folder)
        self.module = types.ModuleType("__main__")
        self.module.__dict__["__builtins__"] = __builtins__
        sys.modules["__main__"] = self.module
        self.loop = asyncio.new_event_loop()

    def run_python(self, block: Block) -> None:
        code = compile(
            block.text, f"{block.path}:{block.line}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
        if code.co_flags & inspect.CO_COROUTINE:
            self.loop.run_until_complete(eval(code, self.module.__dict__))  # the document's code
        else:
            exec(code, self.module.__dict__)  # the document's own code

    def close(self) -> None:
        self.loop.close()


def run_shell(block: Block) -> None:
    for argv in commands(block):
        proc = subprocess.run(
            [sys.executable, "-m", "toolwire", *argv[1:]],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        print(proc.stdout, end="", flush=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr}")


def main() -> int:
    document, report = Path(sys.argv[1]), Path(sys.argv[2])
    scratch = Path.cwd()
    results: list[dict[str, Any]] = []
    session: Session | None = None
    with EmulationServer(Scenario.builtin("quickstart")) as server:
        os.environ["OPENAI_BASE_URL"] = server.url_for("openai-chat")
        os.environ["ANTHROPIC_BASE_URL"] = server.url_for("anthropic-messages")
        os.environ["GEMINI_BASE_URL"] = server.url_for("gemini")
        for block in filter(runnable, blocks(document)):
            print(f"--- {block.where}", flush=True)
            try:
                if block.continues and session is None:
                    raise ValueError("<!-- continues --> with no block before it")
                if block.language == "python":
                    if session is None or not block.continues:
                        if session is not None:
                            session.close()
                        session = Session(scratch / f"block-{block.line}")
                    session.run_python(block)
                else:
                    run_shell(block)
            except BaseException:
                results.append({"line": block.line, "ok": False, "error": traceback.format_exc()})
                break
            finally:
                sys.stdout.flush()
            results.append({"line": block.line, "ok": True, "error": None})
        if "ray" in sys.modules:
            sys.modules["ray"].shutdown()
    if session is not None:
        session.close()
    report.write_text(json.dumps(results), encoding="utf-8")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
