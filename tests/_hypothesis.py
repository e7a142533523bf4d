"""Hypothesis's two profiles: ``quick`` for ``make unit``, ``thorough`` for ``make test``.

``TOOLWIRE_HYPOTHESIS`` chooses one (``thorough`` when unset); pytest's own
``--hypothesis-profile`` overrides it. A property test asks for its number
of examples with :func:`examples`, written as the thorough figure: the
quick profile runs a tenth of it (at least 3), from a fixed seed, so the
fast tier finds the same examples on every run.
"""

from __future__ import annotations

import os

from hypothesis import settings

__all__ = ["PROFILES", "examples", "load_profile"]

PROFILES = ("quick", "thorough")
_THOROUGH = 100

settings.register_profile("thorough", max_examples=_THOROUGH, deadline=None)
settings.register_profile("quick", max_examples=_THOROUGH // 10, deadline=None, derandomize=True)


def load_profile() -> str:
    """Load the profile ``TOOLWIRE_HYPOTHESIS`` names and return its name."""
    name = os.environ.get("TOOLWIRE_HYPOTHESIS") or "thorough"
    if name not in PROFILES:
        raise ValueError(f"TOOLWIRE_HYPOTHESIS={name!r}: expected one of {', '.join(PROFILES)}")
    settings.load_profile(name)
    return name


def examples(thorough: int) -> int:
    """The number of examples for a test that wants ``thorough`` of them in the
    thorough profile, scaled to the profile loaded now."""
    return max(3, thorough * settings.default.max_examples // _THOROUGH)
