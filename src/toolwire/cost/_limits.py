"""Usage limits checked as a run's streams arrive, and the meter that keeps its totals.

Theory of operation: a :class:`RunMeter` lives for one run. The agent tells
it of each step at a few clear points: a model request about to be sent
(:meth:`RunMeter.request`), each network read's decoded events while the
model streams (:meth:`RunMeter.watch`), the request's final usage
(:meth:`RunMeter.response`), and each batch of tool calls before it runs
(:meth:`RunMeter.tools`). Each raises :class:`~toolwire.errors.UsageLimitExceeded`
the moment a figure crosses its limit, so the agent stops *there*: mid-stream,
the stream is cancelled before the read's events are handed on, so no tool
call that arrived with or after the crossing starts.

While a request streams, its figures are what the stream has revealed: the
usage the provider reported so far (Anthropic reports its input at the start)
and, for output the provider has not counted yet, an estimate of about four
characters per token of streamed text, reasoning and tool-call arguments.
The request's final usage replaces the estimate.

A run's limits count the whole run: a resumed run's meter starts from the
:class:`~toolwire.cost.RunTotals` its journal recorded last
(:meth:`RunMeter.resumed`), so a run that suspends in one process and goes on
in another stops where the whole run crosses a limit.

A :class:`Budget` is a set of limits shared by every run it is given to (of
any agent in the process): each run's figures count against it as they
arrive, and a run that would cross it is stopped like one that crosses its
own limits.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Literal, cast

from toolwire.cost._prices import Prices
from toolwire.cost._rates import Cost
from toolwire.cost._totals import RunTotals
from toolwire.errors import UsageError, UsageLimitExceeded
from toolwire.events import (
    Event,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolCallReady,
    ToolCallStarted,
    UsageReported,
)
from toolwire.types import Usage

__all__ = ["Budget", "RunMeter", "UsageLimits"]

CHARS_PER_TOKEN = 4
"""The estimate of streamed output not yet counted by the provider."""

_LIMITS = ("input_tokens", "output_tokens", "cost", "model_requests", "tool_calls", "wall_time")


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageLimits:
    """The most a run (or a :class:`Budget`) may use; ``None`` is no limit.

    A run's limits count the whole run, over every process that runs it (a
    run resumed after an approval or a crash goes on from what it had used).

    Args:
        input_tokens: input tokens over all model requests.
        output_tokens: output tokens (reasoning included) over all requests.
        cost: US dollars. It needs a price for the model: a run whose model
            has none (no ``toolwire[cost]``, a model the data does not have)
            is refused with :class:`~toolwire.errors.CostLimitUnpriced`
            before any request, unless ``unpriced="allow"``.
        model_requests: model requests sent (retries included).
        tool_calls: tool calls run.
        wall_time: seconds the run has run (in every process; the time it
            waits suspended between them does not count).
        unpriced: ``"refuse"`` (the default) or ``"allow"``: run under a
            cost limit without a price for the model, with one
            :class:`~toolwire.errors.UnpricedCostWarning`; a request of
            unknown cost then counts as nothing.
        clock: the clock ``wall_time`` is measured with (seconds;
            ``time.monotonic``); tests inject their own.

    Raises:
        UsageError: a negative or non-numeric limit, an unknown ``unpriced``.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: Decimal | float | None = None
    model_requests: int | None = None
    tool_calls: int | None = None
    wall_time: float | None = None
    unpriced: Literal["refuse", "allow"] = "refuse"
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.unpriced not in ("refuse", "allow"):
            raise UsageError(f"unpriced must be 'refuse' or 'allow', not {self.unpriced!r}")
        for name in _LIMITS:
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
                raise UsageError(f"the {name} limit must be a number, not {value!r}")
            if not value >= 0:
                raise UsageError(f"the {name} limit must be >= 0, not {value!r}")
        if self.cost is not None:
            object.__setattr__(self, "cost", Decimal(str(self.cost)))

    def to_dict(self) -> dict[str, float]:
        """The limits that are set, as JSON-ready numbers (what the journal records)."""
        return {n: float(getattr(self, n)) for n in _LIMITS if getattr(self, n) is not None}


@dataclass(slots=True)
class _Figures:
    """What was used: totals of finished requests and tool calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: Decimal = Decimal(0)
    model_requests: int = 0
    tool_calls: int = 0

    def add(self, usage: Usage | None, cost: Cost | None) -> None:
        if usage is not None:
            self.input_tokens += usage.input_tokens or 0
            self.output_tokens += usage.output_tokens or 0
        if cost is not None:
            self.cost += cost.total


class Budget:
    """Limits shared by every run it is given to: ``Agent(budget=...)``.

    Safe to share between runs of one process (asyncio tasks or threads).
    ``wall_time`` counts from the budget's creation.
    """

    def __init__(self, limits: UsageLimits) -> None:
        self.limits = limits
        self._used = _Figures()
        self._lock = threading.Lock()
        self._started = limits.clock()

    def __repr__(self) -> str:
        return f"Budget({self.limits!r}, used={self.used()!r})"

    def used(self) -> dict[str, float]:
        """What the runs have used so far (finished requests and tool calls)."""
        with self._lock:
            used = self._used
            return {
                "input_tokens": used.input_tokens,
                "output_tokens": used.output_tokens,
                "cost": float(used.cost),
                "model_requests": used.model_requests,
                "tool_calls": used.tool_calls,
            }

    def _charge(self, usage: Usage | None, cost: Cost | None, requests: int, calls: int) -> None:
        with self._lock:
            self._used.add(usage, cost)
            self._used.model_requests += requests
            self._used.tool_calls += calls

    def _snapshot(self) -> _Figures:
        with self._lock:
            used = self._used
            return _Figures(
                used.input_tokens,
                used.output_tokens,
                used.cost,
                used.model_requests,
                used.tool_calls,
            )


class RunMeter:
    """One run's usage, cost and limits (see the module doc).

    Args:
        model: the model the run's requests name (for prices).
        prices: how requests are priced (``None``: costs are unknown).
        provider: toolwire's provider name, for prices.
        base_url: the provider's base URL, for prices.
        limits: the run's limits (``None``: none).
        budget: limits shared with other runs.
    """

    def __init__(
        self,
        *,
        model: str,
        prices: Prices | None,
        provider: str | None = None,
        base_url: str | None = None,
        limits: UsageLimits | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.model = model
        self.prices = prices
        self.provider = provider
        self.base_url = base_url
        self.limits = limits
        self.budget = budget
        self.usage = Usage()
        """The run's usage over finished requests."""
        self.cost: Cost | None = Cost(total=Decimal(0))
        """The run's cost; ``None`` once a request's cost is unknown."""
        self._used = _Figures()
        self._clock = limits.clock if limits is not None else time.monotonic
        self._started = self._clock()
        self._carried = 0.0
        """Seconds the run ran before this process took it up."""
        self._at = datetime.now(timezone.utc)
        self._flight: _Flight | None = None
        self._cost_limited = (limits is not None and limits.cost is not None) or (
            budget is not None and budget.limits.cost is not None
        )
        self.checking = limits is not None or budget is not None
        """Whether a limit is checked as the stream comes (:meth:`watch`
        raises at the read that crosses it)."""
        self._timed = (limits is not None and limits.wall_time is not None) or (
            budget is not None and budget.limits.wall_time is not None
        )
        self.watching = limits is not None or budget is not None or prices is not None
        """Whether :meth:`watch` needs to see the stream's events: to check
        the limits, or to price what a stream revealed before it broke."""

    def resumed(self, totals: RunTotals) -> None:
        """Go on from what the earlier part of a resumed run used: its totals
        count toward the run's figures and its limits (not a budget's, which
        counts this process's runs)."""
        self.usage = totals.usage
        self.cost = totals.cost
        self._used = _Figures(
            input_tokens=totals.usage.input_tokens or 0,
            output_tokens=totals.usage.output_tokens or 0,
            cost=totals.known_cost,
            model_requests=totals.model_requests,
            tool_calls=totals.tool_calls,
        )
        self._carried = totals.wall_time

    def totals(self) -> RunTotals:
        """The run's totals so far, earlier processes included (what the
        journal records with each turn)."""
        used = self._used
        return RunTotals(
            usage=self.usage,
            cost=self.cost,
            known_cost=used.cost,
            model_requests=used.model_requests,
            tool_calls=used.tool_calls,
            wall_time=self._elapsed(),
        )

    def _elapsed(self) -> float:
        """Seconds the run has run, earlier processes included."""
        return self._carried + max(0.0, self._clock() - self._started)

    # -- the steps ---------------------------------------------------------------

    def request(self, size: int | Callable[[], int] = 0) -> None:
        """A model request of ``size`` bytes is about to be sent (a function
        that gives the size is asked only when an estimate needs it).

        Raises:
            UsageLimitExceeded: it would cross the request limit, or the
                wall time is over.
        """
        self._at = datetime.now(timezone.utc)
        self._flight = _Flight(size=size)
        self._used.model_requests += 1
        if self.budget is not None:
            self.budget._charge(None, None, 1, 0)
        self._check(None)

    def watch(self, events: Iterable[Event]) -> None:
        """The events of one network read, before they are handed on. Each
        event that changes a figure is checked as it comes, so the error
        names the figure at the crossing, not at the end of the read.

        Raises:
            UsageLimitExceeded: a figure crossed its limit with this read.
        """
        flight = self._flight
        if flight is None:
            return
        checking = self.checking
        kinds = _KINDS
        # Each event's type is told by the table, so its fields are read as they are.
        for event in cast("Iterable[Any]", events):
            kind = kinds.get(type(event))
            if kind is None:
                kind = kinds[type(event)] = _kind(event)
            if kind == _TEXT:
                flight.chars += len(event.text)
            elif kind == _DELTA:
                size = len(event.delta)
                flight.chars += size
                flight.streamed[event.index] = flight.streamed.get(event.index, 0) + size
            elif kind == _STARTED:
                flight.chars += len(event.name or "")
            elif kind == _READY:
                if event.choice != 0:
                    continue
                flight.calls += 1
                # Arguments that arrived whole (no deltas) count when ready.
                raw = len(event.call.raw_arguments)
                flight.chars += max(0, raw - flight.streamed.get(event.call.index, 0))
            elif kind == _USAGE:
                flight.reported = event.usage
            else:
                continue
            if checking:
                self._check(flight)

    def response(self, usage: Usage | None) -> Cost | None:
        """The request ended (whole, or cut) with this final usage: count it;
        its cost (``None`` when unknown). Limits are checked by :meth:`check`."""
        flight, self._flight = self._flight, None
        if usage is None and flight is not None:
            usage = flight.usage()
        cost = self._price(usage)
        if usage is not None:
            self.usage = self.usage + usage
        if self.cost is not None:
            self.cost = None if cost is None else self.cost + cost
        self._used.add(usage, cost)
        if self.budget is not None:
            self.budget._charge(usage, cost, 0, 0)
        return cost

    def in_flight(self) -> Usage | None:
        """What the request being streamed has used so far (reported or estimated)."""
        return self._flight.usage() if self._flight is not None else None

    def time_left(self) -> float | None:
        """Seconds of wall time left (the run's or its budget's, the fewer);
        ``None`` without a wall-time limit."""
        if not self._timed:
            return None
        left = [maximum - elapsed for maximum, elapsed, _ in self._wall_times()]
        return max(0.0, min(left)) if left else None

    def wall_time_exceeded(self) -> UsageLimitExceeded:
        """The error of a stream cut because the wall time ran out."""
        maximum, elapsed, scope = min(self._wall_times(), key=lambda t: t[0] - t[1])
        return UsageLimitExceeded(
            "wall_time", maximum=maximum, value=max(elapsed, maximum), scope=scope
        )

    def _wall_times(self) -> list[tuple[float, float, str]]:
        """(limit, elapsed, scope) of each wall-time limit."""
        found: list[tuple[float, float, str]] = []
        if self.limits is not None and self.limits.wall_time is not None:
            found.append((self.limits.wall_time, self._elapsed(), "run"))
        budget = self.budget
        if budget is not None and budget.limits.wall_time is not None:
            elapsed = budget.limits.clock() - budget._started
            found.append((budget.limits.wall_time, elapsed, "budget"))
        return found

    def check(self) -> None:
        """Raise if the finished requests crossed a limit.

        Raises:
            UsageLimitExceeded: the first limit crossed.
        """
        self._check(None)

    def tools(self, count: int) -> None:
        """A batch of ``count`` tool calls is about to run.

        Raises:
            UsageLimitExceeded: it would cross the tool-call limit (then none
                of them runs).
        """
        self._used.tool_calls += count
        if self.budget is not None:
            self.budget._charge(None, None, 0, count)
        self._check(None)

    # -- checking ----------------------------------------------------------------

    def _price(self, usage: Usage | None) -> Cost | None:
        if self.prices is None:
            return None
        return self.prices.cost(
            self.model, usage, provider=self.provider, base_url=self.base_url, at=self._at
        )

    def _check(self, flight: _Flight | None) -> None:
        if not self.checking:
            return
        extra = _Figures()
        if flight is not None:
            usage = flight.usage()
            extra.add(usage, self._price(usage) if self._cost_limited else None)
            # The input limit counts reported input only (the request's size
            # estimates it for the cost alone).
            reported = flight.reported
            extra.input_tokens = (reported.input_tokens or 0) if reported is not None else 0
            extra.tool_calls = flight.calls
        detail = " (estimated while streaming)" if flight is not None else ""
        if self.limits is not None:
            _compare(self.limits, self._used, extra, self._elapsed(), "run", detail)
        if self.budget is not None:
            budget = self.budget
            elapsed = budget.limits.clock() - budget._started
            _compare(budget.limits, budget._snapshot(), extra, elapsed, "budget", detail)


@dataclass(slots=True)
class _Flight:
    """The request being streamed: what it revealed so far."""

    size: int | Callable[[], int] = 0
    """The request's size in bytes (or what gives it, asked once when needed)."""
    chars: int = 0
    calls: int = 0
    reported: Usage | None = None
    streamed: dict[int, int] = field(default_factory=dict[int, int])
    """Argument characters streamed per call index."""

    @property
    def input_estimate(self) -> int:
        size = self.size
        if not isinstance(size, int):
            size = self.size = size()
        return size // CHARS_PER_TOKEN

    def usage(self) -> Usage:
        estimate = -(-self.chars // CHARS_PER_TOKEN)
        reported = self.reported
        if reported is None:
            return Usage(input_tokens=self.input_estimate, output_tokens=estimate)
        output = max(reported.output_tokens or 0, estimate)
        return Usage(
            input_tokens=reported.input_tokens
            if reported.input_tokens is not None
            else self.input_estimate,
            output_tokens=output,
            cached_tokens=reported.cached_tokens,
            cache_write_tokens=reported.cache_write_tokens,
            reasoning_tokens=min(reported.reasoning_tokens or 0, output) or None,
        )


_TEXT, _DELTA, _STARTED, _READY, _USAGE, _OTHER = range(6)
_KINDS: dict[type, int] = {}
"""What :meth:`RunMeter.watch` counts of each event type, learnt on first sight."""


def _kind(event: Event) -> int:
    if isinstance(event, (TextDelta, ReasoningDelta)):
        return _TEXT
    if isinstance(event, ToolCallDelta):
        return _DELTA
    if isinstance(event, ToolCallStarted):
        return _STARTED
    if isinstance(event, ToolCallReady):
        return _READY
    if isinstance(event, UsageReported):
        return _USAGE
    return _OTHER


def _compare(
    limits: UsageLimits,
    used: _Figures,
    extra: _Figures,
    elapsed: float,
    scope: str,
    detail: str,
) -> None:
    figures: tuple[tuple[str, float | Decimal | None, float | Decimal], ...] = (
        ("model_requests", limits.model_requests, used.model_requests),
        ("input_tokens", limits.input_tokens, used.input_tokens + extra.input_tokens),
        ("output_tokens", limits.output_tokens, used.output_tokens + extra.output_tokens),
        ("cost", limits.cost, used.cost + extra.cost),
        ("tool_calls", limits.tool_calls, used.tool_calls + extra.tool_calls),
        ("wall_time", limits.wall_time, elapsed),
    )
    for name, maximum, value in figures:
        if maximum is not None and value > maximum:
            raise UsageLimitExceeded(
                name,
                maximum=float(maximum),
                value=float(value),
                scope=scope,
                detail=detail if name in ("input_tokens", "output_tokens", "cost") else "",
            )
