"""OpenTelemetry traces of agent runs (the optional extra ``toolwire[otel]``).

Theory of operation
-------------------
:class:`Tracer` is a :class:`~toolwire.observe.RunObserver`: the agent awaits
its hooks at every step boundary, and each hook starts or ends a span at
that moment, so span times are the times of the steps themselves::

    invoke_agent {agent}            run_started .. run_finished / run_failed
      chat {model}                  model_request .. model_response / model_failed
        execute_tool {tool}         an eager tool, started while its turn streams
      chat {model}                  a retried turn: one span per attempt
      execute_tool {tool}           tool_started .. tool_finished

The hooks of one run are called from several tasks (eager and parallel tools
run concurrently), so nothing here relies on the *current* span of a
context: every span is kept in a table keyed by ``(run_id, turn, attempt)``
(model requests) or ``(run_id, turn, call id)`` (tools), and every child is
started with an explicit parent context built from its parent span object.
The run span alone takes the caller's current context as its parent, so a
run started inside an application span shows up under it.

Steps of a run the tracer did not see start are not recorded. A step whose
outcome never arrives still gets an end: tools that a failed
stream cancelled are ended when that attempt's failure is reported, and
whatever is still open when the run ends is ended with the run, as
``cancelled``.

Names and attributes follow the OpenTelemetry semantic conventions for
generative AI (status: Development) as published with semantic-conventions
v1.41.0: the inference span (``gen-ai-spans.md``), the invoke-agent internal
span (``gen-ai-agent-spans.md``) and the execute-tool span. Arguments,
results and messages are sensitive, and are recorded only with
``capture_content=True`` (the conventions' opt-in attributes, as JSON text
since span attributes cannot hold structured values).

``error.type`` values: a toolwire error's ``type_name`` (``rate_limited``,
``overloaded``, ``provider_error``, ``stream_truncated``, ``connect_error``...),
a failed tool result's category (``invalid_arguments``, ``unknown_tool``,
``timeout``, ``failed``, ``denied``), ``cancelled`` for work cut short by
cancellation or by a failed stream, and the exception's qualified class name
for anything else. Attributes in the ``toolwire.`` namespace add what the
conventions have no name for (turn, attempt, run id, eager, attempts).
"""

from __future__ import annotations

from toolwire.errors import UsageError

try:
    import opentelemetry.trace  # noqa: F401 - the extra must be there before anything else
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise UsageError(
        "toolwire.otel needs OpenTelemetry, an optional extra: pip install 'toolwire[otel]'"
    ) from exc

from toolwire.otel._names import SEMCONV_VERSION, provider_name
from toolwire.otel._tracer import Tracer

__all__ = ["SEMCONV_VERSION", "Tracer", "provider_name"]
