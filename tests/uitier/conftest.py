"""The npm tier (``make test-ui``): the official JavaScript clients against
the real apps; left out of ``make test``, which must not need npm packages.
The Makefile target installs them and sets ``TOOLWIRE_UI_TIER=1``."""

from __future__ import annotations

import os

collect_ignore_glob = [] if os.environ.get("TOOLWIRE_UI_TIER") == "1" else ["test_*.py"]
