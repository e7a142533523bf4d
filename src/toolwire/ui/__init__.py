"""Chat front ends for an agent: a run's events in the protocols chat pages read.

- :mod:`toolwire.ui.agui`: AG-UI (``@ag-ui/client``, CopilotKit), with
  interrupts for the calls a run waits on;
- :mod:`toolwire.ui.vercel`: the AI SDK UI message stream (``useChat``,
  ``readUIMessageStream``), with tool-approval parts.

Both keep their threads in the agent's journal, so a reloaded page finds the
calls its run waits on. Each needs the ``ui`` extra
(``pip install 'toolwire[ui]'``); this package imports neither until asked.
"""

from __future__ import annotations

__all__: list[str] = []
