"""The agent: :class:`Agent` (the public face, :mod:`toolwire.agent._agent`),
the pure decisions of a run (:mod:`toolwire.agent.loop`) and the driver that
carries them out (:mod:`toolwire.agent._driver`). A run's value types live in
:mod:`toolwire.run` and the observer protocol in :mod:`toolwire.observe`, so
that the journal and the observers can import them without the agent.
"""

from __future__ import annotations

from toolwire import _compat
from toolwire.agent._agent import *  # noqa: F403
from toolwire.agent._agent import __all__ as __all__


def __getattr__(name: str) -> object:
    """Older names, with a warning (see :mod:`toolwire._compat`)."""
    return _compat.renamed(__name__, name)
