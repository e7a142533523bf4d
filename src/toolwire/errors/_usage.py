"""The caller's mistakes, a run's usage limits, and a typed run's invalid output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolwire.errors._base import ToolwireError

__all__ = [
    "CassetteError",
    "CostLimitUnpriced",
    "OutputInvalid",
    "RegistrationError",
    "ScenarioError",
    "UnpricedCostWarning",
    "UsageError",
    "UsageLimitExceeded",
]


class UsageError(ToolwireError):
    """The caller used toolwire wrongly (an unknown option, a bad argument)."""

    type_name = "usage_error"


class CostLimitUnpriced(UsageError):
    """A cost limit toolwire cannot enforce: the run's model has no price
    (``toolwire[cost]`` is not installed, the price data does not have the
    model, or the agent prices nothing). Raised when the run starts, before
    any request is sent; the message says how to give a price. A run under
    ``UsageLimits(cost=..., unpriced="allow")`` goes on instead, with one
    :class:`UnpricedCostWarning`."""

    type_name = "cost_limit_unpriced"


class RegistrationError(UsageError):
    """A registry refused what it was given: a wire dialect that does not
    hold together (it declares a capability its codec lacks, or its name or
    paths clash with a registered dialect's), or a run observer with a method
    that looks like a hook but is none, or a hook of the wrong signature.
    Raised when the dialect is registered or the observer is given to an
    :class:`~toolwire.Agent`; the message names the dialect or observer and
    the piece at fault."""

    type_name = "registration_error"


class CassetteError(UsageError):
    """A cassette cannot be read or written."""

    type_name = "cassette_error"


class ScenarioError(UsageError):
    """A scenario cannot be loaded or cannot answer a request as scripted."""

    type_name = "scenario_error"


class UnpricedCostWarning(UserWarning):
    """A run goes on under a cost limit although its model has no price, as
    ``UsageLimits(unpriced="allow")`` asked: a request of unknown cost counts
    as nothing toward the limit. Warned once, when the run starts."""


class UsageLimitExceeded(ToolwireError):
    """A run crossed one of its usage limits (tokens, cost, model requests,
    tool calls, wall time): its stream was cancelled there, and no tool call
    that arrived after the crossing ran.

    Attributes:
        limit: the limit's name (``output_tokens``, ``cost``, ``wall_time``...).
        maximum: the limit's value.
        value: the figure that crossed it (an estimate while streaming, when
            the provider had not reported usage yet).
        scope: ``run``, or ``budget`` for a budget shared across runs.
    """

    type_name = "usage_limit_exceeded"

    def __init__(
        self, limit: str, *, maximum: float, value: float, scope: str = "run", detail: str = ""
    ) -> None:
        what = "the run's" if scope == "run" else f"the {scope}'s"
        super().__init__(f"{what} {limit} limit of {maximum:g} was crossed: {value:g}{detail}")
        self.limit = limit
        self.maximum = maximum
        self.value = value
        self.scope = scope

    def to_dict(self) -> dict[str, Any]:
        """``{"type", "message", "limit", "maximum", "value", "scope"}``."""
        return {
            **super().to_dict(),
            "limit": self.limit,
            "maximum": self.maximum,
            "value": self.value,
            "scope": self.scope,
        }


class OutputInvalid(ToolwireError):
    """A typed run (``output_type=``) ended without a valid output: the
    model's answer failed validation, was fed back with the errors, and
    ``output_retries`` ran out.

    Attributes:
        raw: the last answer's raw text (the JSON the model wrote, or a
            final-result tool call's arguments).
        errors: ``(path, message)`` pairs of the last validation.
        attempts: how many answers were refused.
    """

    type_name = "output_invalid"

    def __init__(
        self, message: str, *, raw: str, errors: Sequence[tuple[str, str]] = (), attempts: int = 1
    ) -> None:
        super().__init__(message)
        self.raw = raw
        self.errors = tuple(errors)
        self.attempts = attempts

    def to_dict(self) -> dict[str, Any]:
        """``{"type", "message", "raw", "errors", "attempts"}``."""
        return {
            **super().to_dict(),
            "raw": self.raw,
            "errors": [list(e) for e in self.errors],
            "attempts": self.attempts,
        }
