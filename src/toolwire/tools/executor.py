"""The toolbox: exports tool schemas per provider and runs batches of tool calls.

Theory of operation: ``Toolbox.execute(calls)`` turns every call into exactly
one :class:`ToolResult`, in call order, and never raises for anything the model
did wrong. A batch goes through three stages:

1. **Triage**, synchronous and cheap: an ``InvalidToolCall`` (arguments that
   were not JSON), an unknown tool name or arguments that fail validation get
   their result at once, and the function is never called. Identical calls
   (same tool, same validated arguments) are folded onto the first one.
2. **Scheduling**: the remaining calls run in one anyio task group, bounded by
   a :class:`anyio.CapacityLimiter`. A ``sequential`` tool is a barrier: the
   calls before it finish, it runs alone, then the calls after it start.
3. **Each call**: the approval callback first (one prompt at a time), then up
   to ``retries + 1`` attempts. Each attempt holds a limiter slot and runs
   under ``anyio.move_on_after(timeout)``: an async tool is cancelled; a sync
   tool runs in a worker thread with ``abandon_on_cancel=True``, so the call is
   reported as timed out at the deadline and the thread's late result is
   dropped. Only transient errors are retried (see :func:`is_transient`),
   after an exponential backoff with jitter whose ``sleep`` is injectable;
   the fallback runs when the attempts are spent.

*Where* a function body runs is the one thing left to a :class:`ToolRunner`:
the default :class:`LocalRunner` does what stage 3 describes, and
``toolwire.ray.RayExecutor`` runs it as a Ray task. Everything else above is
decided here, whatever the runner.

What goes back to the model is a short, actionable string. A failure the
model is told about is logged on ``toolwire.tools`` at INFO, in one line; its
traceback only at DEBUG, when the application asks for it. Exception messages
that do reach the model are scrubbed of file paths, URLs' paths and queries,
and anything that looks like a credential.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import inspect
import logging
import random as _random
import re
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

import anyio
import anyio.to_thread
import pydantic_core

from toolwire import _json
from toolwire._log import log_failure
from toolwire.errors import (
    ModelRetry,
    ProviderError,
    ToolArgumentsInvalid,
    ToolTimeout,
    TransportError,
    UnknownTool,
    UsageError,
)
from toolwire.tools.registry import Tool, ToolContext, _Prepared, describe_errors, tool
from toolwire.types import InvalidToolCall, ToolCall

__all__ = [
    "Approval",
    "ApprovalCallback",
    "ApprovalRequest",
    "Dialect",
    "LocalRunner",
    "ResultHook",
    "RetryPolicy",
    "ToolErrorKind",
    "ToolInvocation",
    "ToolResult",
    "ToolRunner",
    "Toolbox",
    "ask_approval",
    "idempotency_key",
    "is_transient",
    "scrub",
]

logger = logging.getLogger("toolwire.tools")

ToolErrorKind: TypeAlias = Literal[
    "unknown_tool", "invalid_arguments", "timeout", "failed", "denied"
]
"""The category of a failed tool result."""

Dialect: TypeAlias = Literal["openai-chat", "openai-responses", "anthropic-messages", "gemini"]
"""The provider schema dialects :meth:`Toolbox.schemas` can produce."""

_DIALECTS: tuple[str, ...] = ("openai-chat", "openai-responses", "anthropic-messages", "gemini")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """The outcome of one tool call, ready to be sent back to the model."""

    call_id: str
    """The id of the call this result answers."""
    name: str
    """The tool name as the model called it."""
    ok: bool
    """False for every error; providers that can flag errors should."""
    content: str
    """The text for the model: the tool's output, or an actionable error."""
    error: ToolErrorKind | None = None
    """Why the call failed, or ``None`` when ``ok``."""
    attempts: int = 0
    """How many times the tool function ran (0 when it never did)."""
    elapsed: float = 0.0
    """Seconds from the start of the call's processing to its result."""
    truncated: bool = False
    """True when ``content`` was cut to the result budget."""
    fallback_used: bool = False
    """True when the content comes from (or the error is after) the fallback."""
    arguments: dict[str, Any] = field(default_factory=dict[str, Any])
    """The arguments actually used: validated, or as edited by an approver."""
    deduplicated_from: str | None = None
    """The call id whose result this one reuses (identical call in the batch)."""
    model_retry: bool = False
    """True when the tool raised :class:`toolwire.ModelRetry`."""

    @property
    def message(self) -> str:
        """The result as text for people: ``content`` itself, or for a failure
        the explanation inside its ``{"error", "message"}`` JSON."""
        if self.ok:
            return self.content
        try:
            payload = _json.loads(self.content)
        except ValueError:
            return self.content
        if isinstance(payload, dict) and isinstance(payload.get("message"), str):
            return str(payload["message"])
        return self.content

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "call_id": self.call_id,
            "name": self.name,
            "ok": self.ok,
            "content": self.content,
            "error": self.error,
            "attempts": self.attempts,
            "elapsed": self.elapsed,
            "truncated": self.truncated,
            "fallback_used": self.fallback_used,
            "arguments": self.arguments,
            "deduplicated_from": self.deduplicated_from,
            "model_retry": self.model_retry,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """What an approval callback is asked about."""

    call_id: str
    tool: Tool
    arguments: dict[str, Any]
    """The validated arguments the tool would run with."""
    metadata: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """The ``metadata`` passed to ``execute()``."""
    run_id: str | None = None

    @property
    def tool_name(self) -> str:
        """The name of the tool to approve."""
        return self.tool.name


@dataclass(frozen=True, slots=True)
class Approval:
    """An approver's decision: build it with :meth:`allow`, :meth:`deny` or :meth:`edit`."""

    decision: Literal["allow", "deny", "edit"]
    reason: str | None = None
    """Why the call was denied; sent to the model."""
    arguments: dict[str, Any] | None = None
    """The replacement arguments of an edit (validated again before use)."""

    @classmethod
    def allow(cls) -> Approval:
        """Run the call as the model asked."""
        return cls("allow")

    @classmethod
    def deny(cls, reason: str = "the call was not approved") -> Approval:
        """Do not run the call; the model is told ``reason``."""
        return cls("deny", reason=reason)

    @classmethod
    def edit(cls, arguments: Mapping[str, Any]) -> Approval:
        """Run the call with these arguments instead."""
        return cls("edit", arguments=dict(arguments))


ApprovalCallback: TypeAlias = Callable[
    [ApprovalRequest], "Approval | bool | Awaitable[Approval | bool]"
]
"""Decides on a ``requires_approval`` call: sync or async, an :class:`Approval`
or a bool."""

ResultHook: TypeAlias = Callable[["ToolCall | InvalidToolCall", ToolResult], Awaitable[None]]
"""Told of each call's result as soon as it is final (``execute(on_result=...)``)."""


async def ask_approval(approve: ApprovalCallback, request: ApprovalRequest) -> Approval:
    """Ask ``approve`` about ``request`` and make its answer an :class:`Approval`.

    ``True`` allows, ``False``/``None`` deny, an :class:`Approval` is kept; a
    callback that raises or answers anything else denies the call (and is
    logged), so a broken approver never lets a call through.
    """
    try:
        decision: Any = approve(request)
        if inspect.isawaitable(decision):
            decision = await decision
    except Exception:
        logger.exception(
            "approval callback failed for tool %r call %s", request.tool_name, request.call_id
        )
        return Approval.deny("the approval step failed, so the call was not run")
    if decision is True:
        return Approval.allow()
    if decision is False or decision is None:
        return Approval.deny()
    if not isinstance(decision, Approval):
        logger.error(
            "approval callback returned %r, not an Approval; denying", type(decision).__name__
        )
        return Approval.deny("the approval step gave no decision, so the call was not run")
    return decision


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """Exponential backoff with jitter between attempts of one call.

    The delay before retry ``n`` (1-based) is ``min(max_delay, base_delay *
    multiplier ** (n - 1))``, reduced by a random fraction up to ``jitter`` so
    that many clients failing together do not retry together. When the error
    carries a ``retry_after`` (a provider's ``Retry-After``), the delay is at
    least that, capped at ``max_delay``.
    """

    base_delay: float = 0.25
    max_delay: float = 8.0
    multiplier: float = 2.0
    jitter: float = 0.5
    """0 for no jitter, 1 for "full jitter" (anywhere between 0 and the cap)."""

    def delay(self, retry: int, *, rand: float, error: BaseException | None = None) -> float:
        """Seconds to wait before retry number ``retry``.

        Args:
            retry: 1 for the first retry.
            rand: a number in ``[0, 1)``.
            error: the error that caused the retry.
        """
        cap = min(self.max_delay, self.base_delay * self.multiplier ** max(retry - 1, 0))
        value = cap * (1.0 - self.jitter * rand)
        retry_after = getattr(error, "retry_after", None)
        if isinstance(retry_after, (int, float)) and retry_after > value:
            value = min(float(retry_after), self.max_delay)
        return max(value, 0.0)


# --------------------------------------------------------------------------
# where a tool function runs


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInvocation:
    """One run of a tool function (an attempt, or the fallback), ready to go.

    The toolbox has already validated the arguments, asked for approval and
    chosen the attempt; a :class:`ToolRunner` only has to call
    ``function(*args, **kwargs)`` somewhere and hand back what it returned.
    """

    tool: Tool
    """The tool being called (for its name and options; not sent anywhere)."""
    function: Callable[..., Any]
    """The tool's function, or its fallback."""
    args: tuple[Any, ...]
    """Validated positional-only arguments."""
    kwargs: dict[str, Any]
    """Validated keyword arguments, the :class:`ToolContext` included when the
    function declares one."""
    is_async: bool
    """Whether ``function`` is a coroutine function."""
    context: ToolContext
    """The call's context (also in ``kwargs`` if the function takes it)."""
    fallback: bool = False
    """True when ``function`` is the tool's fallback."""


@runtime_checkable
class ToolRunner(Protocol):
    """Where tool functions run: the one seam between a :class:`Toolbox` and
    the place the work happens.

    ``run`` is awaited inside the toolbox's timeout: when the deadline passes
    it is cancelled, and a runner must stop (or abandon) the work it started.
    Whatever it raises is what the tool raised, and is classified, retried
    and reported by the toolbox as for a local call.
    """

    async def run(self, invocation: ToolInvocation) -> Any:
        """Run ``invocation`` and return the function's return value."""
        ...


class LocalRunner:
    """Runs tools in this process: async functions are awaited on the event
    loop, sync functions run in a worker thread so the loop keeps serving the
    other calls. On timeout a sync function's thread is abandoned (a thread
    cannot be killed); its late result is never used."""

    async def run(self, invocation: ToolInvocation) -> Any:
        """Call the function here; see the class docstring."""
        function, args, kwargs = invocation.function, invocation.args, invocation.kwargs
        if invocation.is_async:
            value = await function(*args, **kwargs)
        else:
            value = await anyio.to_thread.run_sync(
                functools.partial(function, *args, **kwargs), abandon_on_cancel=True
            )
        if inspect.isawaitable(value):  # a sync callable that returned a coroutine
            value = await value
        return value

    def __repr__(self) -> str:
        return "LocalRunner()"


# --------------------------------------------------------------------------
# error classification and scrubbing

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


_URL = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*://[^\s/?#'\"<>]+)[^\s'\"<>]*")
_SECRETS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\b(?:ghp|gho|ghs|xox[abprs])[-_][A-Za-z0-9_\-]{8,}"),
    re.compile(r"\beyJ[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*"),  # JWT
    re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=\-]{6,}"),
    re.compile(
        r"(?i)\b(api[_-]?key|apikey|access[_-]?token|secret|password|passwd|pwd|token|"
        r"authorization|auth)(\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s,;&]+)"
    ),
    re.compile(r"\b[0-9a-fA-F]{32,}\b"),
    # Long base64-like runs that mix letters and digits (plain long words stay).
    re.compile(
        r"(?<![A-Za-z0-9+/_\-])(?=[A-Za-z0-9+/_\-]*\d)(?=[A-Za-z0-9+/_\-]*[A-Za-z])"
        r"[A-Za-z0-9+/_\-]{32,}={0,2}"
    ),
)
_POSIX_PATH = re.compile(r"(?<![\w:/.~-])(?:~|\.{1,2})?(?:/[\w.\-@+]+){2,}/?")
_WINDOWS_PATH = re.compile(r"\b[A-Za-z]:\\[^\s'\"<>]*")


def scrub(text: str, *, limit: int = 240, keep_paths: bool = False) -> str:
    """Remove what must never reach a model from an exception message.

    URLs keep their scheme and host (their path and query may hold tokens),
    file paths become ``<path>``, and anything shaped like a credential
    (``sk-...``, ``Bearer ...``, ``password=...``, JWTs, long hex or base64
    strings) becomes ``<redacted>``. The result is cut to ``limit`` characters.

    Args:
        text: the message.
        limit: the maximum length of the result.
        keep_paths: keep file and URL-less paths (``POST /v1/messages``): for
            the user's own records, where they help and reveal nothing.
    """
    text = _URL.sub(lambda m: m.group(1) + "/...", text)
    for pattern in _SECRETS:
        if pattern.groups >= 3:
            text = pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}<redacted>", text)
        elif pattern.groups == 1:
            text = pattern.sub(lambda m: f"{m.group(1)} <redacted>", text)
        else:
            text = pattern.sub("<redacted>", text)
    if not keep_paths:
        text = _WINDOWS_PATH.sub("<path>", text)
        text = _POSIX_PATH.sub("<path>", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe_exception(exc: BaseException) -> str:
    message = scrub(str(exc))
    name = type(exc).__name__
    return f"{name}: {message}" if message else name


def _to_content(value: Any) -> str:
    """The text form of a tool's return value."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    jsonable = pydantic_core.to_jsonable_python(value, fallback=str)
    return _json.dumps(jsonable)


def _truncate(content: str, limit: int) -> tuple[str, bool]:
    if len(content) <= limit:
        return content, False
    total = len(content)
    keep = limit
    note = ""
    for _ in range(3):  # the note's length depends on the numbers in it
        note = (
            f"\n\n[Result truncated: {total - keep} of {total} characters were cut. "
            "To see the rest, call the tool again with narrower arguments "
            "(a more specific query, a filter, a smaller limit or a later page).]"
        )
        keep = max(limit - len(note), 0)
    return content[:keep] + note, True


def _canonical(arguments: Mapping[str, Any]) -> str:
    try:
        return _json.dumps(_sorted(arguments))
    except TypeError:
        return repr(sorted(arguments.items(), key=lambda kv: kv[0]))


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


# --------------------------------------------------------------------------
# the toolbox


@dataclass(slots=True)
class _Job:
    index: int
    call: ToolCall
    tool: Tool
    prepared: _Prepared


@dataclass(slots=True)
class _Batch:
    run_id: str | None
    nonce: str
    metadata: Mapping[str, Any]
    idempotency_keys: Mapping[str, str]
    limiter: anyio.CapacityLimiter
    approval_lock: anyio.Lock
    results: list[ToolResult | None]
    approve: ApprovalCallback | None
    on_result: ResultHook | None

    async def settle(
        self, index: int, call: ToolCall | InvalidToolCall, result: ToolResult
    ) -> None:
        """Store a call's final result and tell the ``on_result`` hook."""
        self.results[index] = result
        if self.on_result is not None:
            await self.on_result(call, result)


def idempotency_key(run_id: str, call_id: str) -> str:
    """The idempotency key of a call: stable for the same run and call id, so
    a resumed run hands a tool the key its first attempt had."""
    digest = hashlib.sha256(f"{run_id}\x00{call_id}".encode()).hexdigest()
    return f"tw-{digest[:32]}"


class Toolbox:
    """A set of tools: schemas for each provider, and a safe parallel executor.

    Args:
        tools: :class:`Tool` objects, or plain functions (made tools with
            :func:`tool` defaults).
        max_concurrency: how many calls of one batch run at the same time.
        default_timeout: seconds per attempt for tools without a timeout
            (``None`` for no limit).
        max_result_chars: the result size budget for tools without their own.
        approve: called before each run of a ``requires_approval`` tool; sync
            or async, returns an :class:`Approval` (or a bool). Without it,
            such tools are denied.
        retry_policy: the backoff between attempts.
        sleep: the awaitable sleep used for backoff (tests pass a fake).
        random: a source of floats in ``[0, 1)`` for jitter.
        runner: where tool functions run (default :class:`LocalRunner`, in
            this process; ``toolwire.ray.RayExecutor`` runs them as Ray
            tasks). Every other behaviour stays the same.

    Raises:
        UsageError: two tools share a name, or an option is out of range.
    """

    def __init__(
        self,
        tools: Iterable[Tool | Callable[..., Any]] = (),
        *,
        max_concurrency: int = 8,
        default_timeout: float | None = 60.0,
        max_result_chars: int = 20_000,
        approve: ApprovalCallback | None = None,
        retry_policy: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[Any]] | None = None,
        random: Callable[[], float] | None = None,
        runner: ToolRunner | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise UsageError("max_concurrency must be >= 1")
        if default_timeout is not None and not default_timeout > 0:
            raise UsageError("default_timeout must be a positive number of seconds or None")
        if max_result_chars < 1:
            raise UsageError("max_result_chars must be >= 1")
        self._tools: dict[str, Tool] = {}
        for item in tools:
            t = item if isinstance(item, Tool) else tool(item)
            if t.name in self._tools:
                raise UsageError(f"two tools are named {t.name!r}; tool names must be unique")
            self._tools[t.name] = t
        self.max_concurrency = max_concurrency
        self.default_timeout = default_timeout
        self.max_result_chars = max_result_chars
        self.approve = approve
        self.retry_policy = retry_policy or RetryPolicy()
        self._sleep: Callable[[float], Awaitable[Any]] = sleep or anyio.sleep
        self._random: Callable[[], float] = random or _random.random
        if runner is not None and not isinstance(runner, ToolRunner):
            raise UsageError(
                f"runner must have an async run(invocation) method, got {type(runner).__name__}"
            )
        self.runner: ToolRunner = runner if runner is not None else LocalRunner()

    # -- the collection -----------------------------------------------------

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise UnknownTool(f"no tool named {name!r}") from None

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, in registration order."""
        return tuple(self._tools)

    def __repr__(self) -> str:
        return f"Toolbox({list(self._tools)!r})"

    # -- schemas ------------------------------------------------------------

    def schemas(
        self, dialect: Dialect | str, *, strict: bool | None = None
    ) -> list[dict[str, Any]]:
        """The value of a request's ``tools`` field in a provider's dialect.

        Args:
            dialect: ``"openai-chat"``, ``"openai-responses"``,
                ``"anthropic-messages"`` or ``"gemini"``.
            strict: for the OpenAI dialects: ``None`` sends a strict-mode
                schema for each tool that allows one (and whose own ``strict``
                is not ``False``), ``True`` requires it for every tool,
                ``False`` never sends one.

        Raises:
            UsageError: an unknown dialect, or ``strict=True`` with a tool
                whose schema strict mode cannot express.
        """
        if dialect not in _DIALECTS:
            raise UsageError(
                f"unknown schema dialect {dialect!r}; use one of {', '.join(_DIALECTS)}"
            )
        out: list[dict[str, Any]] = []
        if dialect == "gemini":
            from toolwire.tools._schema import to_gemini

            declarations: list[dict[str, Any]] = []
            for t in self:
                decl: dict[str, Any] = {"name": t.name}
                if t.description:
                    decl["description"] = t.description
                if t.parameters.get("properties"):
                    decl["parameters"] = to_gemini(t.parameters)
                declarations.append(decl)
            return [{"functionDeclarations": declarations}] if declarations else []
        for t in self:
            if dialect == "anthropic-messages":
                entry: dict[str, Any] = {"name": t.name}
                if t.description:
                    entry["description"] = t.description
                entry["input_schema"] = t.parameters
                out.append(entry)
                continue
            params, is_strict = self._openai_parameters(t, strict)
            fn: dict[str, Any] = {"name": t.name}
            if t.description:
                fn["description"] = t.description
            fn["parameters"] = params
            # The Responses API treats a missing ``strict`` as true, so it is
            # always sent explicitly.
            fn["strict"] = is_strict
            if dialect == "openai-chat":
                out.append({"type": "function", "function": fn})
            else:
                out.append({"type": "function", **fn})
        return out

    @staticmethod
    def _openai_parameters(t: Tool, strict: bool | None) -> tuple[dict[str, Any], bool]:
        if strict is False or (strict is None and t.strict is False):
            return t.parameters, False
        if t.strict_parameters is not None:
            return t.strict_parameters, True
        if strict:
            raise UsageError(
                f"tool {t.name!r} cannot have an OpenAI strict-mode schema: {t.strict_problem}"
            )
        return t.parameters, False

    # -- execution ----------------------------------------------------------

    async def execute(
        self,
        calls: Sequence[ToolCall | InvalidToolCall],
        *,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        idempotency_keys: Mapping[str, str] | None = None,
        approve: ApprovalCallback | None = None,
        on_result: ResultHook | None = None,
    ) -> list[ToolResult]:
        """Run a batch of tool calls; one result per call, in call order.

        The batch is the unit of de-duplication: identical calls (same tool,
        same validated arguments, whatever the key order or spacing of the
        model's JSON) run once, and the others get a copy of that result.

        Args:
            calls: the complete calls of one model turn (``InvalidToolCall``
                entries are answered without running anything).
            run_id: the run these calls belong to; idempotency keys derive
                from it and the call id, so they are the same on a resume.
            metadata: passed to tools in :attr:`ToolContext.metadata` and to
                the approval callback.
            idempotency_keys: explicit keys by call id (a journal passes the
                keys it recorded, so a resumed tool can detect a duplicate).
            approve: the approval callback for this batch, instead of the
                toolbox's own (an agent passes one that records each decision).
            on_result: awaited with each call and its result as soon as the
                result is final, before ``execute`` returns (an agent records
                outcomes and streams events through it).

        Returns:
            A list of :class:`ToolResult`, ``results[i]`` answering ``calls[i]``.

        Raises:
            UsageError: an item of ``calls`` is not a ``ToolCall`` or
                ``InvalidToolCall``.
        """
        calls = list(calls)
        for call in calls:
            if not isinstance(call, (ToolCall, InvalidToolCall)):
                raise UsageError(
                    f"execute() takes ToolCall and InvalidToolCall items, got {type(call).__name__}"
                )
        batch = _Batch(
            run_id=run_id,
            nonce=run_id if run_id is not None else uuid.uuid4().hex,
            metadata=MappingProxyType(dict(metadata or {})),
            idempotency_keys=dict(idempotency_keys or {}),
            limiter=anyio.CapacityLimiter(self.max_concurrency),
            approval_lock=anyio.Lock(),
            results=[None] * len(calls),
            approve=approve if approve is not None else self.approve,
            on_result=on_result,
        )
        jobs: list[_Job] = []
        first_of: dict[tuple[str, str], int] = {}
        duplicate_of: dict[int, int] = {}
        for index, call in enumerate(calls):
            if isinstance(call, InvalidToolCall):
                await batch.settle(index, call, self._invalid_json(call))
                continue
            t = self._tools.get(call.name)
            if t is None:
                await batch.settle(index, call, self._unknown(call))
                continue
            prepared, errors = t._prepare(call.arguments)
            if prepared is None:
                await batch.settle(index, call, self._invalid(call, t, errors, call.arguments))
                continue
            if t.dedupe:
                key = (t.name, _canonical(prepared.arguments))
                if key in first_of:
                    duplicate_of[index] = first_of[key]
                    continue
                first_of[key] = index
            jobs.append(_Job(index, call, t, prepared))

        group: list[_Job] = []
        for job in jobs:
            if job.tool.sequential:
                await self._run_group(group, batch)
                group = []
                await self._run_group([job], batch)
            else:
                group.append(job)
        await self._run_group(group, batch)

        for index, original in duplicate_of.items():
            source = batch.results[original]
            assert source is not None
            copy = replace(
                source,
                call_id=calls[index].id,
                attempts=0,
                elapsed=0.0,
                deduplicated_from=calls[original].id,
            )
            await batch.settle(index, calls[index], copy)
        results = [r for r in batch.results if r is not None]
        assert len(results) == len(calls)
        return results

    async def _run_group(self, group: list[_Job], batch: _Batch) -> None:
        if not group:
            return
        if len(group) == 1:
            await self._run_job(group[0], batch)
            return
        async with anyio.create_task_group() as tg:
            for job in group:
                tg.start_soon(self._run_job, job, batch)

    def _budget(self, t: Tool | None) -> int:
        if t is not None and t.max_result_chars is not None:
            return t.max_result_chars
        return self.max_result_chars

    def _result(
        self, call: ToolCall | InvalidToolCall, t: Tool | None, content: str, **fields: Any
    ) -> ToolResult:
        content, truncated = _truncate(content, self._budget(t))
        if not fields.get("ok", True):
            # A failure goes back as a small JSON object whose "error" names
            # the category, so a model (and code) can tell it from a result
            # on wires that have no error flag (OpenAI's role: tool).
            content = _json.dumps({"error": fields.get("error") or "failed", "message": content})
        return ToolResult(
            call_id=call.id, name=call.name, content=content, truncated=truncated, **fields
        )

    def _invalid_json(self, call: InvalidToolCall) -> ToolResult:
        content = (
            f"Error: the arguments of this call to {call.name!r} are not valid JSON "
            f"({scrub(call.error, limit=300)}). Nothing was run. Call the tool again with "
            "the arguments as a single JSON object that matches its schema."
        )
        return self._result(
            call, self._tools.get(call.name), content, ok=False, error="invalid_arguments"
        )

    def _unknown(self, call: ToolCall) -> ToolResult:
        shown = call.name if len(call.name) <= 64 else call.name[:61] + "..."
        if not call.name:
            content = "Error: this tool call has no tool name."
        else:
            content = f"Error: there is no tool named {shown!r}."
        close = difflib.get_close_matches(call.name, list(self._tools), n=1)
        if close:
            content += f" Did you mean {close[0]!r}?"
        if self._tools:
            content += f" Available tools: {', '.join(self._tools)}."
        else:
            content += " No tools are available."
        args = dict(call.arguments) if isinstance(call.arguments, Mapping) else {}
        return self._result(call, None, content, ok=False, error="unknown_tool", arguments=args)

    def _invalid(
        self,
        call: ToolCall,
        t: Tool,
        errors: list[tuple[str, str]],
        arguments: Any,
        *,
        edited: bool = False,
    ) -> ToolResult:
        content = describe_errors(t.name, errors)
        if edited:
            content = "The approver edited the arguments, and the edit is invalid.\n" + content
        args = dict(arguments) if isinstance(arguments, Mapping) else {}
        return self._result(call, t, content, ok=False, error="invalid_arguments", arguments=args)

    def _idempotency_key(self, call: ToolCall, batch: _Batch) -> str:
        explicit = batch.idempotency_keys.get(call.id)
        if explicit is not None:
            return explicit
        return idempotency_key(batch.nonce, call.id)

    async def _ask_approval(self, job: _Job, batch: _Batch) -> Approval:
        if batch.approve is None:
            return Approval.deny("tools that require approval are denied: no approver is set up")
        request = ApprovalRequest(
            call_id=job.call.id,
            tool=job.tool,
            arguments=job.prepared.arguments,
            metadata=batch.metadata,
            run_id=batch.run_id,
        )
        # One prompt at a time: an interactive approver must not see two
        # questions interleaved.
        async with batch.approval_lock:
            return await ask_approval(batch.approve, request)

    async def _run_job(self, job: _Job, batch: _Batch) -> None:
        start = time.perf_counter()
        try:
            result = await self._process(job, batch, start)
        except Exception:
            # A defect in toolwire or in a callback: the batch must still
            # produce one result per call.
            logger.exception(
                "internal error while running tool %r call %s", job.tool.name, job.call.id
            )
            result = self._result(
                job.call,
                job.tool,
                f"Error: the tool {job.tool.name!r} could not be run.",
                ok=False,
                error="failed",
                arguments=job.prepared.arguments,
                elapsed=time.perf_counter() - start,
            )
        await batch.settle(job.index, job.call, result)

    async def _process(self, job: _Job, batch: _Batch, start: float) -> ToolResult:
        call, t, prepared = job.call, job.tool, job.prepared
        if t.requires_approval:
            decision = await self._ask_approval(job, batch)
            if decision.decision == "deny":
                reason = decision.reason or "the call was not approved"
                return self._result(
                    call,
                    t,
                    f"This call to {t.name!r} was denied and did not run. Reason: {reason}. "
                    "Do not repeat it unchanged; ask the user how to proceed or take another "
                    "approach.",
                    ok=False,
                    error="denied",
                    arguments=prepared.arguments,
                    elapsed=time.perf_counter() - start,
                )
            if decision.decision == "edit":
                edited, errors = t._prepare(decision.arguments)
                if edited is None:
                    return replace(
                        self._invalid(call, t, errors, decision.arguments, edited=True),
                        elapsed=time.perf_counter() - start,
                    )
                prepared = edited

        timeout = t.timeout if t.timeout is not None else self.default_timeout
        key = self._idempotency_key(call, batch)
        attempts = 0
        error: BaseException | None = None
        for attempt in range(1, t.retries + 2):
            attempts = attempt
            ctx = ToolContext(
                call_id=call.id,
                idempotency_key=key,
                attempt=attempt,
                metadata=batch.metadata,
                tool_name=t.name,
                run_id=batch.run_id,
            )
            try:
                async with batch.limiter:
                    with anyio.move_on_after(timeout) as scope:
                        value = await self._invoke(
                            t, t.function, t.is_async, t.context_param, prepared, ctx
                        )
                if scope.cancelled_caught:
                    error = ToolTimeout(f"tool {t.name!r} timed out after {timeout:g} s")
                else:
                    return self._success(call, t, value, prepared, attempts, start)
            except (ModelRetry, ToolArgumentsInvalid) as exc:
                return self._result(
                    call,
                    t,
                    exc.message,
                    ok=False,
                    error="invalid_arguments",
                    attempts=attempts,
                    elapsed=time.perf_counter() - start,
                    arguments=prepared.arguments,
                    model_retry=isinstance(exc, ModelRetry),
                )
            except Exception as exc:
                error = exc
                log_failure(
                    logger,
                    f"tool {t.name!r} call {call.id} attempt {attempt}",
                    exc,
                    _describe_exception(exc),
                )
            else:
                logger.info(
                    "tool %r call %s attempt %d timed out after %g s",
                    t.name,
                    call.id,
                    attempt,
                    timeout,
                )
            if attempt > t.retries or not self._retryable(t, error):
                break
            delay = self.retry_policy.delay(attempt, rand=self._random(), error=error)
            await self._sleep(delay)

        assert error is not None
        kind: ToolErrorKind = "timeout" if isinstance(error, ToolTimeout) else "failed"
        if t.fallback is not None:
            return await self._run_fallback(
                call, t, prepared, error, kind, attempts, key, batch, start, timeout
            )
        return self._failure(call, t, prepared, error, kind, attempts, start)

    def _retryable(self, t: Tool, error: BaseException) -> bool:
        rule = t.retry_on
        if rule is None:
            return is_transient(error)
        if isinstance(rule, (type, tuple)):
            return isinstance(error, rule)
        try:
            return bool(rule(error))
        except Exception:
            logger.exception("retry_on predicate of tool %r failed", t.name)
            return False

    async def _invoke(
        self,
        t: Tool,
        function: Callable[..., Any],
        is_async: bool,
        context_param: str | None,
        prepared: _Prepared,
        ctx: ToolContext,
        *,
        fallback: bool = False,
    ) -> Any:
        kwargs = dict(prepared.kwargs)
        if context_param is not None:
            kwargs[context_param] = ctx
        invocation = ToolInvocation(
            tool=t,
            function=function,
            args=prepared.args,
            kwargs=kwargs,
            is_async=is_async,
            context=ctx,
            fallback=fallback,
        )
        return await self.runner.run(invocation)

    def _success(
        self,
        call: ToolCall,
        t: Tool,
        value: Any,
        prepared: _Prepared,
        attempts: int,
        start: float,
        *,
        fallback_used: bool = False,
    ) -> ToolResult:
        try:
            content = _to_content(value)
        except Exception as exc:
            logger.exception("result of tool %r call %s cannot be serialized", t.name, call.id)
            return self._result(
                call,
                t,
                f"Error: the tool {t.name!r} returned a value that cannot be sent "
                f"back ({type(exc).__name__}).",
                ok=False,
                error="failed",
                attempts=attempts,
                elapsed=time.perf_counter() - start,
                arguments=prepared.arguments,
                fallback_used=fallback_used,
            )
        return self._result(
            call,
            t,
            content,
            ok=True,
            attempts=attempts,
            elapsed=time.perf_counter() - start,
            arguments=prepared.arguments,
            fallback_used=fallback_used,
        )

    def _failure(
        self,
        call: ToolCall,
        t: Tool,
        prepared: _Prepared,
        error: BaseException,
        kind: ToolErrorKind,
        attempts: int,
        start: float,
        *,
        fallback_error: str | None = None,
    ) -> ToolResult:
        tries = f"after {attempts} attempts" if attempts > 1 else ""
        if kind == "timeout":
            head = f"Error: the tool {t.name!r} timed out {tries}".rstrip()
            head += f" ({error}); the operation was cancelled."
        else:
            head = f"Error: the tool {t.name!r} failed {tries}".rstrip()
            head += f" ({_describe_exception(error)})."
        if fallback_error is not None:
            head += f" Its fallback failed too ({fallback_error})."
        advice = (
            " It may work if you try again later; otherwise answer without it."
            if is_transient(error)
            else " Check the arguments or answer without this tool."
        )
        return self._result(
            call,
            t,
            head + advice,
            ok=False,
            error=kind,
            attempts=attempts,
            elapsed=time.perf_counter() - start,
            arguments=prepared.arguments,
            fallback_used=fallback_error is not None,
        )

    async def _run_fallback(
        self,
        call: ToolCall,
        t: Tool,
        prepared: _Prepared,
        error: BaseException,
        kind: ToolErrorKind,
        attempts: int,
        key: str,
        batch: _Batch,
        start: float,
        limit: float | None,
    ) -> ToolResult:
        assert t.fallback is not None
        logger.info(
            "tool %r call %s: running its fallback after %d attempts", t.name, call.id, attempts
        )
        ctx = ToolContext(
            call_id=call.id,
            idempotency_key=key,
            attempt=attempts + 1,
            metadata=batch.metadata,
            tool_name=t.name,
            run_id=batch.run_id,
        )
        fallback = t.fallback
        try:
            async with batch.limiter:
                with anyio.move_on_after(limit) as scope:
                    value = await self._invoke(
                        t,
                        fallback,
                        inspect.iscoroutinefunction(fallback),
                        t.fallback_context_param,
                        prepared,
                        ctx,
                        fallback=True,
                    )
            if scope.cancelled_caught:
                return self._failure(
                    call,
                    t,
                    prepared,
                    error,
                    kind,
                    attempts,
                    start,
                    fallback_error=f"timed out after {limit:g} s",
                )
        except ModelRetry as exc:
            return self._result(
                call,
                t,
                exc.message,
                ok=False,
                error="invalid_arguments",
                attempts=attempts,
                elapsed=time.perf_counter() - start,
                arguments=prepared.arguments,
                fallback_used=True,
                model_retry=True,
            )
        except Exception as exc:
            log_failure(
                logger, f"fallback of tool {t.name!r} call {call.id}", exc, _describe_exception(exc)
            )
            return self._failure(
                call,
                t,
                prepared,
                error,
                kind,
                attempts,
                start,
                fallback_error=_describe_exception(exc),
            )
        return self._success(call, t, value, prepared, attempts, start, fallback_used=True)
