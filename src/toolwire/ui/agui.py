"""An agent behind AG-UI, the Agent-User Interaction protocol.

:func:`app` is an ASGI app whose ``POST /`` takes AG-UI's ``RunAgentInput``
and answers with the run's events as server-sent events; :func:`events` is
the same stream of ``ag_ui.core`` events, for an app of your own.

A thread (``threadId``) lives in the agent's journal (see
:mod:`toolwire.ui._threads`): a run that waits on approvals or outside
results ends with ``RUN_FINISHED`` whose outcome is an interrupt per pending
call (its id binds the answer to the call's arguments: their digest). The
next request on the thread answers them in ``resume``: an entry
``{"interruptId", "status": "resolved", "payload": {"approved": true}}``
approves, anything else denies (``payload.reason`` is told to the model),
and a pending call with no entry is denied too; an external tool's call takes
``payload.result``. The answers are journaled with who gave them
(``principal``). A request on a waiting thread with no ``resume`` (a page
reloaded) gets the thread's conversation (``MESSAGES_SNAPSHOT``) and the
interrupt again, rebuilt from the journal.

Needs the ``ag-ui-protocol`` package (``pip install 'toolwire[ui]'``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from ag_ui.core import (
    AssistantMessage as AguiAssistant,
)
from ag_ui.core import (
    BaseEvent,
    FunctionCall,
    MessagesSnapshotEvent,
    ResumeEntry,
    RunAgentInput,
    RunStartedEvent,
)
from ag_ui.core import (
    Message as AguiMessage,
)
from ag_ui.core import (
    SystemMessage as AguiSystem,
)
from ag_ui.core import (
    ToolCall as AguiToolCall,
)
from ag_ui.core import (
    ToolMessage as AguiTool,
)
from ag_ui.core import (
    UserMessage as AguiUser,
)
from ag_ui.encoder import EventEncoder
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from toolwire.agent import Agent
from toolwire.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResultMessage,
    UserMessage,
)
from toolwire.types import ToolCall
from toolwire.ui._agui_events import Translator
from toolwire.ui._threads import Answer, decisions_for, load_thread, require_journal

__all__ = ["app", "events", "from_agui", "to_agui"]

Principal = Callable[[Request], str]
"""Who answers, from the request (a user behind your authentication)."""


def _default_principal(request: Request) -> str:
    client = request.client
    return f"ag-ui {client.host}" if client is not None else "ag-ui"


def app(agent: Agent[Any], *, principal: Principal = _default_principal) -> Starlette:
    """An ASGI app serving ``agent`` over AG-UI: ``POST /`` takes a
    ``RunAgentInput`` (JSON) and streams the run's events (SSE).

    ``principal`` names who answers an interrupt (journaled with the
    answer); by default ``ag-ui`` and the client's address. Give one that
    reads your authentication: the thread id is all a request needs to
    answer a thread's calls.

    Raises:
        UsageError: the agent has no journal.
    """
    require_journal(agent.journal)

    async def run(request: Request) -> Response:
        try:
            run_input = RunAgentInput.model_validate(await request.json())
        except (ValueError, ValidationError) as exc:
            return JSONResponse({"error": f"not an AG-UI RunAgentInput: {exc}"}, status_code=422)
        encoder = EventEncoder(accept=request.headers.get("accept", ""))
        who = principal(request)

        async def body() -> AsyncIterator[str]:
            async for event in events(agent, run_input, principal=who):
                yield encoder.encode(event)

        return StreamingResponse(
            body(),
            media_type=encoder.get_content_type(),
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    return Starlette(routes=[Route("/", run, methods=["POST"])])


async def events(
    agent: Agent[Any], run_input: RunAgentInput, *, principal: str = ""
) -> AsyncIterator[BaseEvent]:
    """The AG-UI events of the run ``run_input`` asks for, over
    :meth:`~toolwire.Agent.stream` (or :meth:`~toolwire.Agent.resume_stream`
    when the input answers the thread's interrupts). A failure ends the
    stream with ``RUN_ERROR``; nothing is raised.
    """
    out = Translator(
        thread_id=run_input.thread_id,
        run_id=run_input.run_id,
        provider=agent.provider.name,
        model=agent.model,
    )
    try:
        journal = require_journal(agent.journal)
        thread = load_thread(journal, run_input.thread_id)
        if thread.suspended and thread.run_id is not None:
            out.journal_run = thread.run_id
            if thread.pending and not run_input.resume:
                # A page reloaded: the conversation and the interrupt again.
                yield RunStartedEvent(
                    thread_id=run_input.thread_id,
                    run_id=run_input.run_id,
                    metadata={"toolwire": {"runId": thread.run_id, "resumed": False}},
                )
                yield MessagesSnapshotEvent(messages=to_agui(thread.messages, thread.run_id))
                yield out.interrupted(thread.pending)
                return
            answers = [_answer(entry) for entry in run_input.resume or ()]
            approvals, results = decisions_for(thread.pending, answers, principal)
            stream = agent.resume_stream(
                thread.run_id, approvals=approvals, results=results, principal=principal
            )
        else:
            prompt = from_agui(run_input.messages)
            stream = agent.stream(prompt, run_id=thread.next_run_id())
        async with _closing(stream) as running:
            async for event in running:
                for translated in out.feed(event):
                    yield translated
    except Exception as exc:  # reported on the wire, as AG-UI says
        for translated in out.failed(exc):
            yield translated


class _closing:
    """``contextlib.aclosing`` for an async generator typed as an iterator."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    async def __aenter__(self) -> Any:
        return self.stream

    async def __aexit__(self, *exc: object) -> None:
        await self.stream.aclose()


def _answer(entry: ResumeEntry) -> Answer:
    payload = entry.payload if isinstance(entry.payload, dict) else {}
    resolved = entry.status == "resolved"
    reason = payload.get("reason")
    return Answer(
        id=entry.interrupt_id,
        approved=resolved and payload.get("approved") is True,
        reason=reason if isinstance(reason, str) and reason else None,
        result=payload.get("result"),
        has_result=resolved and "result" in payload,
    )


def from_agui(messages: Sequence[AguiMessage]) -> list[Message]:
    """AG-UI messages as toolwire's conversation (text parts of a user
    message joined; reasoning and activity messages left out)."""
    out: list[Message] = []
    names: dict[str, str] = {}
    for message in messages:
        if isinstance(message, AguiUser):
            content = message.content
            text = (
                content
                if isinstance(content, str)
                else "".join(getattr(part, "text", "") for part in content)
            )
            out.append(UserMessage(text))
        elif isinstance(message, AguiAssistant):
            calls: list[ToolCall] = []
            for n, call in enumerate(message.tool_calls or ()):
                names[call.id] = call.function.name
                arguments = _arguments(call.function.arguments)
                calls.append(
                    ToolCall(
                        id=call.id,
                        name=call.function.name,
                        arguments=arguments,
                        raw_arguments=call.function.arguments,
                        index=n,
                    )
                )
            out.append(AssistantMessage(text=message.content or "", tool_calls=tuple(calls)))
        elif isinstance(message, AguiTool):
            content = message.content if isinstance(message.content, str) else ""
            out.append(
                ToolResultMessage(
                    call_id=message.tool_call_id,
                    name=names.get(message.tool_call_id, ""),
                    content=content,
                    is_error=message.error is not None,
                )
            )
        elif getattr(message, "role", None) in ("system", "developer"):
            out.append(SystemMessage(str(getattr(message, "content", ""))))
    return out


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def to_agui(messages: Sequence[Message], run_id: str) -> list[AguiMessage]:
    """toolwire's conversation as AG-UI messages (ids from the run's id and
    the position; tool call ids as the model gave them)."""
    out: list[AguiMessage] = []
    for n, message in enumerate(messages):
        mid = f"{run_id}.m{n}"
        if isinstance(message, UserMessage):
            out.append(AguiUser(id=mid, content=message.text))
        elif isinstance(message, SystemMessage):
            out.append(AguiSystem(id=mid, content=message.text))
        elif isinstance(message, AssistantMessage):
            calls = [
                AguiToolCall(
                    id=call.id,
                    function=FunctionCall(
                        name=call.name,
                        arguments=(
                            json.dumps(call.arguments, ensure_ascii=False)
                            if isinstance(call, ToolCall)
                            else call.raw_arguments
                        ),
                    ),
                )
                for call in message.tool_calls
            ]
            out.append(
                AguiAssistant(id=mid, content=message.text or None, tool_calls=calls or None)
            )
        elif isinstance(message, ToolResultMessage):
            out.append(AguiTool(id=mid, tool_call_id=message.call_id, content=message.content))
    return out
