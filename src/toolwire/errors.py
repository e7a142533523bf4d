"""toolwire's exceptions.

Every error toolwire raises on purpose is a :class:`ToolwireError`, so a caller
can catch one type and know it came from here, never a bare ``KeyError`` from
provider data. The tree::

    ToolwireError
      ProtocolError                 the bytes on the wire do not make sense
        LocalProtocolError          we were asked to send something invalid
        RemoteProtocolError(.raw)   the provider sent something invalid
          StreamTruncated           the stream ended before its end marker
          ContinuationMismatch(.stream_id, .after)
                                    a reopened stream does not continue the
                                    stream it reopens
          TokenCountInvalid(.field, .value)
                                    a usage count that is not a count
      TransportError                the network failed us
        ConnectError
        ReadError
        TransportTimeout
      ProviderError(.provider, .status_code, .retry_after, .body, .code)
        RateLimited                 429
          RateHoldTooLong(.model, .asked, .ceiling)
                                    a 429 or a shared hold asks a wait past
                                    the rate limiter's ``max_hold``
        Overloaded                  503/529 and friends
        StreamErrorEvent            an error event inside a 200 stream
      ToolError                     raised by the tool layer for the caller
        UnknownTool
        ToolArgumentsInvalid
        ToolTimeout
        ToolFailed                  the tool raised; retries did not save it
          MCPToolError(.tool, .code)
                                    an MCP server's tool failed
          RayTaskFailed(.transient) Ray could not run the call
          RemoteToolError(.remote_type)
                                    stands for a Ray worker's exception that
                                    could not be pickled back
      ApprovalFailed                the approval callback raised
      UsageError                    the caller's mistake (bad option, bad call)
        CostLimitUnpriced           a cost limit on a model that has no price
        RegistrationError           a dialect or an observer that does not
                                    hold together, refused when given
        CassetteError               a cassette cannot be read or written
        ScenarioError               a scenario cannot load or answer
        ContentError                a content part (image, document, audio)
                                    toolwire will not make or send
          ContentNotSupported(.dialect, .place, .part)
                                    a dialect cannot carry this part here
          ContentLimitExceeded(.dialect, .limit, .maximum, .value)
                                    a part past a provider's documented limit
      UsageLimitExceeded(.limit, .maximum, .value)
                                    a run crossed one of its usage limits
      OutputInvalid(.raw, .errors, .attempts)
                                    a typed run's answers did not validate,
                                    its ``output_retries`` used up
      JournalError                  the journal cannot be read or written
        RunLeased                   another live process holds the run
          LeaseLost                 this worker's lease was taken over
        ApprovalRefused(.reason, .call_id)
                                    an answer to a suspended run that cannot
                                    be applied
      ArgumentsParseError(ValueError; .position, .line, .column)
                                    a tool call's arguments are not JSON
      PartialJSONError(ValueError)  streamed JSON that is invalid or cut
      BadRequest                    the emulation server's HTTP 400

    ModelRetry(Exception)           raised *by tools*: its message goes back to
                                    the model, which may try again

    UnpricedCostWarning(UserWarning)
                                    a run allowed to go on under a cost limit
                                    its model has no price for

    ValueError                      refusals of toolwire's own readers, kept
                                    ValueErrors for the code that catches them
      JSONLimitError                valid JSON past a limit (depth, digits)
      DuplicateKeyError(.key)       a JSON object that writes a key twice
      NotStrictCompatible           a schema OpenAI strict mode cannot express
                                    (the tool is sent non-strict)
      BadForm                       a viewer action's malformed form (a 400)
      BadQuery                      a viewer list's unknown parameter (a 400)

The agent raises these as they come (a broken stream whose retries ran out
raises the stream's own error); reaching the turn limit is not an error but
a run outcome, ``RunResult.outcome == "max_turns"``.

Messages never contain API keys: provider bodies are stored as received, and
request headers are never part of an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Protocol

__all__ = [
    "ApprovalFailed",
    "ApprovalRefused",
    "ArgumentsParseError",
    "BadForm",
    "BadQuery",
    "BadRequest",
    "CassetteError",
    "ConnectError",
    "ContentError",
    "ContentLimitExceeded",
    "ContentNotSupported",
    "ContinuationMismatch",
    "CostLimitUnpriced",
    "DuplicateKeyError",
    "JSONLimitError",
    "JournalError",
    "LeaseLost",
    "LocalProtocolError",
    "MCPToolError",
    "ModelRetry",
    "NotStrictCompatible",
    "OutputInvalid",
    "Overloaded",
    "PartialJSONError",
    "ProtocolError",
    "ProviderError",
    "RateHoldTooLong",
    "RateLimited",
    "RayTaskFailed",
    "ReadError",
    "Refusal",
    "RegistrationError",
    "RemoteProtocolError",
    "RemoteToolError",
    "RunLeased",
    "ScenarioError",
    "StreamErrorEvent",
    "StreamTruncated",
    "TokenCountInvalid",
    "ToolArgumentsInvalid",
    "ToolError",
    "ToolFailed",
    "ToolTimeout",
    "ToolwireError",
    "TransportError",
    "TransportTimeout",
    "UnfinishedCall",
    "UnknownTool",
    "UnpricedCostWarning",
    "UsageError",
    "UsageLimitExceeded",
]


class ToolwireError(Exception):
    """Base class of every error toolwire raises."""

    #: A short machine-readable name, used in ``--json`` output and results.
    type_name = "toolwire_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description: ``{"type", "message"}`` plus subclass details."""
        return {"type": self.type_name, "message": self.message}


class ProtocolError(ToolwireError):
    """The bytes exchanged with the provider do not follow its protocol."""

    type_name = "protocol_error"


class LocalProtocolError(ProtocolError):
    """We were asked to build a request the protocol cannot express."""

    type_name = "local_protocol_error"


class RemoteProtocolError(ProtocolError):
    """The provider sent bytes that do not follow its protocol.

    Attributes:
        raw: the offending piece of input (truncated to 500 characters), if any.
    """

    type_name = "remote_protocol_error"

    def __init__(self, message: str, *, raw: str | bytes | None = None) -> None:
        super().__init__(message)
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        self.raw = raw[:500] if raw is not None else None

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        if self.raw is not None:
            d["raw"] = self.raw
        return d


class UnfinishedCall(Protocol):
    """What :class:`StreamTruncated` reports of a call that was still being
    streamed: an :class:`~toolwire.types.IncompleteToolCall` (this module
    sits below the value types, so it names only what it uses)."""

    @property
    def id(self) -> str | None:
        """The provider's id, if it had sent one."""
        ...

    @property
    def name(self) -> str | None:
        """The tool's name, if it had arrived."""
        ...

    @property
    def raw_arguments(self) -> str:
        """The argument text received so far."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``inspect --json``."""
        ...


class StreamTruncated(RemoteProtocolError):
    """The stream ended before the provider said it was complete.

    Attributes:
        incomplete_tool_calls: the calls that were still being streamed. They
            are never executed; they are listed so the caller can report them.
    """

    type_name = "stream_truncated"

    def __init__(
        self,
        message: str,
        *,
        incomplete_tool_calls: Sequence[UnfinishedCall] | None = None,
    ) -> None:
        super().__init__(message)
        self.incomplete_tool_calls: list[UnfinishedCall] = list(incomplete_tool_calls or [])

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["incomplete_tool_calls"] = [c.to_dict() for c in self.incomplete_tool_calls]
        return d


class ContinuationMismatch(RemoteProtocolError):
    """A stream reopened after a cut (or read again from its first event)
    sent an event that does not continue the stream it reopens: one at or
    before the last event already read, one read twice, or one of another
    response or interaction. Nothing of the reopened stream is used: its
    turn failed, as a cut one does.

    Attributes:
        stream_id: the id of the stream that was reopened.
        after: the id of the last event read of it before (``None``: it was
            read from its first event).
    """

    type_name = "continuation_mismatch"

    def __init__(
        self, message: str, *, stream_id: str, after: str | None, raw: str | bytes | None = None
    ) -> None:
        super().__init__(message, raw=raw)
        self.stream_id = stream_id
        self.after = after

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["stream_id"] = self.stream_id
        d["after"] = self.after
        return d


class TokenCountInvalid(RemoteProtocolError):
    """The provider's usage holds a count that cannot be one: negative, not
    a whole number (``2.5``, ``NaN``, infinite), a bool, not a number at all,
    or absurdly large. A count is never dropped or clamped silently: it
    would let a run through its token or cost limits, or price it wrong.

    Attributes:
        field: the usage member, as the provider names it
            (``completion_tokens``, ``usageMetadata.candidatesTokenCount``).
        value: the value it held, as decoded.
    """

    type_name = "token_count_invalid"

    def __init__(self, message: str, *, field: str, value: Any) -> None:
        super().__init__(message, raw=repr(value))
        self.field = field
        self.value = value

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["field"] = self.field
        d["value"] = repr(self.value)
        return d


class TransportError(ToolwireError):
    """The network failed before or while talking to the provider."""

    type_name = "transport_error"


class ConnectError(TransportError):
    """Could not connect to the provider."""

    type_name = "connect_error"


class ReadError(TransportError):
    """The connection broke while reading the response."""

    type_name = "read_error"


class TransportTimeout(TransportError):
    """A connect, read or total timeout expired."""

    type_name = "timeout"


class ProviderError(ToolwireError):
    """The provider answered with an error.

    Attributes:
        provider: which provider or dialect answered (``"openai-chat"``...).
        status_code: the HTTP status, or the status the error event reports.
        retry_after: seconds to wait before trying again, when the provider said.
        body: the provider's error payload as received (never our request).
        code: the provider's own error code (``"tool_use_failed"``...), if any.
    """

    type_name = "provider_error"

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        status_code: int | None = None,
        retry_after: float | None = None,
        body: Any = None,
        code: str | None = None,
        error_type: str | None = None,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.status_code = status_code
        self.retry_after = retry_after
        self.body = body
        self.code = code
        self.error_type = error_type

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        for key in ("provider", "status_code", "retry_after", "code", "error_type"):
            value = getattr(self, key)
            if value is not None:
                d[key] = value
        return d


class RateLimited(ProviderError):
    """HTTP 429: too many requests."""

    type_name = "rate_limited"


class RateHoldTooLong(RateLimited):
    """A rate-limit hold longer than the limiter's ceiling (``max_hold``): a
    429's ``Retry-After``, or a hold another worker left in a shared store.
    The request fails rather than wait (it is not sent, or not sent again);
    the hold kept for the model is cut to the ceiling (``toolwire rates lift
    MODEL`` lifts a shared one at once).

    Attributes:
        model: the model held.
        host: the provider host.
        asked: the seconds of the hold asked for.
        ceiling: the limiter's ``max_hold``, in seconds.
    """

    type_name = "rate_hold_too_long"

    def __init__(self, *, model: str, host: str, asked: float, ceiling: float) -> None:
        super().__init__(
            f"the rate limit of {model!r} at {host} asks a wait of {asked:.0f} s, past the "
            f"ceiling of {ceiling:g} s (RateLimiter(max_hold=...)): the request fails rather "
            f"than wait (lift a shared hold with: toolwire rates lift {model})",
            status_code=429,
            retry_after=asked,
        )
        self.model = model
        self.host = host
        self.asked = asked
        self.ceiling = ceiling

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update(model=self.model, host=self.host, asked=self.asked, ceiling=self.ceiling)
        return d

    def __reduce__(self) -> tuple[Any, ...]:
        fields = {"model": self.model, "host": self.host, "asked": self.asked}
        return (_rate_hold_too_long, (fields, self.ceiling))


def _rate_hold_too_long(fields: dict[str, Any], ceiling: float) -> RateHoldTooLong:
    return RateHoldTooLong(**fields, ceiling=ceiling)


class Overloaded(ProviderError):
    """The provider is overloaded (503, Anthropic 529...)."""

    type_name = "overloaded"


class StreamErrorEvent(ProviderError):
    """The provider reported an error inside a stream it had started with 200."""

    type_name = "stream_error"


class ToolError(ToolwireError):
    """A tool could not be run as asked."""

    type_name = "tool_error"


class UnknownTool(ToolError):
    """The model called a tool that is not registered."""

    type_name = "unknown_tool"


class ToolArgumentsInvalid(ToolError):
    """The arguments did not validate against the tool's schema."""

    type_name = "invalid_arguments"


class ToolTimeout(ToolError):
    """The tool did not finish within its timeout.

    Attributes:
        stopped: whether its work was stopped at the deadline. A synchronous
            function in a thread cannot be stopped, only abandoned: such a
            timeout is not worth a retry (``transient`` is false), since the
            first attempt may still be running.
    """

    type_name = "timeout"

    def __init__(self, message: str, *, stopped: bool = True) -> None:
        super().__init__(message)
        self.stopped = stopped
        self.transient = stopped


class ToolFailed(ToolError):
    """The tool raised, and retries and fallbacks did not save it."""

    type_name = "failed"


class MCPToolError(ToolFailed):
    """An MCP tool call failed: the server flagged its result ``isError``, or
    answered ``tools/call`` with a protocol error.

    Raised by the functions of MCP tools (and by :meth:`MCPConnection.call`
    for protocol errors); the toolbox turns it into a ``failed``
    :class:`~toolwire.ToolResult` with this message.

    Attributes:
        tool: the tool's name on the server.
        code: the JSON-RPC error code of a protocol error; ``None`` when the
            server answered with an ``isError`` result.
    """

    type_name = "mcp_tool_error"

    def __init__(self, message: str, *, tool: str, code: int | None = None) -> None:
        super().__init__(message)
        self.tool = tool
        self.code = code

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d["tool"] = self.tool
        if self.code is not None:
            d["code"] = self.code
        return d


class RayTaskFailed(ToolFailed):
    """Ray could not run a tool call, or its result could not come back.

    ``transient`` is true when the worker or node was lost (the toolbox may
    retry the call, per the tool's policy) and false when trying again
    cannot help (the function or its result cannot be pickled, toolwire is
    not importable on the workers, the task was cancelled elsewhere).
    """

    type_name = "ray_task_failed"

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient

    def __reduce__(self) -> Any:
        return (_rebuild_task_failed, (self.message, self.transient))


def _rebuild_task_failed(message: str, transient: bool) -> RayTaskFailed:
    return RayTaskFailed(message, transient=transient)


class RemoteToolError(ToolFailed):
    """Stands for an exception a tool raised in a Ray worker that could not be
    pickled back: its message, transience and ``retry_after`` are kept, and
    the instance's class is a subclass named like the original (``Picky``),
    so the model reads the same error text as for a local call."""

    type_name = "remote_tool_error"

    def __init__(
        self,
        message: str,
        *,
        remote_type: str = "",
        transient: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.remote_type = remote_type
        self.transient = transient
        self.retry_after = retry_after

    def __reduce__(self) -> Any:
        return (
            _rebuild_remote_error,
            (self.message, self.remote_type, self.transient, self.retry_after),
        )

    @classmethod
    def standing_for(
        cls, message: str, remote_type: str, transient: bool, retry_after: float | None
    ) -> RemoteToolError:
        """The stand-in for an exception of type ``remote_type`` (a subclass of
        this class of that name, made once per name)."""
        return _rebuild_remote_error(message, remote_type, transient, retry_after)


_STAND_INS: dict[str, type[RemoteToolError]] = {}


def _rebuild_remote_error(
    message: str, remote_type: str, transient: bool, retry_after: float | None
) -> RemoteToolError:
    cls = RemoteToolError
    if remote_type.isidentifier():
        cls = _STAND_INS.get(remote_type) or _STAND_INS.setdefault(
            remote_type,
            type(remote_type, (RemoteToolError,), {"__module__": __name__}),
        )
    return cls(message, remote_type=remote_type, transient=transient, retry_after=retry_after)


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


class ContentError(UsageError):
    """A content part (:class:`~toolwire.Image`, :class:`~toolwire.Document`,
    :class:`~toolwire.Audio`) that toolwire will not make or send: a media
    type it does not know, a file it cannot read, or one of the two below.
    Raised before any request is sent."""

    type_name = "content_error"


class ContentNotSupported(ContentError):
    """A dialect cannot carry this part in this place: a kind of part its
    API does not take (audio in an Anthropic request), or a URL where the
    provider does not fetch URLs (give the bytes instead).

    Attributes:
        dialect: the dialect's name (``anthropic-messages``...).
        place: ``prompt`` or ``tool_result``.
        part: the part's kind and media type (``audio audio/wav``), or
            ``image from a URL``.
    """

    type_name = "content_not_supported"

    def __init__(self, message: str, *, dialect: str, place: str, part: str) -> None:
        super().__init__(message)
        self.dialect = dialect
        self.place = place
        self.part = part

    def to_dict(self) -> dict[str, Any]:
        """``{"type", "message", "dialect", "place", "part"}``."""
        return {
            **super().to_dict(),
            "dialect": self.dialect,
            "place": self.place,
            "part": self.part,
        }


class ContentLimitExceeded(ContentError):
    """A request would pass one of its provider's documented content limits
    (an image's size, the number of documents in a request...). toolwire
    never downscales or drops a part to fit.

    Attributes:
        dialect: the dialect's name.
        limit: the limit's name (``image_bytes``, ``images_per_request``...).
        maximum: the limit's value.
        value: what the request has.
    """

    type_name = "content_limit_exceeded"

    def __init__(self, dialect: str, limit: str, *, maximum: int, value: int) -> None:
        super().__init__(
            f"{dialect}: the {limit} limit is {maximum:,}, this request has {value:,}"
            " (toolwire does not shrink or drop parts; send fewer or smaller ones)"
        )
        self.dialect = dialect
        self.limit = limit
        self.maximum = maximum
        self.value = value

    def to_dict(self) -> dict[str, Any]:
        """``{"type", "message", "dialect", "limit", "maximum", "value"}``."""
        return {
            **super().to_dict(),
            "dialect": self.dialect,
            "limit": self.limit,
            "maximum": self.maximum,
            "value": self.value,
        }


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


class JournalError(ToolwireError):
    """The journal cannot be read or written (unknown run, unreadable file,
    a record that is not what toolwire wrote)."""

    type_name = "journal_error"


class RunLeased(JournalError):
    """Another live process (or another task of this one) is running or
    resuming this run: one process at a time may. A process that died (even
    of ``kill -9``) holds nothing, so its successor can resume."""

    type_name = "run_leased"


class LeaseLost(RunLeased):
    """This worker's lease of a run expired and another worker took the run
    over (its fencing token is newer): the write was refused and nothing of it
    was stored. The run goes on with its new owner."""

    type_name = "lease_lost"


Refusal = Literal[
    "not_suspended", "unknown_call", "wrong_kind", "digest", "expired", "signature", "conflict"
]
"""Why :class:`ApprovalRefused` refused an answer to a suspended run."""


class ApprovalRefused(JournalError):
    """An approval, denial or result that cannot be applied: ``reason`` says
    why (see :data:`Refusal`). Nothing was recorded."""

    type_name = "approval_refused"

    def __init__(self, message: str, *, reason: Refusal, call_id: str | None = None) -> None:
        super().__init__(message)
        self.reason: Refusal = reason
        self.call_id = call_id
        """The call the refused decision answers, when one is named."""


class ApprovalFailed(ToolwireError):
    """The approval callback raised: an agent's run ends with this error (the
    call did not run, and no denial is recorded, so a resume asks again)."""

    type_name = "approval_failed"


class ArgumentsParseError(ToolwireError, ValueError):
    """A tool call's arguments are not JSON, and no unambiguous repair applies.

    The message says what is wrong and where (line, column and character
    offset in the raw text); it never contains the text itself.

    Attributes:
        position: the character offset of the problem in the raw text.
        line: its 1-based line.
        column: its 1-based column.
        over_limit: the text may well be JSON, but it goes past a limit of
            :mod:`toolwire.stream.limits` (nesting depth, digits of an integer).
    """

    type_name = "arguments_parse_error"

    def __init__(
        self, message: str, *, position: int, line: int, column: int, over_limit: bool = False
    ) -> None:
        super().__init__(message)
        self.position = position
        self.line = line
        self.column = column
        self.over_limit = over_limit

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update(position=self.position, line=self.line, column=self.column)
        return d


class PartialJSONError(ToolwireError, ValueError):
    """The JSON text is invalid, or it ended before its value was complete."""

    type_name = "invalid_json"


class BadRequest(ToolwireError):
    """The request body does not follow the dialect; answered with HTTP 400."""

    type_name = "bad_request"


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


class ModelRetry(Exception):
    """Raised by a tool to send its message back to the model as the result.

    The model sees the message and may call the tool again with better
    arguments. It is not an error of the program, so it is not a ToolwireError.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class JSONLimitError(ValueError):
    """Valid JSON that goes past one of toolwire's limits; the message says which."""


class DuplicateKeyError(ValueError):
    """A JSON object writes one key twice: which value was meant?"""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key[:40]!r} is written more than once in one object")
        self.key = key


class NotStrictCompatible(ValueError):
    """The schema uses something OpenAI strict mode cannot express."""


class BadForm(ValueError):
    """An action's body that is not a small URL-encoded form with the fields it needs."""


class BadQuery(ValueError):
    """A query parameter the list does not take."""
