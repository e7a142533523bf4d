"""One call's way through the toolbox: approval, attempts, fallback, result.

Theory of operation: a :class:`CallRun` carries everything about one call of
a batch (the call, its tool, its validated arguments, its idempotency key, its
deadline, when it started, how many attempts it made) so that each step reads
what it needs from one place. :meth:`CallRun.run` asks for approval first (one
prompt at a time per batch), then makes up to ``retries + 1`` attempts. Each
attempt holds a slot of the batch's limiter and runs under
``anyio.move_on_after(timeout)``: the runner is cancelled at the deadline (a
sync function's thread is abandoned: see :class:`~toolwire.tools.LocalRunner`),
and the call is reported as timed out then. Only transient errors are
retried (:func:`is_transient`), after the toolbox's :class:`~toolwire.Backoff`;
the fallback runs when the attempts are spent.

What goes back to the model is a short, actionable string. A failure the model
is told about is logged on ``toolwire.tools`` at INFO, in one line; its
traceback only at DEBUG, when the application asks for it. Exception messages
that do reach the model are scrubbed (:func:`~toolwire.tools.scrub`).
"""

from __future__ import annotations

import inspect
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from toolwire.content import Audio, Document, Image
from toolwire.errors import (
    ContentFetchFailed,
    ModelRetry,
    ProviderError,
    ToolArgumentsInvalid,
    ToolTimeout,
    TransportError,
)
from toolwire.tools._approval import Approval, ApprovalCallback, ApprovalRequest, ask_approval
from toolwire.tools._arguments import Prepared, describe_errors
from toolwire.tools._context import ToolContext, idempotency_key
from toolwire.tools._results import ToolErrorKind, ToolResult, make_result, to_content, to_parts
from toolwire.tools.log import log_failure
from toolwire.tools.redaction import describe_exception, traceback_text
from toolwire.tools.runners import ToolInvocation, ToolRunner, can_stop
from toolwire.types import InvalidToolCall, ToolCall

if TYPE_CHECKING:
    from toolwire.backoff import Backoff
    from toolwire.tools._tool import Tool

__all__ = ["Batch", "CallRun", "CallSettings", "ResultHook", "is_transient"]

logger = logging.getLogger("toolwire.tools")

ResultHook = Callable[[ToolCall | InvalidToolCall, ToolResult], Awaitable[None]]
"""Told of each call's result as soon as it is final (``execute(on_result=...)``)."""


class CallSettings(Protocol):
    """What a call needs of the :class:`~toolwire.Toolbox` running it.

    The Toolbox satisfies it as it is; a protocol, because the toolbox's
    module imports this one."""

    @property
    def default_timeout(self) -> float | None: ...
    @property
    def backoff(self) -> Backoff: ...
    @property
    def runner(self) -> ToolRunner: ...
    @property
    def sleep(self) -> Callable[[float], Awaitable[Any]]: ...
    @property
    def random(self) -> Callable[[], float]: ...
    def budget(self, t: Tool | None) -> int: ...


_TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504, 529})


def _status_of(exc: BaseException) -> int | None:
    for candidate in (exc, getattr(exc, "response", None)):
        for attr in ("status_code", "status"):
            value = getattr(candidate, attr, None)
            if isinstance(value, int):
                return value
    return None


def is_transient(exc: BaseException) -> bool:
    """Whether an error may pass if the same call is tried again.

    True for connection errors, timeouts (the tool's own or ours), toolwire
    transport errors, ``httpx`` transport errors, and anything carrying an
    HTTP status of 408, 425, 429 or 5xx (``status_code``, ``status``, or
    ``response.status_code``). False for everything else, including
    :class:`toolwire.ModelRetry` and invalid arguments. An exception with a
    boolean ``transient`` attribute decides for itself.

    Args:
        exc: the exception a tool raised (or :class:`toolwire.ToolTimeout`).
    """
    if isinstance(exc, (ModelRetry, ToolArgumentsInvalid)):
        return False
    flag = getattr(exc, "transient", None)
    if isinstance(flag, bool):  # the error knows (a runner's infrastructure errors do)
        return flag
    if isinstance(exc, (ToolTimeout, TimeoutError, ConnectionError, TransportError)):
        return True
    httpx = sys.modules.get("httpx")
    if httpx is not None and isinstance(exc, httpx.TransportError):
        return True
    status = _status_of(exc)
    if status is not None:
        return status in _TRANSIENT_STATUS or 500 <= status < 600
    return isinstance(exc, ProviderError) and exc.status_code is None


@dataclass(slots=True)
class Batch:
    """What the calls of one ``execute()`` share."""

    run_id: str | None
    nonce: str
    """The run id, or a random one: idempotency keys derive from it."""
    metadata: Mapping[str, Any]
    idempotency_keys: Mapping[str, str]
    results: list[ToolResult | None]
    approve: ApprovalCallback | None
    on_result: ResultHook | None
    limiter: anyio.CapacityLimiter | None = None
    """Bounds how many calls run at once; ``None`` when the batch has no more
    calls to run than the bound (a limiter that never waits costs each call
    a trip through it)."""
    approval_lock: anyio.Lock | None = None
    """One approval prompt at a time; made when the first prompt is asked."""

    async def deliver(
        self, index: int, call: ToolCall | InvalidToolCall, result: ToolResult
    ) -> None:
        """Store a call's final result and tell the ``on_result`` hook."""
        self.results[index] = result
        if self.on_result is not None:
            await self.on_result(call, result)


class CallRun:
    """One call of a batch, from approval to its result.

    Args:
        toolbox: the toolbox running it (its runner, budgets and backoff).
        batch: what the calls of the batch share.
        index: the call's position in the batch.
        call: the call.
        tool: its tool.
        prepared: its validated arguments.
    """

    def __init__(
        self,
        toolbox: CallSettings,
        batch: Batch,
        index: int,
        call: ToolCall,
        tool: Tool,
        prepared: Prepared,
    ) -> None:
        self.toolbox = toolbox
        self.batch = batch
        self.index = index
        self.call = call
        self.tool = tool
        self.prepared = prepared
        explicit = batch.idempotency_keys.get(call.id)
        self.key = explicit if explicit is not None else idempotency_key(batch.nonce, call.id)
        self.timeout = tool.timeout if tool.timeout is not None else toolbox.default_timeout
        self.start = time.perf_counter()
        self.attempts = 0
        """How many times the tool function ran."""

    # -- results ------------------------------------------------------------

    def result(
        self, content: str, *, ok: bool, error: ToolErrorKind | None = None, **fields: Any
    ) -> ToolResult:
        """This call's result: its attempts, time and arguments filled in."""
        return make_result(
            self.call.id,
            self.call.name,
            content,
            budget=self.toolbox.budget(self.tool),
            ok=ok,
            error=error,
            arguments=self.prepared.arguments,
            attempts=self.attempts,
            elapsed=time.perf_counter() - self.start,
            **fields,
        )

    def success(self, value: Any, *, fallback_used: bool = False) -> ToolResult:
        parts = to_parts(value)
        if parts is not None:
            # Parts are sent as they are (each dialect checks its limits);
            # the text among them is cut to the budget like any result's.
            text = "\n".join(item for item in parts if isinstance(item, str))
            return self.result(text, ok=True, fallback_used=fallback_used, parts=parts)
        try:
            content, whole = to_content(value, self.toolbox.budget(self.tool))
        except Exception as exc:
            logger.exception(
                "result of tool %r call %s cannot be serialized", self.tool.name, self.call.id
            )
            return self.result(
                f"Error: the tool {self.tool.name!r} returned a value that cannot be sent "
                f"back ({type(exc).__name__}).",
                ok=False,
                error="failed",
                fallback_used=fallback_used,
            )
        return self.result(content, ok=True, fallback_used=fallback_used, whole=whole)

    def failure(self, error: BaseException, *, fallback_error: str | None = None) -> ToolResult:
        name, tries = self.tool.name, ""
        if self.attempts > 1:
            tries = f" after {self.attempts} attempts"
        kind: ToolErrorKind = "timeout" if isinstance(error, ToolTimeout) else "failed"
        if isinstance(error, ToolTimeout):
            head = f"Error: the tool {name!r} timed out{tries} ({error})."
        else:
            head = f"Error: the tool {name!r} failed{tries} ({describe_exception(error)})."
        if fallback_error is not None:
            head += f" Its fallback failed too ({fallback_error})."
        advice = (
            " It may work if you try again later; otherwise answer without it."
            if is_transient(error)
            else " Check the arguments or answer without this tool."
        )
        return self.result(
            head + advice,
            ok=False,
            error=kind,
            fallback_used=fallback_error is not None,
            traceback=None if isinstance(error, ToolTimeout) else traceback_text(error),
        )

    # -- the steps ----------------------------------------------------------

    async def run(self) -> None:
        """Run the call to its result, and deliver it to the batch."""
        self.start = time.perf_counter()
        try:
            result = await self._process()
        except Exception:
            # A defect in toolwire or in a callback: the batch must still
            # produce one result per call.
            logger.exception(
                "internal error while running tool %r call %s", self.tool.name, self.call.id
            )
            result = self.result(
                f"Error: the tool {self.tool.name!r} could not be run.", ok=False, error="failed"
            )
        if any(isinstance(p, (Image, Document, Audio)) and p.fetch for p in result.parts):
            result = await self._fetched(result)
        await self.batch.deliver(self.index, self.call, result)

    async def _fetched(self, result: ToolResult) -> ToolResult:
        """``result`` with its parts made with ``fetch`` fetched (before the
        result is journaled), or an error result naming the one that failed."""
        from toolwire.http.fetch import fetch_content  # httpx, loaded when needed

        try:
            return replace(result, parts=await fetch_content(result.parts))
        except ContentFetchFailed as exc:
            logger.info("tool %r call %s: %s", self.tool.name, self.call.id, exc)
            return self.result(
                f"Error: the tool {self.tool.name!r} returned a part that could not be fetched: "
                f"{exc.message}",
                ok=False,
                error="failed",
            )

    async def _process(self) -> ToolResult:
        if self.tool.requires_approval:
            refused = await self._approve()
            if refused is not None:
                return refused
        outcome = await self._attempt_all()
        if isinstance(outcome, ToolResult):
            return outcome
        if self.tool.fallback is not None:
            return await self._fallback(outcome)
        return self.failure(outcome)

    async def _approve(self) -> ToolResult | None:
        """Ask for approval; the result of a refusal, or ``None`` to go on."""
        decision = await self._ask()
        if decision.decision == "deny":
            reason = decision.reason or "the call was not approved"
            return self.result(
                f"This call to {self.tool.name!r} was denied and did not run. Reason: {reason}. "
                "Do not repeat it unchanged; ask the user how to proceed or take another "
                "approach.",
                ok=False,
                error="denied",
            )
        if decision.decision == "edit":
            edited, errors = self.tool.arguments.prepare(decision.arguments)
            if edited is None:
                content = "The approver edited the arguments, and the edit is invalid.\n"
                content += describe_errors(self.tool.name, errors)
                arguments = decision.arguments or {}
                return make_result(
                    self.call.id,
                    self.call.name,
                    content,
                    budget=self.toolbox.budget(self.tool),
                    ok=False,
                    error="invalid_arguments",
                    arguments=arguments,
                    elapsed=time.perf_counter() - self.start,
                )
            self.prepared = edited
        return None

    async def _ask(self) -> Approval:
        approve = self.batch.approve
        if approve is None:
            return Approval.deny("tools that require approval are denied: no approver is set up")
        request = ApprovalRequest(
            call_id=self.call.id,
            tool=self.tool,
            arguments=self.prepared.arguments,
            metadata=self.batch.metadata,
            run_id=self.batch.run_id,
            repaired=self.call.repaired,
        )
        # One prompt at a time: an interactive approver must not see two
        # questions interleaved.
        if self.batch.approval_lock is None:
            self.batch.approval_lock = anyio.Lock()
        async with self.batch.approval_lock:
            return await ask_approval(approve, request)

    async def _attempt_all(self) -> ToolResult | BaseException:
        """The attempts: a final result, or the error of the last one."""
        error: BaseException | None = None
        for attempt in range(1, self.tool.retries + 2):
            self.attempts = attempt
            try:
                value = await self._invoke(self.tool.function, self.tool.is_async)
            except (ModelRetry, ToolArgumentsInvalid) as exc:
                return self.result(
                    exc.message,
                    ok=False,
                    error="invalid_arguments",
                    model_retry=isinstance(exc, ModelRetry),
                )
            except ToolTimeout as exc:
                error = exc
                logger.info(
                    "tool %r call %s attempt %d: %s", self.tool.name, self.call.id, attempt, exc
                )
            except Exception as exc:
                error = exc
                log_failure(
                    logger,
                    f"tool {self.tool.name!r} call {self.call.id} attempt {attempt}",
                    exc,
                    describe_exception(exc),
                )
            else:
                return self.success(value)
            if attempt > self.tool.retries or not self._retryable(error):
                break
            await self._backoff(attempt, error)
        assert error is not None  # the loop runs at least once
        return error

    async def _backoff(self, attempt: int, error: BaseException) -> None:
        retry_after = getattr(error, "retry_after", None)
        delay = self.toolbox.backoff.delay(
            attempt,
            rand=self.toolbox.random(),
            retry_after=float(retry_after) if isinstance(retry_after, (int, float)) else None,
        )
        await self.toolbox.sleep(delay)

    def _retryable(self, error: BaseException) -> bool:
        rule = self.tool.retry_on
        if rule is None:
            return is_transient(error)
        if isinstance(rule, (type, tuple)):
            return isinstance(error, rule)
        try:
            return bool(rule(error))
        except Exception:
            logger.exception("retry_on predicate of tool %r failed", self.tool.name)
            return False

    async def _invoke(
        self, function: Callable[..., Any], is_async: bool, *, fallback: bool = False
    ) -> Any:
        """Run ``function`` once under the deadline.

        Raises:
            ToolTimeout: the deadline passed; ``stopped`` says whether the
                runner could stop the work (a sync function's thread cannot).
        """
        context_param = self.tool.fallback_context_param if fallback else self.tool.context_param
        ctx = ToolContext(
            call_id=self.call.id,
            idempotency_key=self.key,
            attempt=self.attempts + 1 if fallback else self.attempts,
            metadata=self.batch.metadata,
            tool_name=self.tool.name,
            run_id=self.batch.run_id,
        )
        kwargs = dict(self.prepared.kwargs)
        if context_param is not None:
            kwargs[context_param] = ctx
        invocation = ToolInvocation(
            tool=self.tool,
            function=function,
            args=self.prepared.args,
            kwargs=kwargs,
            is_async=is_async,
            context=ctx,
            fallback=fallback,
        )
        value: Any = None
        limiter = self.batch.limiter
        if limiter is not None:
            try:
                # A free slot is taken at once: no trip through the event loop.
                limiter.acquire_nowait()
            except anyio.WouldBlock:
                await limiter.acquire()
        try:
            with anyio.move_on_after(self.timeout) as scope:
                value = await self.toolbox.runner.run(invocation)
        finally:
            if limiter is not None:
                limiter.release()
        if scope.cancelled_caught:
            stopped = can_stop(self.toolbox.runner, invocation)
            what = "was cancelled" if stopped else "could not be stopped and may still finish"
            raise ToolTimeout(
                f"tool {self.tool.name!r} timed out after {self.timeout:g} s; it {what}",
                stopped=stopped,
            )
        return value

    async def _fallback(self, error: BaseException) -> ToolResult:
        fallback = self.tool.fallback
        assert fallback is not None
        logger.info(
            "tool %r call %s: running its fallback after %d attempts",
            self.tool.name,
            self.call.id,
            self.attempts,
        )
        try:
            value = await self._invoke(
                fallback, inspect.iscoroutinefunction(fallback), fallback=True
            )
        except ModelRetry as exc:
            return self.result(
                exc.message,
                ok=False,
                error="invalid_arguments",
                fallback_used=True,
                model_retry=True,
            )
        except ToolTimeout as exc:
            return self.failure(error, fallback_error=exc.message)
        except Exception as exc:
            log_failure(
                logger,
                f"fallback of tool {self.tool.name!r} call {self.call.id}",
                exc,
                describe_exception(exc),
            )
            return self.failure(error, fallback_error=describe_exception(exc))
        return self.success(value, fallback_used=True)
