"""The suite's guard against CPython 3.11's shared settrace flag."""

from __future__ import annotations

import pytest

from tests._tracing import settrace_retrying


def test_a_reentrancy_error_is_retried_until_the_tracer_is_installed() -> None:
    installed: list[object] = []
    failures = iter([True, True, False])

    def settrace(func: object) -> None:
        if next(failures):
            raise RuntimeError(
                "Cannot install a trace function while another trace function is being installed"
            )
        installed.append(func)

    settrace_retrying(settrace, print)
    assert installed == [print]


def test_other_errors_and_a_lasting_race_are_raised() -> None:
    def broken(func: object) -> None:
        raise RuntimeError("something else")

    with pytest.raises(RuntimeError, match="something else"):
        settrace_retrying(broken, print)

    def racing(func: object) -> None:
        raise RuntimeError("another trace function is being installed")

    with pytest.raises(RuntimeError, match="another trace function"):
        settrace_retrying(racing, print, attempts=3)
