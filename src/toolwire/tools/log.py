"""How toolwire logs a failure that it also reports another way.

A tool's exception goes back to the model as a result, and a batch run's
into the results file: the log gets one line at INFO, and the traceback
only at DEBUG, when the application asks for it. The ``toolwire`` logger
has a ``NullHandler``, so nothing is printed unless logging is configured.
"""

from __future__ import annotations

import logging

__all__ = ["log_failure"]


def log_failure(logger: logging.Logger, what: str, exc: BaseException, detail: str) -> None:
    """Log that ``what`` raised ``exc``, described as ``detail`` (already scrubbed)."""
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("%s raised %s", what, detail, exc_info=exc)
    else:
        logger.info("%s raised %s", what, detail)
