"""The agent: :class:`Agent` (the public face, :mod:`toolwire.agent._agent`),
the pure decisions of a run (:mod:`toolwire.agent.loop`) and the driver that
carries them out (:mod:`toolwire.agent._driver`). A run's value types live in
:mod:`toolwire.run` and the observer protocol in :mod:`toolwire.observe`, so
that the journal and the observers can import them without the agent.

Theory of operation
-------------------
Each *turn* builds one request from the conversation (through the provider,
which owns the wire shape), streams the response through toolwire's decoder,
and collects complete tool calls. Calls are executed by a
:class:`~toolwire.Toolbox` (validation, timeouts, retries, approval); their
results go back as :class:`~toolwire.messages.ToolResultMessage` in call
order, with the ids the model gave, invalid arguments and tool errors
included so the model can correct itself. The loop ends when a turn has no
tool call (the answer), or with a typed ``max_turns`` outcome.

What to do after a turn is decided by pure functions (:mod:`toolwire.agent.loop`),
tested without I/O; :mod:`toolwire.agent._driver` carries the decisions out,
:mod:`toolwire.agent._lifecycle` holds a run's lease and tells its observers
of its start and end, :mod:`toolwire.agent._runs` fixes a run's settings
and carries it from its start to its end, and :mod:`toolwire.agent._agent`
is the public face: configuration, :meth:`Agent.run`, :meth:`Agent.stream`
and :meth:`Agent.resume`. The run's records and events are value types in
:mod:`toolwire.run`.

With ``eager=True``, a ``read_only`` tool starts as soon as its call is
provably complete, while the model is still streaming; if that stream then
fails, the early work is cancelled and discarded. Cancelling a run (task
cancellation, Ctrl-C) cancels every tool task it started: tool batches run
inside task groups owned by the run. A call the provider marks
asynchronous starts as soon as it is complete too, whatever the tool, and a
failed stream does not cancel it: its journaled outcome stands for every
attempt of the turn (:mod:`toolwire.agent._early`). :meth:`Agent.steer`
gives a live run new input, said at its next safe point; a ``steered``
response and its successor are one turn (:mod:`toolwire.agent._steering`).

Every run is recorded in a journal (:mod:`toolwire.journal`) unless
``journal=False``: the journal is the first observer, so each step is on
disk before it happens. :meth:`Agent.resume` reads a run's journal and
continues from its last recorded step: a recorded tool outcome is reused, an
interrupted call runs again only when that is safe (``read_only``, or
``idempotent=True``: it gets the same idempotency key as the first time), and
is otherwise reported to the model as interrupted; a turn whose answer was not
recorded is requested again.
"""

from __future__ import annotations

from toolwire import _compat
from toolwire.agent._agent import *  # noqa: F403
from toolwire.agent._agent import __all__ as __all__


def __getattr__(name: str) -> object:
    """Older names, with a warning (see :mod:`toolwire._compat`)."""
    return _compat.renamed(__name__, name)
