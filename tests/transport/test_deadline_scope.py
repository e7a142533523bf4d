"""The total deadline's cancel scope: a ``TimeoutError`` when it ends the
wait, nothing of its own when something else does."""

from __future__ import annotations

import time

import anyio
import anyio.lowlevel
import pytest

from toolwire.http._deadline import deadline_scope

pytestmark = pytest.mark.anyio


async def test_a_deadline_that_passes_raises_timeout_error() -> None:
    with pytest.raises(TimeoutError):
        with deadline_scope(time.monotonic() + 0.02):
            await anyio.sleep_forever()


async def test_a_deadline_already_past_raises_at_the_first_wait() -> None:
    reached = False
    with pytest.raises(TimeoutError):
        with deadline_scope(time.monotonic() - 1):
            reached = True
            await anyio.lowlevel.checkpoint()
    assert reached


async def test_work_done_in_time_is_left_alone() -> None:
    with deadline_scope(time.monotonic() + 30):
        await anyio.lowlevel.checkpoint()
        value = "done"
    assert value == "done"


async def test_a_cancellation_from_outside_is_not_a_timeout() -> None:
    with anyio.move_on_after(0.02) as outer:
        with deadline_scope(time.monotonic() + 30):
            await anyio.sleep_forever()
    assert outer.cancelled_caught


async def test_an_error_inside_passes_through() -> None:
    with pytest.raises(ValueError, match="inside"):
        with deadline_scope(time.monotonic() + 30):
            raise ValueError("inside")


async def test_no_deadline_is_no_scope() -> None:
    with anyio.move_on_after(0.02) as outer:
        with deadline_scope(None):
            await anyio.sleep_forever()
    assert outer.cancelled_caught
