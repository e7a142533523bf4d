"""The emulation server in a process of its own, for the benchmarks and the soak.

``toolwire serve`` runs on a free loopback port with a scenario written to a
temporary file; its "listening on" line gives the URL, and a thread reads and
drops its per-request log so that the pipe never fills. The process is
terminated when the context exits.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["serve_process"]


@contextmanager
def serve_process(script: dict[str, Any]) -> Iterator[str]:
    """``toolwire serve`` with ``script`` (a scenario's JSON shape); its base URL."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.json"
        path.write_text(json.dumps(script, ensure_ascii=False))
        command = [sys.executable, "-c", "from toolwire.cli import main; main()"]
        proc = subprocess.Popen(
            [*command, "serve", "--port", "0", "--scenario", str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert proc.stdout is not None
        drain = threading.Thread(target=proc.stdout.read, daemon=True)
        try:
            base = ""
            for line in proc.stdout:
                if "listening on " in line:
                    base = line.split("listening on ", 1)[1].strip()
                    break
            if not base:
                raise RuntimeError(f"the emulation server did not start (exit {proc.wait()})")
            drain.start()
            yield base
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            if drain.is_alive():
                drain.join(timeout=30)
            proc.stdout.close()
