from __future__ import annotations

pytest_plugins = ["toolwire.testing.pytest_plugin"]
