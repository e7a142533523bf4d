"""The coding-agent tier (``make test-bridge``): the real Claude Code and
Codex CLIs through ``toolwire bridge``; left out of ``make test``, which must
not need npm packages. The Makefile target installs them and sets
``TOOLWIRE_BRIDGE_TIER=1``."""

from __future__ import annotations

import os

collect_ignore_glob = [] if os.environ.get("TOOLWIRE_BRIDGE_TIER") == "1" else ["test_*.py"]
