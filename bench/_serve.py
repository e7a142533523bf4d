"""The emulation server in a process of its own, for the benchmarks and the soak.

The server (what ``toolwire serve`` runs) listens on a free loopback port
with a scenario written to a temporary file; its "listening on" line gives
the URL, and a thread reads and drops its output so that the pipe never
fills. The process is terminated when the context exits.

Its idle and request-head timeouts are longer than a public server's: they
are there to shed slow or abandoned clients, and under a benchmark's load
(50 streams of 100 KB in 4-character chunks) a client's pooled connection
waits for its next request longer than the default 5 s, and a client that
does not retry (the floor, the peers) would fail on the connection the
server closed.
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

PATIENCE = 600.0
"""Seconds the server keeps an idle connection, or waits for a request head."""

_SERVER = f"""
import json, sys, threading
from toolwire.testing import EmulationServer, Scenario, ServerLimits

scenario = Scenario.from_dict(json.loads(open(sys.argv[1], encoding="utf-8").read()))
limits = ServerLimits(idle_timeout={PATIENCE}, header_timeout={PATIENCE})
with EmulationServer(scenario, limits=limits) as server:
    print("listening on", server.base_url, flush=True)
    threading.Event().wait()
"""


@contextmanager
def serve_process(script: dict[str, Any]) -> Iterator[str]:
    """``toolwire serve`` with ``script`` (a scenario's JSON shape); its base URL."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.json"
        path.write_text(json.dumps(script, ensure_ascii=False))
        proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER, str(path)],
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
