"""MCP servers' tools as toolwire tools.

Theory of operation
-------------------
:func:`connect_stdio` (a server started as a subprocess) and
:func:`connect_http` (a streamable HTTP endpoint) are async context managers
around the official SDK's :class:`mcp.Client`. Everything the connection owns
(the subprocess or HTTP client, the SDK's session and its task groups) lives
inside that one ``async with`` block, in the task that entered it, and is
closed when the block ends, even when it ends by cancellation: there is no
background thread and nothing to forget to close.

:meth:`MCPConnection.tools` lists the server's tools (every page) and turns
each into an ordinary :class:`~toolwire.Tool`: the name (sanitized to what
every provider accepts, optionally prefixed), the description and the
``inputSchema`` as the tool's JSON Schema, so the toolbox validates the
model's arguments before anything is sent. The tool's function is a small
async closure that calls ``tools/call`` on the live session, so MCP tools and
Python tools mix freely in one :class:`~toolwire.Toolbox` or
:class:`~toolwire.Agent`.

Results map onto :class:`~toolwire.ToolResult` like this:

* ``structuredContent``, when present, is the result, as exact JSON (servers
  also send it serialized as text; the structured form is the one to trust);
* otherwise the content blocks are joined with newlines: text as is, embedded
  text resources by their text, and images, audio, blobs and resource links
  as a one-line ``[image: image/png, 1024 bytes]``-style description, so the
  model knows they exist (a ``ToolResult`` carries text only);
* ``isError: true`` raises :class:`MCPToolError`, which the toolbox reports as
  a ``failed`` result whose message is the server's (scrubbed) explanation.
  ``failed`` rather than :class:`~toolwire.ModelRetry`: the flag covers any
  failure of the tool (a service down, a missing record), not only bad
  arguments, and the model reads the server's message either way.

Timeouts belong to the toolbox (``Toolbox(default_timeout=...)``, or
``tools(timeout=...)`` per connection): when one expires the call's task is
cancelled, and the SDK answers a cancelled request by sending the server
``notifications/cancelled``, so the server stops the work and the session
stays usable.

OpenAI strict mode is off for MCP tools unless asked for
(``tools(strict=None)``): it would turn each optional property into a required
nullable one, and the server's schema does not accept the ``null`` the model
then sends for "left out".

MCP tool annotations are hints from the server; toolwire maps them as
follows, and each can be overridden per call of :meth:`MCPConnection.tools`:
``readOnlyHint`` -> ``read_only`` (retried on transient errors, and may start
early in an eager agent); ``idempotentHint`` -> ``idempotent``;
``destructiveHint: true`` on a tool that is not read-only ->
``requires_approval``. A tool without annotations is neither read-only nor
gated (the spec's "destructive by default" would gate every tool of most
servers; pass ``requires_approval=True`` to gate all tools of a server you do
not trust).

The SDK is an optional dependency (``pip install 'toolwire[mcp]'``). This
module imports it only when a connection is opened, so ``import toolwire``
never loads it, and a missing SDK is reported as a :class:`~toolwire.UsageError`
that says what to install.
"""

from __future__ import annotations

from toolwire.errors import MCPToolError
from toolwire.mcp._connect import MCPProtocol, connect_http, connect_stdio
from toolwire.mcp._connection import MCPConnection
from toolwire.mcp._results import result_content, result_parts, tool_name
from toolwire.mcp._serve import mcp_server

__all__ = [
    "MCPConnection",
    "MCPProtocol",
    "MCPToolError",
    "connect_http",
    "connect_stdio",
    "mcp_server",
    "result_content",
    "result_parts",
    "tool_name",
]
