"""The executor: concurrency, timeouts, retries, fallbacks, approval, budgets."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import anyio
import pytest

from toolwire import (
    Approval,
    ApprovalRequest,
    Backoff,
    InvalidToolCall,
    ModelRetry,
    Toolbox,
    ToolCall,
    ToolContext,
    ToolResult,
    UsageError,
    tool,
)
from toolwire.tools import is_transient, scrub

pytestmark = pytest.mark.anyio


def call(name: str, call_id: str | None = None, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id or f"call_{name}", name=name, arguments=arguments)


class FakeSleep:
    """Records backoff delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


async def run(
    box: Toolbox, calls: Sequence[ToolCall | InvalidToolCall], **kw: Any
) -> list[ToolResult]:
    return await box.execute(calls, **kw)


# ---------------------------------------------------------------------------
# concurrency


async def test_the_tools_of_a_batch_run_at_once() -> None:
    # Each tool waits until all three are running: one after another, the
    # first would wait alone and give up.
    together = threading.Barrier(3, timeout=10)

    def meet(name: str) -> str:
        try:
            together.wait()
        except threading.BrokenBarrierError:
            return f"{name} ran alone"
        return name

    @tool
    async def slow_a() -> str:
        """A."""
        return await anyio.to_thread.run_sync(meet, "a")

    @tool
    async def slow_b() -> str:
        """B."""
        return await anyio.to_thread.run_sync(meet, "b")

    @tool
    def slow_sync() -> str:
        """A sync tool, run in a worker thread."""
        return meet("c")

    box = Toolbox([slow_a, slow_b, slow_sync])
    results = await run(box, [call("slow_a"), call("slow_b"), call("slow_sync")])
    assert [r.content for r in results] == ["a", "b", "c"]


async def test_a_sync_tool_does_not_block_the_event_loop() -> None:
    released = threading.Event()

    @tool
    def waits_for_the_loop() -> str:
        """Blocks its thread until an async task, which needs the loop, releases it."""
        return "released" if released.wait(timeout=5) else "the loop was blocked"

    @tool
    async def releases() -> str:
        """Runs on the event loop."""
        released.set()
        return "done"

    results = await run(
        Toolbox([waits_for_the_loop, releases]), [call("waits_for_the_loop"), call("releases")]
    )
    assert [r.content for r in results] == ["released", "done"]


async def test_results_come_back_in_call_order() -> None:
    first_may_finish = anyio.Event()

    @tool
    async def first() -> str:
        """Finishes last."""
        await first_may_finish.wait()
        return "first"

    @tool
    async def second() -> str:
        """Finishes first."""
        first_may_finish.set()
        return "second"

    results = await run(Toolbox([first, second]), [call("first"), call("second")])
    assert [(r.call_id, r.content) for r in results] == [
        ("call_first", "first"),
        ("call_second", "second"),
    ]


async def test_concurrency_limit() -> None:
    active = 0
    peak = 0

    @tool(dedupe=False)
    async def busy(n: int) -> int:
        """Counts how many run at once."""
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await anyio.sleep(0.02)
        active -= 1
        return n

    results = await run(
        Toolbox([busy], max_concurrency=2), [call("busy", f"c{i}", n=i) for i in range(6)]
    )
    assert [r.content for r in results] == ["0", "1", "2", "3", "4", "5"]
    assert peak == 2


async def test_fewer_calls_than_the_limit_all_run_at_once() -> None:
    # Each waits for the other: run one after the other, the first would
    # wait forever.
    arrived: list[str] = []
    both = anyio.Event()

    @tool(dedupe=False)
    async def meet(who: str) -> str:
        """Waits for the other."""
        arrived.append(who)
        if len(arrived) == 2:
            both.set()
        with anyio.fail_after(5):
            await both.wait()
        return who

    results = await run(
        Toolbox([meet], max_concurrency=2), [call("meet", "1", who="a"), call("meet", "2", who="b")]
    )
    assert [r.content for r in results] == ["a", "b"]


async def test_a_sequential_tool_is_a_barrier() -> None:
    log: list[str] = []

    async def step(name: str) -> str:
        log.append(f"start {name}")
        await anyio.sleep(0.01)
        log.append(f"end {name}")
        return name

    @tool(dedupe=False)
    async def work(label: str) -> str:
        """Parallel work."""
        return await step(label)

    @tool(sequential=True)
    async def commit() -> str:
        """Must run alone."""
        return await step("commit")

    results = await run(
        Toolbox([work, commit]),
        [
            call("work", "1", label="a"),
            call("work", "2", label="b"),
            call("commit"),
            call("work", "3", label="c"),
        ],
    )
    assert [r.content for r in results] == ["a", "b", "commit", "c"]
    barrier = log.index("start commit")
    assert set(log[:barrier]) == {"start a", "start b", "end a", "end b"}
    assert log[barrier : barrier + 2] == ["start commit", "end commit"]
    assert log[barrier + 2 :] == ["start c", "end c"]


# ---------------------------------------------------------------------------
# timeouts


async def test_an_async_tool_that_never_returns_is_cancelled() -> None:
    cancelled = threading.Event()

    @tool(timeout=0.05)
    async def hangs() -> str:
        """Never returns."""
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "unreachable"

    @tool
    async def quick() -> str:
        """Returns at once."""
        return "quick"

    results = await run(Toolbox([hangs, quick]), [call("hangs"), call("quick")])
    hung, fine = results
    assert cancelled.is_set()
    assert (hung.ok, hung.error, hung.attempts) == (False, "timeout", 1)
    assert "timed out" in hung.content and "0.05 s" in hung.content
    assert hung.elapsed > 0
    assert fine.ok and fine.content == "quick"


async def test_a_sync_tool_that_overruns_is_timed_out_and_its_late_result_dropped() -> None:
    release = threading.Event()
    finished = threading.Event()

    @tool(timeout=0.05)
    def stuck() -> str:
        """Blocks until the test releases it."""
        release.wait(timeout=10)
        finished.set()
        return "LATE RESULT"

    try:
        [result] = await run(Toolbox([stuck]), [call("stuck")])
        assert not finished.is_set()  # the batch did not wait for the thread
        assert (result.ok, result.error) == (False, "timeout")
        assert "LATE RESULT" not in result.content
    finally:
        release.set()
    assert finished.wait(timeout=5)


async def test_a_read_only_tool_retries_after_a_timeout() -> None:
    sleep = FakeSleep()
    attempts: list[int] = []

    @tool(timeout=0.05, read_only=True)
    async def sometimes_slow(ctx: ToolContext) -> str:
        """Hangs on its first attempt only."""
        attempts.append(ctx.attempt)
        if ctx.attempt == 1:
            await anyio.sleep_forever()
        return "second time lucky"

    [result] = await run(Toolbox([sometimes_slow], sleep=sleep), [call("sometimes_slow")])
    assert result.ok and result.attempts == 2
    assert attempts == [1, 2]
    assert len(sleep.delays) == 1


# ---------------------------------------------------------------------------
# retries and fallbacks


async def test_a_flaky_tool_succeeds_on_its_third_attempt() -> None:
    sleep = FakeSleep()
    seen: list[tuple[int, str]] = []

    @tool(retries=2)
    def flaky(ctx: ToolContext) -> str:
        """Fails twice with a connection error."""
        seen.append((ctx.attempt, ctx.idempotency_key))
        if ctx.attempt < 3:
            raise ConnectionError("connection reset by peer")
        return "ok"

    box = Toolbox(
        [flaky],
        sleep=sleep,
        random=lambda: 0.0,
        backoff=Backoff(initial_delay=0.1, multiplier=3, jitter=0.5),
    )
    [result] = await run(box, [call("flaky")])
    assert (result.ok, result.content, result.attempts) == (True, "ok", 3)
    assert [a for a, _ in seen] == [1, 2, 3]
    assert len({k for _, k in seen}) == 1  # the same key on every attempt
    assert sleep.delays == pytest.approx([0.1, 0.3])


def test_backoff_grows_exponentially_with_bounded_jitter() -> None:
    policy = Backoff(initial_delay=1, multiplier=2, max_delay=5, jitter=0.5, max_retry_after=5)
    assert [policy.delay(n, rand=0.0) for n in (1, 2, 3, 4)] == [1, 2, 4, 5]
    assert [policy.delay(n, rand=0.999999) for n in (1, 2)] == pytest.approx([0.5, 1.0], 1e-5)

    assert policy.delay(1, rand=0.0, retry_after=3.0) == 3.0
    assert policy.delay(1, rand=0.0, retry_after=60.0) == 5  # capped


@dataclass
class HTTPError(Exception):
    status_code: int


@pytest.mark.parametrize(
    ("error", "retried"),
    [
        (ConnectionError("refused"), True),
        (TimeoutError(), True),
        (HTTPError(429), True),
        (HTTPError(503), True),
        (HTTPError(400), False),
        (ValueError("bad"), False),
        (ModelRetry("again"), False),
    ],
)
async def test_only_transient_errors_are_retried(error: Exception, retried: bool) -> None:
    sleep = FakeSleep()
    runs = 0

    @tool(retries=2)
    def fails() -> str:
        """Always raises."""
        nonlocal runs
        runs += 1
        raise error

    [result] = await run(Toolbox([fails], sleep=sleep), [call("fails")])
    assert is_transient(error) is retried
    assert runs == (3 if retried else 1)
    assert result.attempts == runs
    assert not result.ok


async def test_retry_on_overrides_the_classification() -> None:
    runs = 0

    @tool(retries=1, retry_on=KeyError)
    def lookup() -> str:
        """Raises KeyError."""
        nonlocal runs
        runs += 1
        raise KeyError("missing")

    [result] = await run(Toolbox([lookup], sleep=FakeSleep()), [call("lookup")])
    assert runs == 2 and result.error == "failed"


async def test_a_permanently_failing_tool_falls_back() -> None:
    sleep = FakeSleep()

    def cached_rate(currency: str) -> str:
        return f"{currency}: 7.1 (cached)"

    @tool(retries=2, fallback=cached_rate)
    async def live_rate(currency: str) -> str:
        """Always down."""
        raise ConnectionError("upstream down")

    [result] = await run(Toolbox([live_rate], sleep=sleep), [call("live_rate", currency="USD")])
    assert (result.ok, result.fallback_used, result.attempts) == (True, True, 3)
    assert result.content == "USD: 7.1 (cached)"
    assert len(sleep.delays) == 2


async def test_a_failing_fallback_is_reported() -> None:
    async def also_broken(x: int) -> str:
        raise RuntimeError("cache empty")

    @tool(fallback=also_broken)
    def broken(x: int) -> str:
        """Fails."""
        raise ValueError("nope")

    [result] = await run(Toolbox([broken]), [call("broken", x=1)])
    assert (result.ok, result.error, result.fallback_used) == (False, "failed", True)
    assert "ValueError: nope" in result.content
    assert "RuntimeError: cache empty" in result.content


async def test_model_retry_goes_back_to_the_model_and_is_not_retried() -> None:
    runs = 0

    @tool(retries=3)
    def pick(city: str) -> str:
        """Only knows Paris."""
        nonlocal runs
        runs += 1
        raise ModelRetry(f"Unknown city {city!r}; try 'Paris'.")

    [result] = await run(Toolbox([pick]), [call("pick", city="Pariss")])
    assert runs == 1
    assert (result.ok, result.error, result.model_retry) == (False, "invalid_arguments", True)
    assert result.message == "Unknown city 'Pariss'; try 'Paris'."
    assert json.loads(result.content) == {"error": result.error, "message": result.message}


# ---------------------------------------------------------------------------
# what the model did wrong


async def test_invalid_arguments_name_the_field_and_never_call_the_tool() -> None:
    called = False

    @tool
    def forecast(city: str, days: int = 3) -> str:
        """Forecast."""
        nonlocal called
        called = True
        return city

    [result] = await run(Toolbox([forecast]), [call("forecast", days="many", color="red")])
    assert not called
    assert (result.ok, result.error, result.attempts) == (False, "invalid_arguments", 0)
    lines = result.message.splitlines()
    assert lines[0] == "Invalid arguments for tool 'forecast':"
    assert "- city: required argument is missing" in lines
    assert any(
        line.startswith("- days: Input should be a valid integer") and "'many'" in line
        for line in lines
    )
    assert "- color: unexpected argument (this tool accepts: city, days)" in lines
    assert result.arguments == {"days": "many", "color": "red"}


@pytest.mark.parametrize(
    ("raw", "refused"),
    [
        ('{"q": "a", "q": "b"}', "'q'"),
        ('{"q" :"a",\n "q"\t: "b"}', "'q'"),  # whitespace before the colons
        ('{"o": {"k": 1, "k": 2}, "q": "x"}', "'k'"),  # in a nested object
        # Text inside a string that looks like a key's end, with and without
        # a key written twice.
        ('{"q": "say \\" : twice", "q": "b"}', "'q'"),
        ('{"q": "say \\": it\\" :\\"", "o": {}}', None),
        ('{"q": "14:05", "o": {"k": "\\":"}}', None),
    ],
)
async def test_a_key_written_twice_is_refused_as_the_model_wrote_it(
    raw: str, refused: str | None
) -> None:
    ran: list[str] = []

    @tool
    async def search(q: str, o: dict[str, Any] | None = None) -> str:
        """Search."""
        ran.append(q)
        return q

    parsed = json.loads(raw)
    call_ = ToolCall(id="c1", name="search", arguments=parsed, raw_arguments=raw)
    [result] = await run(Toolbox([search]), [call_])
    if refused is None:
        assert (result.ok, ran) == (True, [parsed["q"]])
    else:
        assert (result.ok, result.error, ran) == (False, "invalid_arguments", [])
        assert f"the key {refused} is written more than once" in result.message


async def test_lenient_coercion_when_asked_and_null_for_default() -> None:
    @tool(coerce=True)
    def forecast(city: str, days: int = 3) -> str:
        """Forecast."""
        return f"{city}/{days}"

    results = await run(
        Toolbox([forecast]),
        [
            call("forecast", "1", city="Oslo", days="5"),
            call("forecast", "2", city="Rome", days=None),
            call("forecast", "3", city="Pisa", days=4.0),
        ],
    )
    assert [r.content for r in results] == ["Oslo/5", "Rome/3", "Pisa/4"]
    assert results[1].arguments == {"city": "Rome", "days": 3}


async def test_unknown_tools() -> None:
    @tool
    def get_weather(city: str) -> str:
        """Weather."""
        return city

    [result] = await run(Toolbox([get_weather]), [call("get_wether", city="x")])
    assert (result.ok, result.error, result.attempts) == (False, "unknown_tool", 0)
    assert "no tool named 'get_wether'" in result.content
    assert "Did you mean 'get_weather'?" in result.content
    assert "Available tools: get_weather." in result.content


async def test_arguments_that_were_not_json() -> None:
    @tool
    def echo(text: str) -> str:
        """Echo."""
        raise AssertionError("never called")

    bad = InvalidToolCall(
        id="x1", name="echo", raw_arguments='{"text": "a', error="unterminated string at offset 9"
    )
    [result] = await run(Toolbox([echo]), [bad])
    assert (result.call_id, result.ok, result.error) == ("x1", False, "invalid_arguments")
    assert "not valid JSON (unterminated string at offset 9)" in result.content


async def test_arguments_that_are_not_an_object() -> None:
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    bad = ToolCall(id="x", name="echo", arguments=["hello"])  # type: ignore[arg-type]
    unknown = ToolCall(id="y", name="nope", arguments="hello")  # type: ignore[arg-type]
    first, second = await run(Toolbox([echo]), [bad, unknown])
    assert first.error == "invalid_arguments"
    assert "expected a JSON object (got list)" in first.content
    assert second.error == "unknown_tool" and second.arguments == {}
    assert await Toolbox([echo]).execute([]) == []


async def test_execute_rejects_things_that_are_not_calls() -> None:
    with pytest.raises(UsageError, match="dict"):
        await Toolbox().execute([{"name": "x"}])  # type: ignore[list-item]


# ---------------------------------------------------------------------------
# approval


def _money_box(approve: Any) -> tuple[Toolbox, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    @tool(requires_approval=True)
    def transfer(to: str, amount: int) -> str:
        """Moves money."""
        sent.append({"to": to, "amount": amount})
        return f"sent {amount} to {to}"

    return Toolbox([transfer], approve=approve), sent


async def test_a_denial_is_a_result_not_an_exception() -> None:
    requests: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> Approval:
        requests.append(request)
        return Approval.deny("amount above the daily limit")

    box, sent = _money_box(approve)
    [result] = await run(box, [call("transfer", to="bob", amount=500)], metadata={"user": "u1"})
    assert sent == []
    assert (result.ok, result.error, result.attempts) == (False, "denied", 0)
    assert "amount above the daily limit" in result.content
    [request] = requests
    assert request.tool_name == "transfer"
    assert request.arguments == {"to": "bob", "amount": 500}  # validated first
    assert request.metadata == {"user": "u1"}


async def test_without_an_approver_such_tools_are_denied() -> None:
    box, sent = _money_box(None)
    [result] = await run(box, [call("transfer", to="bob", amount=1)])
    assert result.error == "denied" and sent == []


async def test_approval_allow_and_edit() -> None:
    def approve(request: ApprovalRequest) -> Approval | bool:
        amount = request.arguments["amount"]
        if amount > 100:
            return Approval.edit({"to": "bob", "amount": 5})
        return True if amount == 1 else Approval.allow()

    box, sent = _money_box(approve)
    results = await run(
        box,
        [
            call("transfer", "1", to="ann", amount=1),
            call("transfer", "2", to="ann", amount=2),
            call("transfer", "3", to="bob", amount=500),
        ],
    )
    assert [r.ok for r in results] == [True, True, True]
    assert sorted(s["amount"] for s in sent) == [1, 2, 5]
    assert results[2].arguments == {"to": "bob", "amount": 5}
    assert results[2].content == "sent 5 to bob"


async def test_an_invalid_edit_is_reported_and_not_run() -> None:
    box, sent = _money_box(lambda request: Approval.edit({"to": "bob", "amount": "lots"}))
    [result] = await run(box, [call("transfer", to="bob", amount=1)])
    assert sent == []
    assert result.error == "invalid_arguments"
    assert "approver edited the arguments" in result.content
    assert "- amount:" in result.content


async def test_a_failing_approver_denies(caplog: pytest.LogCaptureFixture) -> None:
    def approve(request: ApprovalRequest) -> Approval:
        raise RuntimeError("approval service down")

    box, sent = _money_box(approve)
    with caplog.at_level(logging.ERROR, logger="toolwire.tools"):
        [result] = await run(box, [call("transfer", to="bob", amount=1)])
    assert result.error == "denied" and sent == []
    assert "approval service down" not in result.content
    assert any(r.exc_info for r in caplog.records)


# ---------------------------------------------------------------------------
# budgets, de-duplication, content


async def test_results_over_budget_are_cut_with_a_note() -> None:
    @tool(max_result_chars=300)
    def big() -> str:
        """Too much text."""
        return "x" * 1000

    @tool
    def small() -> str:
        """Fits."""
        return "y" * 300

    big_result, small_result = await run(
        Toolbox([big, small], max_result_chars=300), [call("big"), call("small")]
    )
    assert big_result.truncated and big_result.ok
    assert len(big_result.content) <= 300
    kept = big_result.content.count("x")
    assert big_result.content.startswith("x" * kept) and kept > 50
    assert f"{1000 - kept} of 1000 characters were cut" in big_result.content
    assert "narrower arguments" in big_result.content
    assert not small_result.truncated and small_result.content == "y" * 300


async def test_identical_calls_run_once() -> None:
    runs: list[str] = []

    @tool
    async def lookup(q: str, limit: int = 10) -> str:
        """Search."""
        runs.append(q)
        return f"results for {q}"

    @tool(dedupe=False)
    async def roll(sides: int) -> str:
        """Each call is meant to run."""
        runs.append(f"roll{sides}")
        return "4"

    results = await run(
        Toolbox([lookup, roll]),
        [
            call("lookup", "a", q="cats"),
            call("lookup", "b", q="dogs"),
            call("lookup", "c", q="cats", limit=10),  # the same once defaults apply
            call("roll", "d", sides=6),
            call("roll", "e", sides=6),
        ],
    )
    assert sorted(runs) == ["cats", "dogs", "roll6", "roll6"]
    dup = results[2]
    assert (dup.call_id, dup.deduplicated_from, dup.content) == ("c", "a", "results for cats")
    assert dup.attempts == 0 and results[0].attempts == 1
    assert results[4].deduplicated_from is None


async def test_return_values_become_json() -> None:
    @dataclass
    class Reading:
        at: datetime
        value: float

    @tool
    def reading() -> Reading:
        """Structured output."""
        return Reading(datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc), 1.5)

    @tool
    def nothing() -> None:
        """Returns None."""

    results = await run(Toolbox([reading, nothing]), [call("reading"), call("nothing")])
    assert results[0].content == '{"at":"2026-01-02T03:04:05Z","value":1.5}'
    assert results[1].content == "null"


async def test_no_traceback_secret_or_path_reaches_the_model(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @tool
    def leaky() -> str:
        """Fails with a message full of secrets."""
        raise RuntimeError(
            "could not read /srv/app/config/settings.py with key sk-live0123456789abcdef "
            "(Authorization: Bearer eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl) from "
            "https://internal.example.com/v1/keys?token=hunter2 password=hunter2"
        )

    with caplog.at_level(logging.DEBUG, logger="toolwire.tools"):
        [result] = await run(Toolbox([leaky]), [call("leaky")])
    assert result.error == "failed"
    content = result.message
    assert json.loads(result.content)["error"] == "failed"
    assert content.startswith("Error: the tool 'leaky' failed (RuntimeError: could not read <path>")
    for secret in (
        "sk-live",
        "eyJ",
        "hunter2",
        "/srv/app",
        "settings.py",
        "/v1/keys",
        "Traceback",
        "test_executor",
    ):
        assert secret not in content, secret
    assert "https://internal.example.com/..." in content
    # The developer gets the traceback, at DEBUG, when they ask for it.
    records = [r for r in caplog.records if r.exc_info]
    assert records and records[0].exc_info is not None
    assert records[0].levelno == logging.DEBUG
    assert isinstance(records[0].exc_info[1], RuntimeError)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("api_key=abc123secret failed", "api_key=<redacted> failed"),
        ("token: 'zzz'", "token: <redacted>"),
        ("hash 0123456789abcdef0123456789abcdef done", "hash <redacted> done"),
        ("C:\\Users\\me\\app.py line 3", "<path> line 3"),
        ("see ./src/pkg/mod.py", "see <path>"),
        ("km/h and 3/4 stay", "km/h and 3/4 stay"),
        ("x" * 300, "x" * 237 + "..."),
    ],
)  # fmt: skip
def test_scrub(text: str, expected: str) -> None:
    assert scrub(text) == expected


# ---------------------------------------------------------------------------
# context and idempotency keys


async def test_context_and_idempotency_keys() -> None:
    seen: dict[str, ToolContext] = {}

    @tool(dedupe=False)
    def record(n: int, ctx: ToolContext) -> int:
        """Keeps its context."""
        seen[ctx.call_id] = ctx
        return n

    box = Toolbox([record])
    calls = [call("record", "c1", n=1), call("record", "c2", n=2)]
    await run(
        box,
        calls,
        run_id="run-7",
        metadata={"tenant": "acme"},
        idempotency_keys={"c2": "journal-key-2"},
    )
    first = dict(seen)
    assert first["c2"].idempotency_key == "journal-key-2"
    assert first["c1"].metadata == {"tenant": "acme"}
    assert (first["c1"].run_id, first["c1"].tool_name, first["c1"].attempt) == (
        "run-7",
        "record",
        1,
    )

    await run(box, calls, run_id="run-7")
    assert seen["c1"].idempotency_key == first["c1"].idempotency_key  # stable on resume
    assert seen["c2"].idempotency_key != "journal-key-2"
    await run(box, calls, run_id="run-8")
    assert seen["c1"].idempotency_key != first["c1"].idempotency_key
    await run(box, calls)
    without_run = seen["c1"].idempotency_key
    await run(box, calls)
    assert seen["c1"].idempotency_key != without_run  # no run id: unique per batch


def test_toolbox_collection_api() -> None:
    @tool
    def a() -> None:
        """A."""

    box = Toolbox([a])
    assert "a" in box and "b" not in box and len(box) == 1
    assert box.get("a") is a and box.get("b") is None
    assert list(box) == [a]
    with pytest.raises(Exception, match="no tool named 'b'") as info:
        box["b"]
    assert type(info.value).__name__ == "UnknownTool"
    result = ToolResult(call_id="1", name="a", ok=True, content="x")
    assert result.to_dict()["deduplicated_from"] is None
