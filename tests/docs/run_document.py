"""Run the Python blocks of one Markdown document, as written, in order.

Usage: ``python run_document.py DOCUMENT REPORT``

The blocks run as one session (later blocks use what earlier ones defined,
as a reader following the page does) in a fresh ``__main__`` module, the
way ``python -m asyncio`` would run them: a block with a top-level ``await``
or ``async for`` runs on one event loop shared by the session. Providers are
pointed at toolwire's emulation server, playing the ``quickstart`` scenario,
through their base-URL variables (``OPENAI_BASE_URL``...), exactly as a
reader would point them; the keys come from the environment the test gives.
Blocks marked ``<!-- docs-test: pytest -->`` are test files, run by pytest
elsewhere. The report is JSON: one ``{"line", "ok", "error"}`` per block
run, stopping at the first failure (later blocks build on it).
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import os
import sys
import traceback
import types
from pathlib import Path
from typing import Any

from _markdown import Block, blocks

from toolwire.testing import EmulationServer, Scenario


def run_block(block: Block, module: types.ModuleType, loop: asyncio.AbstractEventLoop) -> None:
    code = compile(
        block.text, f"{block.path}:{block.line}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    )
    if code.co_flags & inspect.CO_COROUTINE:
        loop.run_until_complete(eval(code, module.__dict__))  # the document's own code
    else:
        exec(code, module.__dict__)  # the document's own code


def main() -> int:
    document, report = Path(sys.argv[1]), Path(sys.argv[2])
    python = [b for b in blocks(document) if b.language == "python" and b.directive != "pytest"]
    module = types.ModuleType("__main__")
    module.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = module
    loop = asyncio.new_event_loop()
    results: list[dict[str, Any]] = []
    with EmulationServer(Scenario.builtin("quickstart")) as server:
        os.environ["OPENAI_BASE_URL"] = server.url_for("openai-chat")
        os.environ["ANTHROPIC_BASE_URL"] = server.url_for("anthropic-messages")
        os.environ["GEMINI_BASE_URL"] = server.url_for("gemini")
        for block in python:
            print(f"--- {block.where}", flush=True)
            try:
                run_block(block, module, loop)
            except BaseException:
                results.append({"line": block.line, "ok": False, "error": traceback.format_exc()})
                break
            finally:
                sys.stdout.flush()
            results.append({"line": block.line, "ok": True, "error": None})
        if "ray" in sys.modules:
            sys.modules["ray"].shutdown()
    loop.close()
    report.write_text(json.dumps(results), encoding="utf-8")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
