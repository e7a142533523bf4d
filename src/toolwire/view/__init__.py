"""``toolwire view``: the journal in a browser, on your own machine.

:func:`create_app` is the web application (Starlette) that shows a
journal's runs, each run's timeline, and a run in progress live; it reads
the journal read-only and answers only requests that carry its access token.
:func:`serve` runs it with uvicorn on loopback. See ``docs/view.md``.
"""

from __future__ import annotations

from toolwire.view._app import COOKIE, ViewSettings, create_app
from toolwire.view._serve import serve

__all__ = ["COOKIE", "ViewSettings", "create_app", "serve"]
