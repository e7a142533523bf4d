"""Tool calls as Ray tasks give the same ToolResults as local calls: the
toolbox decides, only the place the function body runs changes."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from toolwire import (
    Agent,
    OpenAIChat,
    RayExecutor,
    Toolbox,
    ToolCall,
    ToolResult,
    UsageError,
    tool,
)
from toolwire.examples import get_current_time, get_weather
from toolwire.ray import RayTaskFailed
from toolwire.testing import EmulationServer, Scenario

from . import _tools

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("ray_instance")]


async def no_sleep(seconds: float) -> None:
    return None


def boxes(*tools: Any) -> tuple[Toolbox, Toolbox]:
    """The same tools, run locally and on Ray."""
    local = Toolbox(tools, sleep=no_sleep, default_timeout=30)
    remote = Toolbox(tools, sleep=no_sleep, default_timeout=30, runner=RayExecutor())
    return local, remote


def comparable(result: ToolResult) -> dict[str, Any]:
    """A result without what differs by where it ran: its time and its
    traceback's frames (a Ray worker's traceback names the worker)."""
    data = result.to_dict()
    del data["elapsed"]
    data["traceback"] = bool(data.get("traceback"))
    return data


def pid_exited(pid: int, within: float = 15.0) -> bool:
    """Whether process ``pid`` is gone, polling up to ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


CALLS = [
    ToolCall(id="ok", name="add", arguments={"a": 2, "b": 3}),
    ToolCall(id="async", name="async_add", arguments={"a": 20, "b": 22}),
    ToolCall(id="invalid", name="add", arguments={"a": "two", "b": 1}),
    ToolCall(id="unknown", name="ad", arguments={}),
    ToolCall(id="retry", name="needs_positive", arguments={"n": -4}),
    ToolCall(id="fallback", name="forecast", arguments={"city": "杭州"}),
    ToolCall(id="picky", name="picky", arguments={}),
    ToolCall(id="dup", name="add", arguments={"a": 2, "b": 3}),
]


async def test_same_results_as_local() -> None:
    local, remote = boxes(
        _tools.add,
        _tools.async_add,
        _tools.needs_positive,
        _tools.forecast,
        _tools.picky,
    )
    expected = await local.execute(CALLS, run_id="run-1")
    got = await remote.execute(CALLS, run_id="run-1")
    assert [comparable(r) for r in got] == [comparable(r) for r in expected]
    by_id = {r.call_id: r for r in got}
    assert by_id["ok"].ok and by_id["ok"].content == "5"
    assert by_id["async"].content == '{"sum":42}'
    assert by_id["invalid"].error == "invalid_arguments" and by_id["invalid"].attempts == 0
    assert by_id["unknown"].error == "unknown_tool"
    assert by_id["retry"].model_retry and "n must be positive" in by_id["retry"].content
    fallback = by_id["fallback"]
    assert fallback.ok and fallback.fallback_used and fallback.attempts == 2
    assert fallback.content == "cached forecast for 杭州"
    assert by_id["dup"].deduplicated_from == "ok"
    # An exception that cannot travel back keeps its type name, message and
    # transience (status 503), so it is retried as locally.
    picky = by_id["picky"]
    assert not picky.ok and picky.error == "failed" and picky.attempts == 2
    assert "Picky" in picky.content and "upstream said 503" in picky.content


async def test_the_context_travels_and_the_call_runs_in_a_worker() -> None:
    local, remote = boxes(_tools.where)
    call = ToolCall(id="c1", name="where", arguments={"note": "你好"})
    (here,) = await local.execute([call], run_id="run-7", metadata={"user": "u1"})
    (there,) = await remote.execute([call], run_id="run-7", metadata={"user": "u1"})
    here_data, there_data = json.loads(here.content), json.loads(there.content)
    assert here_data.pop("pid") == os.getpid()
    assert there_data.pop("pid") != os.getpid()
    assert there_data == here_data
    assert there_data["metadata"] == {"user": "u1"} and there_data["note"] == "你好"


async def test_flaky_tool_is_retried_to_success(tmp_path: Path) -> None:
    local, remote = boxes(_tools.flaky)
    results = []
    for box, name in ((local, "local"), (remote, "ray")):
        counter = tmp_path / f"{name}.txt"
        (result,) = await box.execute(
            [ToolCall(id="c1", name="flaky", arguments={"path": str(counter)})]
        )
        results.append(result)
        pids = counter.read_text(encoding="utf-8").split()
        assert len(pids) == 3  # each attempt really ran
        assert (name == "local") == all(int(pid) == os.getpid() for pid in pids)
    local_result, ray_result = results
    assert ray_result.ok and ray_result.content == "worked on attempt 3"
    assert ray_result.attempts == 3
    assert comparable(ray_result)["content"] == comparable(local_result)["content"]


@pytest.mark.parametrize(
    ("anyio_backend", "stall"),
    [("asyncio", _tools.stall_sync), ("trio", _tools.stall)],
    ids=["asyncio-sync-tool", "trio-async-tool"],
)
async def test_timeout_kills_the_worker(tmp_path: Path, stall: Any) -> None:
    box = Toolbox([stall], runner=RayExecutor())
    pid_file = tmp_path / "pid"
    (result,) = await box.execute(
        [ToolCall(id="c1", name=stall.name, arguments={"path": str(pid_file)})]
    )
    assert not result.ok and result.error == "timeout" and result.attempts == 1
    assert "timed out" in result.message and "cancelled" in result.message
    pid = int(pid_file.read_text(encoding="utf-8"))
    assert pid != os.getpid()
    # force-cancel killed the worker process that ran the tool.
    assert pid_exited(pid)


async def test_timeout_result_is_the_local_one(tmp_path: Path) -> None:
    # The same function with a shorter deadline: the result does not depend
    # on whether the worker reached the tool before it.
    local, remote = boxes(tool(timeout=0.5, name="stall")(_tools.stall.function))
    expected = await local.execute(
        [ToolCall(id="c1", name="stall", arguments={"path": str(tmp_path / "a")})]
    )
    got = await remote.execute(
        [ToolCall(id="c1", name="stall", arguments={"path": str(tmp_path / "a")})]
    )
    assert [comparable(r) for r in got] == [comparable(r) for r in expected]


async def test_unpicklable_result_is_a_clear_failure() -> None:
    box = Toolbox([_tools.give_lock], runner=RayExecutor())
    (result,) = await box.execute([ToolCall(id="c1", name="give_lock", arguments={})])
    assert not result.ok and result.error == "failed" and result.attempts == 1
    assert "cannot be pickled" in result.message and "lock" in result.message


async def test_unpicklable_function_is_a_clear_failure() -> None:
    lock = threading.Lock()

    @tool
    def guarded(x: int) -> int:
        """Uses a lock from the driver, which cannot travel.

        Args:
            x: a number.
        """
        assert lock is not None
        return x

    box = Toolbox([guarded], runner=RayExecutor())
    (result,) = await box.execute([ToolCall(id="c1", name="guarded", arguments={"x": 1})])
    assert not result.ok and result.error == "failed" and result.attempts == 1
    assert "cannot be sent to a Ray worker" in result.message


async def test_lost_worker_is_transient_and_retried() -> None:
    box = Toolbox([_tools.crash], runner=RayExecutor(), sleep=no_sleep)
    (result,) = await box.execute([ToolCall(id="c1", name="crash", arguments={})])
    assert not result.ok and result.error == "failed"
    assert result.attempts == 2  # read_only with retries=1: the lost worker was retried
    assert "WorkerCrashedError" in result.message


def test_task_options_merge_per_tool() -> None:
    executor = RayExecutor(options={"num_cpus": 0.5}, tool_options={"add": {"num_cpus": 1}})
    assert executor.task_options("add") == {
        "max_retries": 0,
        "name": "toolwire:add",
        "num_cpus": 1,
    }
    assert executor.task_options("other")["num_cpus"] == 0.5


def test_task_failed_pickles_with_its_flag() -> None:
    import ray.cloudpickle as pickle

    error = pickle.loads(pickle.dumps(RayTaskFailed("lost", transient=True)))
    assert isinstance(error, RayTaskFailed) and error.transient and error.message == "lost"


async def test_agent_with_tools_on_ray() -> None:
    scenario = Scenario.from_dict(
        {
            "turns": [
                {
                    "tool_calls": [
                        {"name": "get_weather", "arguments": {"city": "杭州"}},
                        {"name": "get_current_time", "arguments": {"timezone": "Asia/Shanghai"}},
                    ]
                },
                {"text": "杭州{result:get_weather.condition_zh}"},
            ]
        }
    )
    local_box = Toolbox([get_weather, get_current_time])
    (expected,) = await local_box.execute(
        [ToolCall(id="w", name="get_weather", arguments={"city": "杭州"})]
    )
    condition = json.loads(expected.content)["condition_zh"]
    async with EmulationServer(scenario) as server:
        provider = OpenAIChat(api_key="test-key", base_url=server.url_for("openai-chat"))
        box = Toolbox([get_weather, get_current_time], runner=RayExecutor())
        agent = Agent(provider, model="gpt-4.1-mini", tools=box)
        try:
            result = await agent.run("杭州天气怎么样?现在几点?")
        finally:
            await agent.aclose()
    assert result.ok and result.output == f"杭州{condition}"
    assert [r.result.ok for r in result.tool_calls] == [True, True]


def test_import_does_not_load_ray_until_used() -> None:
    import subprocess
    import sys

    code = (
        "import sys, toolwire, toolwire.ray, toolwire.batch;"
        "toolwire.RayExecutor; toolwire.run_batch;"
        "print('ray' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"


def test_missing_ray_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # what a failed import looks like
    with pytest.raises(UsageError, match=r"pip install 'toolwire\[ray\]'"):
        RayExecutor()
