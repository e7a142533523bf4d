"""The MCP Inspector tier (``make test-mcp-inspector``): the normal suite
must not need node; the Makefile target installs the Inspector under
``.tiers/inspector`` and sets ``TOOLWIRE_INSPECTOR`` to its CLI."""

from __future__ import annotations

import os

collect_ignore_glob = [] if os.environ.get("TOOLWIRE_INSPECTOR") else ["test_*.py"]
