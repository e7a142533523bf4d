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
          ContentFetchFailed(.url, .reason)
                                    a part toolwire was asked to fetch could
                                    not be fetched within its bounds
      UsageLimitExceeded(.limit, .maximum, .value)
                                    a run crossed one of its usage limits
      OutputInvalid(.raw, .errors, .attempts)
                                    a typed run's answers did not validate,
                                    its ``output_retries`` used up
      JournalError                  the journal cannot be read or written
        BlobTooLarge(.size, .maximum, .media_type, .sha256)
                                    a content part past the journal's blob cap
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

from toolwire.errors._base import ToolwireError
from toolwire.errors._content import (
    ContentError,
    ContentFetchFailed,
    ContentLimitExceeded,
    ContentNotSupported,
)
from toolwire.errors._journal import (
    ApprovalRefused,
    BlobTooLarge,
    JournalError,
    LeaseLost,
    Refusal,
    RunLeased,
)
from toolwire.errors._network import (
    ConnectError,
    Overloaded,
    ProviderError,
    RateHoldTooLong,
    RateLimited,
    ReadError,
    StreamErrorEvent,
    TransportError,
    TransportTimeout,
)
from toolwire.errors._protocol import (
    ContinuationMismatch,
    LocalProtocolError,
    ProtocolError,
    RemoteProtocolError,
    StreamTruncated,
    TokenCountInvalid,
    UnfinishedCall,
)
from toolwire.errors._tools import (
    ApprovalFailed,
    MCPToolError,
    ModelRetry,
    RayTaskFailed,
    RemoteToolError,
    ToolArgumentsInvalid,
    ToolError,
    ToolFailed,
    ToolTimeout,
    UnknownTool,
)
from toolwire.errors._usage import (
    CassetteError,
    CostLimitUnpriced,
    OutputInvalid,
    RegistrationError,
    ScenarioError,
    UnpricedCostWarning,
    UsageError,
    UsageLimitExceeded,
)
from toolwire.errors._values import (
    ArgumentsParseError,
    BadForm,
    BadQuery,
    BadRequest,
    DuplicateKeyError,
    JSONLimitError,
    NotStrictCompatible,
    PartialJSONError,
)

__all__ = [
    "ApprovalFailed",
    "ApprovalRefused",
    "ArgumentsParseError",
    "BadForm",
    "BadQuery",
    "BadRequest",
    "BlobTooLarge",
    "CassetteError",
    "ConnectError",
    "ContentError",
    "ContentFetchFailed",
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


for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type):
        # Each class is known by the path callers import it from (reprs,
        # pickles, the API reference), not by the module of its family.
        _value.__module__ = __name__
del _name, _value
