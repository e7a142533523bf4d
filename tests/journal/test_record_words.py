"""The words a journal's views use for a record come from the record, so
``toolwire runs show`` and ``toolwire view`` say the same: how a run ended
(a run stopped by a usage limit is not just "failed"), and who decided on a
call (``by`` in the journals that called it so, ``principal`` now)."""

from __future__ import annotations

from toolwire.cli._runs_render import _describe
from toolwire.journal import JournalEvent, RunFailed
from toolwire.view._events import render_event


def _both(kind: str, data: dict[str, object]) -> tuple[str, str]:
    event = JournalEvent(seq=1, at=0.0, kind=kind, call_id="c1", data=data)
    return _describe(event, {}).plain, render_event(event, 0.0)


def test_a_run_stopped_by_a_usage_limit_is_said_so_in_both_views() -> None:
    limit = {"type": "usage_limit_exceeded", "message": "output tokens 12 > 10"}
    terminal, page = _both("run_failed", {"error": limit})
    assert "run stopped by a usage limit" in terminal
    assert "run stopped by a usage limit" in page
    terminal, page = _both("run_failed", {"error": {"type": "x", "message": "m"}})
    assert "run failed" in terminal and "run failed" in page
    terminal, page = _both("run_failed", {"cancelled": True})
    assert "run cancelled" in terminal and "run cancelled" in page


def test_the_ending_is_the_records_own() -> None:
    assert RunFailed(cancelled=True).ending == "cancelled"
    assert RunFailed(error={"type": "usage_limit_exceeded"}).ending == "stopped by a usage limit"
    assert RunFailed().ending == "failed"


def test_who_decided_is_shown_by_both_views_whatever_the_journal_called_it() -> None:
    for data in (
        {"name": "pay", "decision": "allow", "by": "ana"},
        {"name": "pay", "decision": "allow", "principal": "ana"},
    ):
        terminal, page = _both("approval", data)
        assert "by ana" in terminal, data
        assert "by ana" in page, data
