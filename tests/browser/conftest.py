"""The browser tier (``make test-browser``): left out of ``make test``, which
must not need a browser; the Makefile target sets ``TOOLWIRE_BROWSER=1``."""

from __future__ import annotations

import os

collect_ignore_glob = [] if os.environ.get("TOOLWIRE_BROWSER") == "1" else ["test_*.py"]
