"""The official JavaScript clients drive the demo agent over loopback HTTP:
``@ag-ui/client``'s ``HttpAgent`` over AG-UI, and the ``ai`` package's chat
transport with ``readUIMessageStream`` over the UI message stream. Each
client's account of the run (its events, messages, pending interrupts) is
compared with the run's journal: the calls and their arguments, the
interrupt's digest, the approval and who gave it, the results, the answer."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

from tests.ui._demo import PAID
from tests.ui._serving import serving
from toolwire.journal import JournalReader, plan_resume, recorded_decisions
from toolwire.messages import AssistantMessage, ToolResultMessage

HERE = Path(__file__).resolve().parent
MODULES = os.environ.get(
    "TOOLWIRE_UI_MODULES", str(HERE.parents[1] / ".tiers" / "ui" / "node_modules")
)


def node(script: str, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        ["node", str(HERE / script), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, TOOLWIRE_UI_MODULES=MODULES),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def journal_calls(journal: JournalReader, run_id: str) -> dict[str, tuple[str, Any, str]]:
    """Every call of the run: name, arguments and result, by call id."""
    plan = plan_resume(journal.load_run(run_id))
    messages = [*plan.messages]
    if plan.response is not None:
        messages.append(plan.response.assistant)
    calls: dict[str, tuple[str, Any, str]] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls:
                calls[call.id] = (call.name, getattr(call, "arguments", None), "")
        elif isinstance(message, ToolResultMessage):
            name, arguments, _ = calls[message.call_id]
            calls[message.call_id] = (name, arguments, message.content)
    return calls


def test_the_ag_ui_client_runs_suspends_reloads_approves_and_resumes(tmp_path: Path) -> None:
    thread = uuid.uuid4().hex
    PAID.clear()
    with serving(tmp_path / "journal.sqlite3") as served:
        report = node("agui_client.mjs", f"{served.base}/agui/", thread)
        journal = served.agent.journal
        assert journal is not None
        calls = journal_calls(journal, thread)
        (decision,) = recorded_decisions(journal.load_run(thread))

    first, again, resumed = report["suspended"], report["again"], report["resumed"]
    # What the client saw stream: every call, with the arguments the journal has.
    args: dict[str, str] = {}
    for event in first["events"]:
        if event["type"] == "TOOL_CALL_ARGS":
            args[event["toolCallId"]] = args.get(event["toolCallId"], "") + event["delta"]
    assert {i: json.loads(a) for i, a in args.items()} == {i: c[1] for i, c in calls.items()}
    assert len(calls) == 3 and [c[0] for c in calls.values()].count("get_weather") == 2

    # The interrupt: the pending call and its digest, the same after a reload.
    (interrupt,) = first["pending"]
    assert again["pending"] == first["pending"]
    assert interrupt["metadata"]["toolwire"]["digest"] == decision.digest
    assert interrupt["toolCallId"] == decision.call_id
    assert calls[decision.call_id][0] == "send_payment"
    # The reloaded client's messages are the journal's conversation.
    tool_messages = {
        m["toolCallId"]: m["content"] for m in again["messages"] if m["role"] == "tool"
    }
    assert tool_messages == {i: c[2] for i, c in calls.items() if i != decision.call_id}

    # The approval went back, journaled with who gave it; the call ran once.
    assert decision.decision == "allow" and decision.principal == "ag-ui 127.0.0.1"
    assert PAID == [("ann", 1250)]
    results = [e for e in resumed["events"] if e["type"] == "TOOL_CALL_RESULT"]
    assert [(r["toolCallId"], r["content"]) for r in results] == [
        (decision.call_id, calls[decision.call_id][2])
    ]
    assert resumed["result"] == "Done: sent 1250 to ann" and resumed["pending"] == []
    assert resumed["messages"][-1] == {
        "id": resumed["messages"][-1]["id"],
        "role": "assistant",
        "content": "Done: sent 1250 to ann",
    }


def test_the_ai_sdk_client_runs_asks_reloads_approves_and_resumes(tmp_path: Path) -> None:
    chat = uuid.uuid4().hex
    PAID.clear()
    with serving(tmp_path / "journal.sqlite3") as served:
        report = node("vercel_client.mjs", f"{served.base}/chat/", chat)
        journal = served.agent.journal
        assert journal is not None
        calls = journal_calls(journal, chat)
        (decision,) = recorded_decisions(journal.load_run(chat))

    first, reloaded, resumed = report["first"], report["reloaded"], report["resumed"]
    tools = [p for p in first["message"]["parts"] if p["type"] == "dynamic-tool"]
    # The message the client built: every call with the journal's arguments.
    assert {p["toolCallId"]: p["input"] for p in tools} == {i: c[1] for i, c in calls.items()}
    states = {p["toolCallId"]: p["state"] for p in tools}
    assert states[decision.call_id] == "approval-requested"
    assert [s for i, s in states.items() if i != decision.call_id] == ["output-available"] * 2
    (request,) = [c for c in first["chunks"] if c["type"] == "tool-approval-request"]
    assert request["approvalDescriptor"]["digest"] == decision.digest
    assert first["message"]["metadata"]["outcome"] == "suspended"

    # The reloaded page's messages continue the same message, with the same request.
    assert reloaded[-1]["id"] == first["message"]["id"] == chat
    (waiting,) = [p for p in reloaded[-1]["parts"] if p.get("state") == "approval-requested"]
    assert waiting["approval"]["id"] == request["approvalId"]

    # Approved, journaled with who approved, run once; the same message answers.
    assert decision.decision == "allow" and decision.principal == "ui 127.0.0.1"
    assert PAID == [("ann", 1250)]
    message = resumed["message"]
    assert message["id"] == chat and message["metadata"]["outcome"] == "answered"
    parts = {p["toolCallId"]: p for p in message["parts"] if p["type"] == "dynamic-tool"}
    assert parts[decision.call_id]["state"] == "output-available"
    assert parts[decision.call_id]["output"] == calls[decision.call_id][2] == "sent 1250 to ann"
    texts = [p["text"] for p in message["parts"] if p["type"] == "text"]
    assert texts[-1] == "Done: sent 1250 to ann"
    usage = [p for p in message["parts"] if p["type"] == "data-usage"]
    assert usage and all(p["data"]["usage"]["input_tokens"] > 0 for p in usage)
