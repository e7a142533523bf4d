"""The toolbox: exports tool schemas per provider and runs batches of tool calls.

Theory of operation: ``Toolbox.execute(calls)`` turns every call into exactly
one :class:`~toolwire.tools.ToolResult`, in call order, and never raises for
anything the model did wrong. A batch goes through three stages:

1. **Triage**, synchronous and cheap: an ``InvalidToolCall`` (arguments that
   were not JSON), an unknown tool name or arguments that fail validation get
   their result at once, and the function is never called. Identical calls
   (same tool, same validated arguments, whatever the key order of the
   model's JSON) are folded onto the first one: the batch is the one place
   that decides what is a duplicate.
2. **Scheduling**: the remaining calls run in one anyio task group (the first
   in the calling task, the others in tasks of their own), bounded by a
   :class:`anyio.CapacityLimiter` when there are more of them than
   ``max_concurrency``. A ``sequential`` tool is a barrier: the calls before
   it finish, it runs alone, then the calls after it start.
3. **Each call** (:class:`~toolwire.tools._call.CallRun`): approval, attempts
   under a deadline, retries of transient errors, the fallback.

*Where* a function body runs is the one thing left to a
:class:`~toolwire.tools.ToolRunner`; everything else is decided here, whatever
the runner.
"""

from __future__ import annotations

import difflib
import random as _random
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType
from typing import Any

import anyio

from toolwire.backoff import Backoff
from toolwire.errors import UnknownTool, UsageError
from toolwire.stream import jsonio
from toolwire.stream.codecs import registered
from toolwire.tools._approval import ApprovalCallback
from toolwire.tools._arguments import describe_errors
from toolwire.tools._call import Batch, CallRun, ResultHook
from toolwire.tools._results import ToolResult, make_result
from toolwire.tools._sources import ToolsChange, source_of
from toolwire.tools._tool import Tool, tool
from toolwire.tools.redaction import scrub
from toolwire.tools.runners import LocalRunner, ToolRunner
from toolwire.types import InvalidToolCall, ProviderDialect, ToolCall

__all__ = ["Toolbox"]

"""The provider schema dialects :meth:`Toolbox.schemas` can produce."""


TOOL_BACKOFF = Backoff(initial_delay=0.25, max_delay=8.0, jitter=0.5, max_retry_after=8.0)
"""The toolbox's default backoff between attempts of one call."""


def _canonical(arguments: Mapping[str, Any]) -> str:
    try:
        return jsonio.dumps(_sorted(arguments))
    except TypeError:
        return repr(sorted(arguments.items(), key=lambda kv: kv[0]))


def _repeated(names: list[str]) -> set[str]:
    """The names that occur more than once."""
    return {name for name, count in Counter(names).items() if count > 1}


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


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
        backoff: the wait between attempts of one call.
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
        backoff: Backoff | None = None,
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
        if runner is not None and not isinstance(runner, ToolRunner):
            raise UsageError(
                f"runner must have an async run(invocation) method, got {type(runner).__name__}"
            )
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
        self.backoff = backoff if backoff is not None else TOOL_BACKOFF
        self.sleep: Callable[[float], Awaitable[Any]] = sleep or anyio.sleep
        self.random: Callable[[], float] = random or _random.random
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

    @property
    def has_asynchronous(self) -> bool:
        """Whether a tool is declared asynchronous (``asynchronous=True``)."""
        return any(t.asynchronous for t in self._tools.values())

    def __repr__(self) -> str:
        return f"Toolbox({list(self._tools)!r})"

    def budget(self, t: Tool | None) -> int:
        """The result size budget of ``t`` (the toolbox's when it has none)."""
        if t is not None and t.max_result_chars is not None:
            return t.max_result_chars
        return self.max_result_chars

    @property
    def sources(self) -> dict[str, str | None]:
        """The protocol spoken with each source of the toolbox's tools (an
        MCP server's negotiated version), by the source's name."""
        found = {id(s): s for s in map(source_of, self) if s is not None}
        return {s.name: s.protocol for s in found.values()}

    async def refresh(self) -> list[ToolsChange]:
        """Take in the new tool list of each source that announced a change
        (an MCP server's ``tools/list_changed``): its tools are swapped for the
        ones it lists now, in place. The agent calls this before each turn.

        Returns:
            One change per source reloaded (none when nothing changed).

        Raises:
            UsageError: a new tool has the name of a tool of another source.
            RemoteProtocolError: a source's listing failed.
        """
        sources = {id(s): s for s in map(source_of, self) if s is not None and s.changed}
        changes: list[ToolsChange] = []
        for source in sources.values():
            fresh = await source.reload()
            old = [n for n, t in self._tools.items() if source_of(t) is source]
            kept = {n: t for n, t in self._tools.items() if source_of(t) is not source}
            for t in fresh:
                if t.name in kept:
                    raise UsageError(
                        f"{source.name!r} now lists a tool named {t.name!r}, the name of "
                        "another tool of the toolbox"
                    )
                kept[t.name] = t
            self._tools = kept
            names = [t.name for t in fresh]
            added = tuple(n for n in names if n not in old)
            removed = tuple(n for n in old if n not in names)
            changes.append(ToolsChange(source=source.name, added=added, removed=removed))
        return changes

    # -- schemas ------------------------------------------------------------

    def schemas(
        self, dialect: ProviderDialect | str, *, strict: bool | None = None
    ) -> list[dict[str, Any]]:
        """The value of a request's ``tools`` field in a provider's dialect.

        Args:
            dialect: a registered dialect that shapes tool schemas (its
                ``tool_schemas``): ``"openai-chat"``, ``"anthropic-messages"``,
                ``"gemini"``... (:data:`~toolwire.types.PROVIDER_DIALECTS`).
            strict: for the OpenAI dialects: ``None`` sends a strict-mode
                schema for each tool that allows one (and whose own ``strict``
                is not ``False``), ``True`` requires it for every tool,
                ``False`` never sends one.

        Raises:
            UsageError: an unknown dialect, or ``strict=True`` with a tool
                whose schema strict mode cannot express.
        """
        known = {d.name: d.tool_schemas for d in registered() if d.tool_schemas is not None}
        shape = known.get(dialect)
        if shape is None:
            raise UsageError(f"unknown schema dialect {dialect!r}; use one of {', '.join(known)}")
        return shape(list(self), strict)

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
        batch = Batch(
            run_id=run_id,
            nonce=run_id if run_id is not None else uuid.uuid4().hex,
            metadata=MappingProxyType(dict(metadata or {})),
            idempotency_keys=dict(idempotency_keys or {}),
            results=[None] * len(calls),
            approve=approve if approve is not None else self.approve,
            on_result=on_result,
        )
        runs, duplicate_of = await self._triage(calls, batch)
        if len(runs) > self.max_concurrency:
            batch.limiter = anyio.CapacityLimiter(self.max_concurrency)
        await _schedule(runs)
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
            await batch.deliver(index, calls[index], copy)
        results = [r for r in batch.results if r is not None]
        assert len(results) == len(calls)
        return results

    async def _triage(
        self, calls: list[ToolCall | InvalidToolCall], batch: Batch
    ) -> tuple[list[CallRun], dict[int, int]]:
        """Answer what cannot run, fold duplicates; the calls left to run, and
        each duplicate's original by position."""
        runs: list[CallRun] = []
        first_of: dict[tuple[str, str], int] = {}
        duplicate_of: dict[int, int] = {}
        # Only a tool called more than once in the batch can have duplicates:
        # the others' arguments need no canonical form.
        names = [call.name for call in calls]
        repeated = set() if len(set(names)) == len(names) else _repeated(names)
        for index, call in enumerate(calls):
            if isinstance(call, InvalidToolCall):
                await batch.deliver(index, call, self._invalid_json(call))
                continue
            t = self._tools.get(call.name)
            if t is None:
                await batch.deliver(index, call, self._unknown(call))
                continue
            if call.repaired and not t.accept_repaired:
                await batch.deliver(index, call, self._repaired(call, t))
                continue
            raw = None if call.repaired else call.raw_arguments
            prepared, errors = t.arguments.prepare(call.arguments, raw=raw)
            if prepared is None:
                await batch.deliver(index, call, self._invalid(call, t, errors))
                continue
            if t.dedupe and t.name in repeated:
                key = (t.name, _canonical(prepared.arguments))
                if key in first_of:
                    duplicate_of[index] = first_of[key]
                    continue
                first_of[key] = index
            runs.append(CallRun(self, batch, index, call, t, prepared))
        return runs, duplicate_of

    def _invalid_json(self, call: InvalidToolCall) -> ToolResult:
        content = (
            f"Error: the arguments of this call to {call.name!r} are not valid JSON "
            f"({scrub(call.error, limit=300)}). Nothing was run. Call the tool again with "
            "the arguments as a single JSON object that matches its schema."
        )
        budget = self.budget(self._tools.get(call.name))
        return make_result(
            call.id, call.name, content, budget=budget, ok=False, error="invalid_arguments"
        )

    def _repaired(self, call: ToolCall, t: Tool) -> ToolResult:
        content = (
            f"Error: the arguments of this call to {call.name!r} were not valid JSON as sent "
            "(a fence, a trailing comma or a missing closing bracket), and this tool does not "
            "run on arguments that had to be repaired. Nothing was run. Send the call again "
            "with its complete arguments as one valid JSON object."
        )
        return make_result(
            call.id, call.name, content, budget=self.budget(t), ok=False, error="invalid_arguments"
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
        args = call.arguments if isinstance(call.arguments, Mapping) else {}
        return make_result(
            call.id,
            call.name,
            content,
            budget=self.max_result_chars,
            ok=False,
            error="unknown_tool",
            arguments=args,
        )

    def _invalid(self, call: ToolCall, t: Tool, errors: list[tuple[str, str]]) -> ToolResult:
        args = call.arguments if isinstance(call.arguments, Mapping) else {}
        return make_result(
            call.id,
            call.name,
            describe_errors(t.name, errors),
            budget=self.budget(t),
            ok=False,
            error="invalid_arguments",
            arguments=args,
        )


async def _schedule(runs: list[CallRun]) -> None:
    """Run the calls concurrently, a ``sequential`` tool's call alone, as a
    barrier between the calls before and after it."""
    group: list[CallRun] = []
    for run in runs:
        if run.tool.sequential:
            await _run_group(group)
            group = []
            await _run_group([run])
        else:
            group.append(run)
    await _run_group(group)


async def _run_group(group: list[CallRun]) -> None:
    if not group:
        return
    if len(group) == 1:
        await group[0].run()
        return
    # The first call runs in this task, the others in tasks of their own: a
    # task fewer to start, and the calls still run concurrently. (Starting
    # each in this task while the ones before it finished without waiting,
    # a coroutine driven by hand, saved 1-3% of an agent run's CPU: too
    # little to keep; see docs/benchmarks.md.)
    async with anyio.create_task_group() as tg:
        for run in group[1:]:
            tg.start_soon(run.run)
        await group[0].run()
