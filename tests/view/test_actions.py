"""The viewer's actions over HTTP: approving and denying a call a suspended
run waits on. Each is journaled with the viewer's principal, under the
run's lease, and only when it names the arguments the page showed; nothing
else writes, and nothing is taken from another origin or without the token."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from tests.journal._support import make_agent
from toolwire import Toolbox
from toolwire.journal import SQLiteJournal, close_journals
from toolwire.testing import EmulationServer

from ._support import (
    HOSTILE,
    WAITING_TURNS,
    Viewer,
    _scenario,
    launch,
    lookup,
    make_waiting,
    serving,
)

RUN = "waiting-1"
APPROVE = f"/runs/{RUN}/calls/{{call}}/approve"
OTHER_DIGEST = "sha256:" + "0" * 64
"""A digest well formed, of no call's arguments."""
DENY = f"/runs/{RUN}/calls/{{call}}/deny"


@pytest.fixture()
def journal(tmp_path: Path) -> Path:
    path = tmp_path / "journal.sqlite3"
    make_waiting(path)
    return path


@pytest.fixture()
def viewer(journal: Path) -> Iterator[Viewer]:
    with serving(journal, principal="alice (toolwire view)") as served:
        yield served


def _events(path: Path, kind: str) -> list[dict[str, object]]:
    reader = SQLiteJournal(path, read_only=True)
    try:
        log = reader.load_run(RUN)
    finally:
        reader.close()
    return [{"call_id": e.call_id, **e.data} for e in log.events if e.kind == kind]


def _form(page: str, verb: str) -> tuple[str, str]:
    """The action path (under the viewer's root, which is left out) and
    digest of the first ``verb`` form on ``page``."""
    found = re.search(
        rf'<form method=post action="/[^/"]+(/runs/[^"]+/{verb})" class=inline>'
        r'<input type=hidden name=digest value="([^"]+)">',
        page,
    )
    assert found is not None, page
    return found[1], found[2]


def test_the_page_lists_the_waiting_calls_with_arguments_digest_and_forms(viewer: Viewer) -> None:
    with viewer.client() as client:
        page = client.get(f"/runs/{RUN}").text
    section = page.split("<section id=pending")[1].split("</section>")[0]
    assert 'data-waiting="1"' in section and "waiting for 1 of 2 call(s)" in section
    launch_call = section.split('data-awaiting="approval"')[1]
    assert "<b>launch</b>" in launch_call and "sha256:" in launch_call
    assert "moon &lt;script&gt;alert(" in launch_call
    assert "<button class=approve>Approve</button>" in launch_call
    # The outside result, answered earlier by another principal, with no forms.
    lookup_call = section.split('data-awaiting="result"')[1].split("data-awaiting")[0]
    assert "answered</span> by ops" in lookup_call and "<form" not in lookup_call
    assert "&lt;/textarea&gt;&lt;script&gt;y()" in lookup_call
    assert re.findall(r"<script[^>]*>", page) == [f'<script src="{viewer.root}/static/view.js">']
    path, digest = _form(page, "approve")
    assert path.startswith(f"/runs/{RUN}/calls/") and digest.startswith("sha256:")


def test_approving_journals_the_decision_with_the_principal(viewer: Viewer, journal: Path) -> None:
    with viewer.client() as client:
        path, digest = _form(client.get(f"/runs/{RUN}").text, "approve")
        done = client.post(path, data={"digest": digest}, headers={"origin": viewer.origin})
        again = client.post(path, data={"digest": digest}, headers={"origin": viewer.origin})
        page = client.get(f"/runs/{RUN}").text
    assert (
        done.status_code == 303 and done.headers["location"] == f"{viewer.root}/runs/{RUN}#pending"
    )
    assert again.status_code == 303  # the same answer twice is recorded once
    [approval] = _events(journal, "approval")
    assert approval["decision"] == "allow" and approval["principal"] == "alice (toolwire view)"
    assert approval["digest"] == digest and approval["name"] == "launch"
    assert "all 2 call(s) answered" in page and "<button class=approve>" not in page
    assert "approved</span> by alice (toolwire view)" in page


def test_denying_journals_the_reason_told_to_the_model(viewer: Viewer, journal: Path) -> None:
    with viewer.client() as client:
        path, digest = _form(client.get(f"/runs/{RUN}").text, "deny")
        reason = f"not today {HOSTILE}"
        done = client.post(
            path, data={"digest": digest, "reason": reason}, headers={"origin": viewer.origin}
        )
        page = client.get(f"/runs/{RUN}").text
        changed = client.post(
            path.replace("/deny", "/approve"),
            data={"digest": digest},
            headers={"origin": viewer.origin},
        )
    assert done.status_code == 303
    [denial] = _events(journal, "approval")
    assert denial["decision"] == "deny" and denial["reason"] == reason
    assert "denied</span> by alice" in page and "not today &lt;script&gt;" in page
    assert HOSTILE not in page
    assert changed.status_code == 409 and "differently" in changed.text  # no second answer


def test_an_approval_naming_other_arguments_is_refused(viewer: Viewer, journal: Path) -> None:
    with viewer.client() as client:
        path, _ = _form(client.get(f"/runs/{RUN}").text, "approve")
        other = "sha256:" + "0" * 64
        stale = client.post(path, data={"digest": other}, headers={"origin": viewer.origin})
        missing = client.post(path, data={}, headers={"origin": viewer.origin})
    assert stale.status_code == 409 and "refused" in stale.text
    assert missing.status_code == 400
    assert _events(journal, "approval") == []


@pytest.mark.parametrize(
    ("target", "status", "words"),
    [
        ("/runs/nope/calls/x/approve", 404, "nope"),
        (APPROVE.format(call="no-such-call"), 409, "waits for no call"),
    ],
)
def test_unknown_runs_and_calls_are_refused(
    viewer: Viewer, journal: Path, target: str, status: int, words: str
) -> None:
    with viewer.client() as client:
        response = client.post(
            target, data={"digest": OTHER_DIGEST}, headers={"origin": viewer.origin}
        )
    assert response.status_code == status and words in response.text
    assert _events(journal, "approval") == []


def test_an_outside_result_cannot_be_approved(viewer: Viewer, journal: Path) -> None:
    with viewer.client() as client:
        page = client.get(f"/runs/{RUN}").text
    call = re.search(r'data-call="([^"]+)" data-awaiting="result"', page)
    assert call is not None
    digest = page.split(f'data-call="{call[1]}"')[1].split("class=digest>")[1].split("<")[0]
    with viewer.client() as client:
        response = client.post(
            APPROVE.format(call=call[1]), data={"digest": digest}, headers={"origin": viewer.origin}
        )
    # Already answered (a result): an approval is the wrong kind of answer.
    assert response.status_code == 409 and "not &#x27;allow&#x27;" in response.text


def test_a_run_that_is_not_suspended_takes_no_decision(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    make_waiting(path, "other-1")
    with serving(path) as viewer, viewer.client() as client:
        response = client.post(
            "/runs/other-1/calls/x/approve",
            data={"digest": OTHER_DIGEST},
            headers={"origin": viewer.origin},
        )
        reader = SQLiteJournal(path, read_only=True)
        try:
            log = reader.load_run("other-1")
        finally:
            reader.close()
        assert log.run.status == "suspended"
        writer = SQLiteJournal(path)
        try:
            writer.record_end("other-1", status="failed", summary="{}", data="{}")
        finally:
            writer.close()
        failed = client.post(
            "/runs/other-1/calls/x/approve",
            data={"digest": OTHER_DIGEST},
            headers={"origin": viewer.origin},
        )
    assert response.status_code == 409
    assert failed.status_code == 409 and "not suspended" in failed.text


def test_a_run_being_resumed_takes_no_decision(viewer: Viewer, journal: Path) -> None:
    holder = SQLiteJournal(journal)
    try:
        with viewer.client() as client:
            path, digest = _form(client.get(f"/runs/{RUN}").text, "approve")
            with holder.lease(RUN):
                response = client.post(
                    path, data={"digest": digest}, headers={"origin": viewer.origin}
                )
    finally:
        holder.close()
    assert response.status_code == 409 and "resumed right now" in response.text
    assert _events(journal, "approval") == []


@pytest.mark.parametrize(
    ("headers", "authorized", "status"),
    [
        ({"origin": "http://evil.example"}, True, 403),
        ({"sec-fetch-site": "cross-site"}, True, 403),
        ({}, True, 403),
        ({"origin": "null"}, True, 403),
        ({"origin": "null", "sec-fetch-site": "cross-site"}, True, 403),
        ({"origin": "null", "sec-fetch-site": "same-site"}, True, 403),
        ({"origin": "same"}, False, 401),
    ],
)
def test_an_action_needs_the_token_and_the_viewers_own_page(
    viewer: Viewer, journal: Path, headers: dict[str, str], authorized: bool, status: int
) -> None:
    with viewer.client() as client:
        path, digest = _form(client.get(f"/runs/{RUN}").text, "approve")
    if headers.get("origin") == "same":
        headers = {"origin": viewer.origin}
    with viewer.client(authorized=authorized) as client:
        response = client.post(path, data={"digest": digest}, headers=headers)
    assert response.status_code == status
    assert _events(journal, "approval") == []


def test_an_action_is_a_small_form_posted(viewer: Viewer, journal: Path) -> None:
    origin = {"origin": viewer.origin}
    with viewer.client() as client:
        path, digest = _form(client.get(f"/runs/{RUN}").text, "approve")
        read = client.get(path)
        as_json = client.post(path, json={"digest": digest}, headers=origin)
        huge = client.post(path, data={"digest": digest, "x": "y" * 10_000}, headers=origin)
        # What a browser sends with the page's form (its policy is no-referrer).
        same_site = client.post(
            path,
            data={"digest": digest},
            headers={"origin": "null", "sec-fetch-site": "same-origin"},
        )
    assert read.status_code == 405
    assert as_json.status_code == 400 and huge.status_code == 400
    assert same_site.status_code == 303
    assert len(_events(journal, "approval")) == 1


def test_the_run_goes_on_with_the_viewers_approval(viewer: Viewer, journal: Path) -> None:
    with viewer.client() as client:
        path, digest = _form(client.get(f"/runs/{RUN}").text, "approve")
        assert client.post(
            path, data={"digest": digest}, headers={"origin": viewer.origin}
        ).is_redirect

    async def resume() -> str:
        with EmulationServer(_scenario("waiting", WAITING_TURNS)) as server:
            agent = make_agent(server, Toolbox([launch, lookup]), journal=str(journal))
            try:
                result = await agent.resume(RUN)
            finally:
                await agent.aclose()
        return result.outcome

    assert anyio.run(resume) == "answered"
    close_journals()
    outcomes = _events(journal, "tool_outcome")
    assert {o["result"]["name"]: o["result"]["content"] for o in outcomes}["launch"] == "launched"  # type: ignore[index]


def test_a_suspended_run_is_followed_on_and_a_new_suspension_ends_the_stream(
    journal: Path,
) -> None:
    reader = SQLiteJournal(journal, read_only=True)
    try:
        events = reader.load_run(RUN).events
    finally:
        reader.close()
    paused = next(e.seq for e in events if e.kind == "run_suspended")
    make_waiting(journal, "quiet-1", answer=False)
    with serving(journal, deadline=0.5) as viewer, viewer.client() as client:
        # Opened on the suspension: the answer after it comes, and no end.
        after_pause = client.get(f"/runs/{RUN}/events", params={"after": str(paused)})
        # Followed from before it: the suspension ends the stream.
        before_pause = client.get("/runs/quiet-1/events", params={"after": str(paused - 1)})
    kinds = [line for line in after_pause.text.splitlines() if line.startswith("event: ")]
    assert kinds == ["event: record"] and '"seq": ' + str(paused + 1) in after_pause.text
    assert 'data-kind=\\"answer\\"' in after_pause.text
    assert "event: end\ndata: suspended" in before_pause.text


def test_a_run_id_that_needs_quoting_is_approved_through_its_quoted_path(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite3"
    odd = 'odd run?&1 <"x">'
    make_waiting(path, odd, answer=False)
    with serving(path) as viewer, viewer.client() as client:
        page = client.get("/runs/odd%20run%3F%261%20%3C%22x%22%3E").text
        action, digest = _form(page, "approve")
        assert action.startswith("/runs/odd%20run%3F%261%20%3C%22x%22%3E/calls/")
        wrong = client.post(
            action, data={"digest": OTHER_DIGEST}, headers={"origin": viewer.origin}
        )
        done = client.post(action, data={"digest": digest}, headers={"origin": viewer.origin})
    assert wrong.status_code == 409 and '<"x">' not in wrong.text
    assert f'href="{viewer.root}/runs/odd%20run%3F%261%20%3C%22x%22%3E"' in wrong.text
    assert done.status_code == 303
    assert (
        done.headers["location"] == viewer.root + "/runs/odd%20run%3F%261%20%3C%22x%22%3E#pending"
    )
