"""The suite's own set-up: CPython 3.11's shared settrace flag, and the Ray group."""

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


def test_the_ray_tests_are_one_unit_of_work(request: pytest.FixtureRequest) -> None:
    """Two Ray instances at once only slow each other on a small machine:
    under ``--dist loadgroup`` the scheduler hands every Ray test to one
    worker, as one unit, and every other test on its own."""
    from tests.conftest import pytest_xdist_make_scheduler

    option = request.config.option
    saved = option.dist, option.tx
    option.dist, option.tx = "loadgroup", ["2*popen"]
    try:
        scheduler = pytest_xdist_make_scheduler(request.config, None)
    finally:
        option.dist, option.tx = saved
    scope = scheduler._split_scope
    ray = [
        "tests/ray/test_batch.py::test_batch_on_ray_then_resume[asyncio]",
        "tests/cluster/test_kill_node.py::test_a_batch_survives_the_death_of_a_node",
        "tests/test_examples.py::test_ray_scale_out",
        "tests/docs/test_documents.py::test_every_block_runs[ray.md]",
    ]
    assert {scope(nodeid) for nodeid in ray} == {"ray"}
    other = ["tests/test_sse.py::test_a[1]", "tests/test_sse.py::test_a[2]"]
    assert [scope(nodeid) for nodeid in other] == other


def test_a_cpu_guard_pauses_coverage_and_gives_it_back() -> None:
    import os
    import sys

    from tests._linear import cpu_guard

    before = sys.gettrace()
    patched = os.environ.get("COVERAGE_PROCESS_CONFIG")
    with cpu_guard(5):
        inside = sys.gettrace()
    assert inside is None
    assert (sys.gettrace() is None) == (before is None)
    # The tests' own subprocesses stay unmeasured after it, as before it.
    assert os.environ.get("COVERAGE_PROCESS_CONFIG") == patched


def test_a_cpu_guard_goes_off_and_holds_the_collector_until_its_end() -> None:
    import gc

    import pytest

    from tests._linear import TooSlow, cpu_guard

    assert gc.isenabled()
    with pytest.raises(TooSlow), cpu_guard(0.2):
        assert not gc.isenabled()
        while True:  # CPU, not waiting: the guard counts the process's CPU time
            sum(range(1000))
    assert gc.isenabled()
