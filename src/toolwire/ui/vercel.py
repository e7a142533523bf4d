"""An agent behind the AI SDK UI message stream (the protocol ``useChat`` and
``readUIMessageStream`` of the ``ai`` package 7 read).

:func:`app` is an ASGI app: ``POST /`` takes the body ``useChat`` sends
(``{"id", "messages", "trigger", "messageId"}``) and answers with the run's
chunks as server-sent events, with the ``x-vercel-ai-ui-message-stream: v1``
header; ``GET /{id}`` gives the chat's messages rebuilt from the journal
(``useChat({messages})`` after a reload), pending approvals included;
``GET /{id}/stream`` answers 204 (no stream to reconnect to: the journal
holds the run). :func:`chunks` is the stream for an app of your own.

The chat (its ``id``) lives in the agent's journal (see
:mod:`toolwire.ui._threads`). A run that waits on approvals ends its message
with a ``tool-approval-request`` per call; the page answers with
``addToolApprovalResponse`` and sends the messages again (for example with
``sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses``):
a tool part whose approval says ``approved: true`` approves its call, and
every other pending call is denied. An external tool's call takes the output
the page gave its part (``addToolOutput``). The answers are journaled with
who gave them (``principal``), and the run resumes in the same message.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

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
from toolwire.run import PendingCall
from toolwire.types import InvalidToolCall, ToolCall
from toolwire.ui._threads import (
    Answer,
    Thread,
    answer_id,
    decisions_for,
    load_thread,
    require_journal,
)
from toolwire.ui._vercel_chunks import Chunk, Translator, approval_request

__all__ = ["HEADERS", "app", "chunks", "from_ui", "to_ui"]

HEADERS = {
    "cache-control": "no-cache",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}
"""The response headers of a UI message stream."""

Principal = Callable[[Request], str]


def _default_principal(request: Request) -> str:
    client = request.client
    return f"ui {client.host}" if client is not None else "ui"


def app(agent: Agent[Any], *, principal: Principal = _default_principal) -> Starlette:
    """An ASGI app serving ``agent`` to ``useChat`` (see the module doc).

    ``principal`` names who answers an approval (journaled with it); by
    default ``ui`` and the client's address. Give one that reads your
    authentication: the chat id is all a request needs to answer its calls.

    Raises:
        UsageError: the agent has no journal.
    """
    journal = require_journal(agent.journal)

    async def post(request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, status_code=422)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return JSONResponse({"error": "a chat request has an id and messages"}, 422)
        who = principal(request)

        async def stream() -> AsyncIterator[str]:
            async for chunk in chunks(agent, body, principal=who):
                yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n"
            yield "data: [DONE]\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream", headers=HEADERS)

    async def messages(request: Request) -> Response:
        thread = load_thread(journal, request.path_params["chat"])
        return JSONResponse(to_ui(thread))

    async def reconnect(request: Request) -> Response:
        return Response(status_code=204)

    return Starlette(
        routes=[
            Route("/", post, methods=["POST"]),
            Route("/{chat}", messages, methods=["GET"]),
            Route("/{chat}/stream", reconnect, methods=["GET"]),
        ]
    )


async def chunks(
    agent: Agent[Any], body: Mapping[str, Any], *, principal: str = ""
) -> AsyncIterator[Chunk]:
    """The UI message stream chunks of the run the chat request ``body``
    asks for (a new run, or the chat's waiting run resumed with the answers
    its messages carry). A failure ends the stream with an ``error`` chunk;
    nothing is raised."""
    out = Translator()
    try:
        journal = require_journal(agent.journal)
        thread = load_thread(journal, str(body.get("id") or ""))
        messages = [m for m in body.get("messages", ()) if isinstance(m, dict)]
        if thread.suspended and thread.run_id is not None:
            out.run_id = thread.run_id
            answers = _answers(messages, thread.pending)
            if thread.pending and not answers:
                # Asked again (a page reloaded before it answered).
                yield {"type": "start", "messageId": thread.run_id}
                for pending in thread.pending:
                    if pending.awaiting == "approval":
                        yield approval_request(pending)
                yield {"type": "finish", "finishReason": "tool-calls"}
                return
            approvals, results = decisions_for(thread.pending, answers, principal)
            stream = agent.resume_stream(
                thread.run_id, approvals=approvals, results=results, principal=principal
            )
            started = False
            async for event in _closing(stream):
                for chunk in out.feed(event):
                    yield chunk
                if not started:
                    started = True
                    for decision in approvals:
                        yield {
                            "type": "tool-approval-response",
                            "approvalId": _approval_of(thread.pending, decision.call_id),
                            "approved": decision.decision == "allow",
                            **({"reason": decision.reason} if decision.reason else {}),
                        }
            return
        stream = agent.stream(from_ui(messages), run_id=thread.next_run_id())
        async for event in _closing(stream):
            for chunk in out.feed(event):
                yield chunk
    except Exception as exc:  # reported on the stream, as the protocol says
        for chunk in out.failed(exc):
            yield chunk


async def _closing(stream: Any) -> AsyncIterator[Any]:
    try:
        async for event in stream:
            yield event
    finally:
        await stream.aclose()


def _approval_of(pending: Sequence[PendingCall], call_id: str) -> str:
    for call in pending:
        if call.call_id == call_id:
            return answer_id(call)
    return call_id


def _tool_parts(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [
        part
        for part in message.get("parts", ())
        if isinstance(part, dict)
        and isinstance(part.get("type"), str)
        and (part["type"] == "dynamic-tool" or part["type"].startswith("tool-"))
    ]


def _answers(messages: Sequence[Mapping[str, Any]], pending: Sequence[PendingCall]) -> list[Answer]:
    """The answers the last assistant message gives the pending calls."""
    last = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
    if last is None:
        return []
    waiting = {p.call_id: p for p in pending}
    out: list[Answer] = []
    for part in _tool_parts(last):
        call = waiting.get(str(part.get("toolCallId")))
        if call is None:
            continue
        approval = part.get("approval")
        if call.awaiting == "approval" and isinstance(approval, dict):
            if isinstance(approval.get("approved"), bool):
                reason = approval.get("reason")
                out.append(
                    Answer(
                        id=str(approval.get("id") or call.call_id),
                        approved=approval["approved"] is True,
                        reason=reason if isinstance(reason, str) and reason else None,
                    )
                )
        elif call.awaiting == "result" and part.get("state") == "output-available":
            out.append(Answer(id=call.call_id, result=part.get("output"), has_result=True))
    return out


def from_ui(messages: Sequence[Mapping[str, Any]]) -> list[Message]:
    """``useChat``'s messages as toolwire's conversation: an assistant
    message's steps become a model answer each, followed by its tools' results."""
    out: list[Message] = []
    for message in messages:
        role = message.get("role")
        parts = [p for p in message.get("parts", ()) if isinstance(p, dict)]
        if role == "user":
            out.append(
                UserMessage(
                    "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")
                )
            )
        elif role == "system":
            out.append(
                SystemMessage(
                    "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")
                )
            )
        elif role == "assistant":
            out += _assistant_steps(parts)
    return out


def _assistant_steps(parts: Sequence[Mapping[str, Any]]) -> list[Message]:
    out: list[Message] = []
    text: list[str] = []
    calls: list[ToolCall] = []
    results: list[ToolResultMessage] = []

    def flush() -> None:
        if text or calls:
            out.append(AssistantMessage(text="".join(text), tool_calls=tuple(calls)))
            out.extend(results)
        text.clear()
        calls.clear()
        results.clear()

    for part in parts:
        kind = part.get("type")
        if kind == "step-start":
            flush()
        elif kind == "text":
            text.append(str(part.get("text", "")))
        elif isinstance(kind, str) and (kind == "dynamic-tool" or kind.startswith("tool-")):
            name = str(part.get("toolName") or kind.removeprefix("tool-"))
            call_id = str(part.get("toolCallId", ""))
            given = part.get("input")
            arguments: dict[str, Any] = given if isinstance(given, dict) else {}
            calls.append(ToolCall(id=call_id, name=name, arguments=arguments, index=len(calls)))
            if part.get("state") in ("output-available", "output-error", "output-denied"):
                content = part.get("output", part.get("errorText", "denied"))
                results.append(
                    ToolResultMessage(
                        call_id=call_id,
                        name=name,
                        content=content if isinstance(content, str) else json.dumps(content),
                        is_error=part.get("state") != "output-available",
                    )
                )
    flush()
    return out


def to_ui(thread: Thread) -> list[dict[str, Any]]:
    """The chat's messages as ``useChat`` holds them, from the journal: the
    last assistant message's id is the run's (the stream continues it), and a
    call the run waits on to approve is a part asking for its approval."""
    run_id = thread.run_id or thread.thread_id
    waiting = {p.call_id: p for p in thread.pending}
    out: list[dict[str, Any]] = []
    assistant: dict[str, Any] | None = None
    parts_by_call: dict[str, dict[str, Any]] = {}
    for n, message in enumerate(thread.messages):
        if isinstance(message, (UserMessage, SystemMessage)):
            assistant = None
            role = "user" if isinstance(message, UserMessage) else "system"
            parts = [{"type": "text", "text": message.text}]
            out.append({"id": f"{run_id}.m{n}", "role": role, "parts": parts})
        elif isinstance(message, AssistantMessage):
            if assistant is None:
                assistant = {"id": f"{run_id}.m{n}", "role": "assistant", "parts": []}
                out.append(assistant)
            assistant["parts"].append({"type": "step-start"})
            if message.reasoning:
                assistant["parts"].append({"type": "reasoning", "text": message.reasoning})
            if message.text:
                assistant["parts"].append({"type": "text", "text": message.text})
            for call in message.tool_calls:
                part = _call_part(call, waiting.get(call.id))
                parts_by_call[call.id] = part
                assistant["parts"].append(part)
        elif isinstance(message, ToolResultMessage):
            answered = parts_by_call.get(message.call_id)
            if answered is not None:
                answered["state"] = "output-error" if message.is_error else "output-available"
                answered["output" if not message.is_error else "errorText"] = message.content
    if assistant is not None and out and out[-1] is assistant:
        assistant["id"] = run_id
    return out


def _call_part(call: ToolCall | InvalidToolCall, pending: PendingCall | None) -> dict[str, Any]:
    base: dict[str, Any] = {"type": "dynamic-tool", "toolName": call.name, "toolCallId": call.id}
    if isinstance(call, InvalidToolCall):
        return base | {
            "state": "output-error",
            "input": call.raw_arguments,
            "errorText": call.error,
        }
    base |= {"state": "input-available", "input": call.arguments}
    if pending is not None and pending.awaiting == "approval":
        base |= {"state": "approval-requested", "approval": {"id": answer_id(pending)}}
    return base
